// The POSIX-like C API over the mounted file system: descriptors, errno.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c/c_api.h"
#include "fs/mount.h"
#include "fs/reader.h"
#include "sluice/fs.h"

using sluice::ErrnoOf;
using sluice::File;
using sluice::FileInfo;
using sluice::FileSystem;
using sluice::Status;

struct sluice_dir_t {
  std::vector<sluice::DirEntry> entries;
  size_t next = 0;
  struct dirent current;
};

namespace {

// One open descriptor.
struct Descriptor {
  std::unique_ptr<File> file;
  std::shared_ptr<FileSystem> fs;  // keeps the mount alive while open
  int flags;
};

std::mutex table_mu;
std::vector<std::shared_ptr<Descriptor>> table;  // GUARDED_BY(table_mu)

// Records `s`; returns 0, or -1 with errno set.
int Fail(const Status& s, int err = 0) {
  sluice::SetLastError(s);
  if (s.ok()) return 0;
  errno = err ? err : ErrnoOf(s);
  return -1;
}

std::shared_ptr<FileSystem> Fs() {
  std::shared_ptr<FileSystem> fs = sluice::fs::Mounted();
  if (!fs) {
    Fail(Status::InvalidArgument("no Sluice file system is mounted "
                                 "(call sluice_mount first)"),
         ENODEV);
  }
  return fs;
}

std::shared_ptr<Descriptor> Get(int fd) {
  std::lock_guard<std::mutex> lock(table_mu);
  if (fd < 0 || static_cast<size_t>(fd) >= table.size() || !table[fd]) {
    return nullptr;
  }
  return table[fd];
}

int BadFd(int fd) {
  return Fail(Status::InvalidArgument("bad Sluice descriptor " +
                                      std::to_string(fd)),
              EBADF);
}

void FillStat(const FileInfo& i, struct stat* st) {
  sluice::FileInfoToStat(i, st);
  st->st_dev = 0x51ce;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_blksize = 4096;
}

// The open flags the file layer takes, the same values as <fcntl.h>'s.
static_assert(O_RDONLY == sluice::kRead && O_WRONLY == sluice::kWrite &&
                  O_RDWR == sluice::kReadWrite && O_CREAT == sluice::kCreate &&
                  O_EXCL == sluice::kExclusive && O_TRUNC == sluice::kTruncate &&
                  O_APPEND == sluice::kAppend && O_DSYNC == sluice::kDataSync &&
                  O_SYNC == sluice::kSync && O_DIRECTORY == sluice::kDirectory,
              "sluice/fs.h's open flags are <fcntl.h>'s");
constexpr int kOpenFlags = O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND |
                           O_SYNC | O_DSYNC | O_DIRECTORY;

// Runs `body`, turning exceptions into EIO/ENOMEM.
template <typename T, typename F>
T Guard(T failed, F body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    Fail(Status::IOError("out of memory"), ENOMEM);
  } catch (const std::exception& e) {
    Fail(Status::IOError(e.what()), EIO);
  }
  return failed;
}

// At exit, with the file system still mounted: the files the program
// left open are closed (and so complete), as the kernel closes a process's
// descriptors.
void CloseAllAtExit() {
  std::lock_guard<std::mutex> lock(table_mu);
  for (auto& d : table) {
    if (!d) continue;
    Status s = d->file->Close();
    if (!s.ok()) {
      fprintf(stderr, "sluice: closing %s at exit: %s\n",
              d->file->path().c_str(), s.ToString().c_str());
    }
  }
  table.clear();
}

}  // namespace

extern "C" {

int sluice_mount(const char* root, int writer, const sluice_options_t* o) {
  return Guard(-1, [&] {
    if (root == nullptr) return Fail(Status::InvalidArgument("NULL root"));
    sluice::FsOptions options;
    if (o) {
      options.store = o->rep;
      options.extent_bytes = o->extent_bytes;
    }
    sluice::fs::SetBeforeExit(CloseAllAtExit);
    return Fail(sluice::fs::Mount(options, root, writer));
  });
}

int sluice_unmount(void) {
  return Guard(-1, [&] {
    {
      std::lock_guard<std::mutex> lock(table_mu);
      for (auto& d : table) {
        if (d) d->file->Close();
      }
      table.clear();
    }
    return Fail(sluice::fs::Unmount());
  });
}

int sluice_open(const char* path, int flags, ...) {
  uint32_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, unsigned int);
    va_end(ap);
  }
  return Guard(-1, [&] {
    std::shared_ptr<FileSystem> fs = Fs();
    if (!fs) return -1;
    if (path == nullptr) return Fail(Status::InvalidArgument("NULL path"), EFAULT);
    // Refused before anything else, as open(2) refuses it (EINVAL).
    Status s = sluice::fs::CheckOpenFlags(path, flags & kOpenFlags);
    if (!s.ok()) return Fail(s);
    const bool writes = (flags & O_ACCMODE) != O_RDONLY ||
                        (flags & (O_CREAT | O_TRUNC | O_APPEND));
    if (writes && fs->read_only()) {
      return Fail(Status::InvalidArgument(std::string(path) +
                                          ": the file system is mounted "
                                          "read-only"),
                  EROFS);
    }
    auto d = std::make_shared<Descriptor>();
    d->fs = fs;
    d->flags = flags;
    s = fs->OpenFile(path, flags & kOpenFlags, mode, &d->file);
    if (!s.ok()) return Fail(s);
    std::lock_guard<std::mutex> lock(table_mu);
    for (size_t i = 0; i < table.size(); ++i) {
      if (!table[i]) {
        table[i] = d;
        return static_cast<int>(i);
      }
    }
    table.push_back(d);
    return static_cast<int>(table.size() - 1);
  });
}

int sluice_close(int fd) {
  return Guard(-1, [&] {
    std::shared_ptr<Descriptor> d;
    {
      std::lock_guard<std::mutex> lock(table_mu);
      if (fd < 0 || static_cast<size_t>(fd) >= table.size() || !table[fd]) {
        return BadFd(fd);
      }
      d.swap(table[fd]);
    }
    return Fail(d->file->Close());
  });
}

static bool CanRead(const Descriptor& d) { return (d.flags & O_ACCMODE) != O_WRONLY; }
static bool CanWrite(const Descriptor& d) { return (d.flags & O_ACCMODE) != O_RDONLY; }

ssize_t sluice_read(int fd, void* buf, size_t n) {
  return Guard<ssize_t>(-1, [&]() -> ssize_t {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d || !CanRead(*d)) return BadFd(fd);
    size_t got = 0;
    Status s = d->file->Read(buf, n, &got);
    return s.ok() ? static_cast<ssize_t>(got) : Fail(s);
  });
}

ssize_t sluice_write(int fd, const void* buf, size_t n) {
  return Guard<ssize_t>(-1, [&]() -> ssize_t {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d || !CanWrite(*d)) return BadFd(fd);
    Status s = d->file->Write(buf, n);
    return s.ok() ? static_cast<ssize_t>(n) : Fail(s);
  });
}

ssize_t sluice_pread(int fd, void* buf, size_t n, off_t offset) {
  return Guard<ssize_t>(-1, [&]() -> ssize_t {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d || !CanRead(*d)) return BadFd(fd);
    if (offset < 0) return Fail(Status::InvalidArgument("negative offset"));
    size_t got = 0;
    Status s = d->file->PRead(buf, n, static_cast<uint64_t>(offset), &got);
    return s.ok() ? static_cast<ssize_t>(got) : Fail(s);
  });
}

ssize_t sluice_pwrite(int fd, const void* buf, size_t n, off_t offset) {
  return Guard<ssize_t>(-1, [&]() -> ssize_t {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d || !CanWrite(*d)) return BadFd(fd);
    if (offset < 0) return Fail(Status::InvalidArgument("negative offset"));
    Status s = d->file->PWrite(buf, n, static_cast<uint64_t>(offset));
    return s.ok() ? static_cast<ssize_t>(n) : Fail(s);
  });
}

off_t sluice_lseek(int fd, off_t offset, int whence) {
  return Guard<off_t>(-1, [&]() -> off_t {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d) return BadFd(fd);
    uint64_t pos = 0;
    Status s = d->file->Seek(offset, whence, &pos);
    return s.ok() ? static_cast<off_t>(pos) : Fail(s);
  });
}

int sluice_fsync(int fd) {
  return Guard(-1, [&] {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d) return BadFd(fd);
    return Fail(d->file->Sync());
  });
}

int sluice_ftruncate(int fd, off_t size) {
  return Guard(-1, [&] {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d || !CanWrite(*d)) return BadFd(fd);
    if (size < 0) {
      return Fail(Status::InvalidArgument(d->file->path() + ": negative size " +
                                          std::to_string(size)));
    }
    return Fail(d->file->Truncate(static_cast<uint64_t>(size)));
  });
}

int sluice_fstat(int fd, struct stat* st) {
  return Guard(-1, [&] {
    std::shared_ptr<Descriptor> d = Get(fd);
    if (!d) return BadFd(fd);
    FileInfo info;
    Status s = d->file->Stat(&info);
    if (s.ok()) FillStat(info, st);
    return Fail(s);
  });
}

// Path calls that change the namespace: the mounted file system's method,
// EROFS on a read-only mount, errno on failure.
#define SLUICE_PATH_CALL(call)                                          \
  return Guard(-1, [&] {                                                \
    std::shared_ptr<FileSystem> fs = Fs();                              \
    if (!fs) return -1;                                                 \
    if (fs->read_only()) {                                              \
      return Fail(Status::InvalidArgument("the file system is mounted " \
                                          "read-only"),                 \
                  EROFS);                                               \
    }                                                                   \
    return Fail(call);                                                  \
  })

int sluice_truncate(const char* path, off_t size) {
  if (size < 0) {  // before anything else, as truncate(2)
    return Fail(Status::InvalidArgument(std::string(path ? path : "(NULL)") +
                                        ": negative size " +
                                        std::to_string(size)));
  }
  SLUICE_PATH_CALL(fs->Truncate(path, static_cast<uint64_t>(size)));
}

int sluice_chmod(const char* path, mode_t mode) {
  SLUICE_PATH_CALL(fs->SetAttr(path, sluice::ModeAttrs(mode)));
}

int sluice_utimens(const char* path, const struct timespec times[2]) {
  SLUICE_PATH_CALL(fs->SetAttr(path, sluice::TimeAttrs(times)));
}

int sluice_stat(const char* path, struct stat* st) {
  return Guard(-1, [&] {
    std::shared_ptr<FileSystem> fs = Fs();
    if (!fs) return -1;
    FileInfo info;
    Status s = fs->Stat(path, &info);
    if (s.ok()) FillStat(info, st);
    return Fail(s);
  });
}

int sluice_unlink(const char* path) { SLUICE_PATH_CALL(fs->Unlink(path)); }
int sluice_rename(const char* from, const char* to) {
  SLUICE_PATH_CALL(fs->Rename(from, to));
}
int sluice_mkdir(const char* path, mode_t mode) {
  SLUICE_PATH_CALL(fs->Mkdir(path, mode));
}
int sluice_rmdir(const char* path) { SLUICE_PATH_CALL(fs->Rmdir(path)); }

sluice_dir_t* sluice_opendir(const char* path) {
  return Guard<sluice_dir_t*>(nullptr, [&]() -> sluice_dir_t* {
    std::shared_ptr<FileSystem> fs = Fs();
    if (!fs) return nullptr;
    auto dir = std::make_unique<sluice_dir_t>();
    dir->entries.push_back({".", true});
    dir->entries.push_back({"..", true});
    Status s = fs->ReadDir(path, &dir->entries);
    if (!s.ok()) {
      Fail(s);
      return nullptr;
    }
    return dir.release();
  });
}

struct dirent* sluice_readdir(sluice_dir_t* dir) {
  if (dir == nullptr) {
    errno = EBADF;
    return nullptr;
  }
  if (dir->next >= dir->entries.size()) return nullptr;
  const sluice::DirEntry& e = dir->entries[dir->next++];
  memset(&dir->current, 0, sizeof dir->current);
  dir->current.d_ino = dir->next;
  dir->current.d_type = e.is_dir ? DT_DIR : DT_REG;
  snprintf(dir->current.d_name, sizeof dir->current.d_name, "%s",
           e.name.c_str());
  return &dir->current;
}

int sluice_closedir(sluice_dir_t* dir) {
  if (dir == nullptr) {
    errno = EBADF;
    return -1;
  }
  delete dir;
  return 0;
}

}  // extern "C"
