// The POSIX-like C API over mounted file systems: handles, descriptors,
// errno.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "c/c_api.h"
#include "c/c_fd_table.h"
#include "fs/mount.h"
#include "fs/reader.h"
#include "sluice/fs.h"

using sluice::ErrnoOf;
using sluice::File;
using sluice::FileInfo;
using sluice::FileSystem;
using sluice::SetLastError;
using sluice::Status;
using sluice::capi::CloseDescriptor;
using sluice::capi::Descriptor;

struct sluice_fs_t {
  std::shared_ptr<FileSystem> rep;
};

struct sluice_dir_t {
  std::vector<sluice::DirEntry> entries;
  size_t next = 0;
  struct dirent current;
};

namespace {

// Records `s`; returns 0, or -1 with errno set.
int Fail(const Status& s, int err = 0) {
  SetLastError(s);
  if (s.ok()) return 0;
  errno = err ? err : ErrnoOf(s);
  return -1;
}

// The file system of handle `fs`, or null with EBADF (as openat's with a
// bad directory descriptor).
FileSystem* Fs(sluice_fs_t* fs) {
  if (fs == nullptr || !fs->rep) {
    Fail(Status::InvalidArgument("NULL Sluice file system handle (call "
                                 "sluice_mount first)"),
         EBADF);
    return nullptr;
  }
  return fs->rep.get();
}

int BadFd(int fd, const char* why) {
  return Fail(Status::InvalidArgument("Sluice descriptor " +
                                      std::to_string(fd) + " " + why),
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

// What a descriptor call needs of the descriptor's access mode.
enum Need { kAny, kReadable, kWritable };

// Runs body(File&) on descriptor fd's file, holding the descriptor so that
// no close runs meanwhile; EBADF when fd is not open (never opened,
// closed, or its file system unmounted) or lacks the access `need`.
template <typename T, typename F>
T OnFd(int fd, Need need, F body) {
  return Guard<T>(-1, [&]() -> T {
    std::shared_ptr<Descriptor> d = sluice::capi::FindDescriptor(fd);
    if (!d) return BadFd(fd, "is not open");
    std::shared_lock<std::shared_mutex> lock(d->mu);
    if (!d->file) return BadFd(fd, "is not open");
    const int mode = d->flags & O_ACCMODE;
    if (need == kReadable && mode == O_WRONLY) {
      return BadFd(fd, "is not open for reading");
    }
    if (need == kWritable && mode == O_RDONLY) {
      return BadFd(fd, "is not open for writing");
    }
    return body(*d->file);
  });
}

// Closes d's file; an error names the file and `when`.
Status CloseNamed(Descriptor* d, const char* when) {
  std::string path;
  {
    std::shared_lock<std::shared_mutex> lock(d->mu);
    if (d->file) path = d->file->path();
  }
  Status s = CloseDescriptor(d);
  if (s.ok()) return s;
  return Status(s.code(), "closing " + path + " " + when + ": " + s.message());
}

// At exit, with file systems still mounted: the files the program left
// open are closed (and so complete), as the kernel closes a process's
// descriptors.
void CloseAllAtExit() {
  for (const auto& d : sluice::capi::RemoveDescriptors(nullptr)) {
    Status s = CloseNamed(d.get(), "at exit");
    if (!s.ok()) fprintf(stderr, "sluice: %s\n", s.ToString().c_str());
  }
}

// The options of a mount from the C options (NULL: the defaults).
sluice::FsOptions FsOptionsOf(const sluice_options_t* o) {
  sluice::FsOptions options;
  if (o) {
    options = o->files;
    options.store = o->rep;
  }
  return options;
}

}  // namespace

extern "C" {

int sluice_mount(const char* root, int writer, const sluice_options_t* o,
                 sluice_fs_t** fs) {
  SLUICE_C_GUARD({
    if (fs == nullptr) {
      return SetLastError(
          Status::InvalidArgument("NULL file system handle pointer"));
    }
    *fs = nullptr;
    if (root == nullptr) {
      return SetLastError(Status::InvalidArgument("NULL root"));
    }
    sluice::fs::SetBeforeExit(CloseAllAtExit);
    auto handle = std::make_unique<sluice_fs_t>();
    Status s =
        sluice::fs::OpenMount(FsOptionsOf(o), root, writer, &handle->rep);
    if (s.ok()) *fs = handle.release();
    return SetLastError(s);
  })
}

int sluice_unmount(sluice_fs_t* fs) {
  if (fs == nullptr) return SetLastError(Status::OK());
  std::unique_ptr<sluice_fs_t> owned(fs);
  SLUICE_C_GUARD({
    // The files still open first, then the file system; the first error
    // is the outcome, but everything is closed and the handle freed.
    Status s;
    for (const auto& d : sluice::capi::RemoveDescriptors(fs->rep.get())) {
      Status c = CloseNamed(d.get(), "at unmount");
      if (s.ok()) s = c;
    }
    Status c = sluice::fs::CloseMount(fs->rep);
    if (s.ok()) s = c;
    return SetLastError(s);
  })
}

int sluice_open(sluice_fs_t* handle, const char* path, int flags, ...) {
  uint32_t mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, unsigned int);
    va_end(ap);
  }
  return Guard(-1, [&] {
    FileSystem* fs = Fs(handle);
    if (!fs) return -1;
    if (path == nullptr) {
      return Fail(Status::InvalidArgument("NULL path"), EFAULT);
    }
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
    d->fs = handle->rep;
    d->flags = flags;
    s = fs->OpenFile(path, flags & kOpenFlags, mode, &d->file);
    if (!s.ok()) return Fail(s);
    return sluice::capi::AddDescriptor(std::move(d));
  });
}

int sluice_close(int fd) {
  return Guard(-1, [&] {
    std::shared_ptr<Descriptor> d = sluice::capi::RemoveDescriptor(fd);
    if (!d) return BadFd(fd, "is not open");
    return Fail(CloseDescriptor(d.get()));
  });
}

ssize_t sluice_read(int fd, void* buf, size_t n) {
  return OnFd<ssize_t>(fd, kReadable, [&](File& f) -> ssize_t {
    size_t got = 0;
    Status s = f.Read(buf, n, &got);
    return s.ok() ? static_cast<ssize_t>(got) : Fail(s);
  });
}

ssize_t sluice_write(int fd, const void* buf, size_t n) {
  return OnFd<ssize_t>(fd, kWritable, [&](File& f) -> ssize_t {
    Status s = f.Write(buf, n);
    return s.ok() ? static_cast<ssize_t>(n) : Fail(s);
  });
}

ssize_t sluice_pread(int fd, void* buf, size_t n, off_t offset) {
  return OnFd<ssize_t>(fd, kReadable, [&](File& f) -> ssize_t {
    if (offset < 0) return Fail(Status::InvalidArgument("negative offset"));
    size_t got = 0;
    Status s = f.PRead(buf, n, static_cast<uint64_t>(offset), &got);
    return s.ok() ? static_cast<ssize_t>(got) : Fail(s);
  });
}

ssize_t sluice_pwrite(int fd, const void* buf, size_t n, off_t offset) {
  return OnFd<ssize_t>(fd, kWritable, [&](File& f) -> ssize_t {
    if (offset < 0) return Fail(Status::InvalidArgument("negative offset"));
    Status s = f.PWrite(buf, n, static_cast<uint64_t>(offset));
    return s.ok() ? static_cast<ssize_t>(n) : Fail(s);
  });
}

off_t sluice_lseek(int fd, off_t offset, int whence) {
  return OnFd<off_t>(fd, kAny, [&](File& f) -> off_t {
    uint64_t pos = 0;
    Status s = f.Seek(offset, whence, &pos);
    return s.ok() ? static_cast<off_t>(pos) : Fail(s);
  });
}

int sluice_fsync(int fd) {
  return OnFd<int>(fd, kAny, [&](File& f) { return Fail(f.Sync()); });
}

int sluice_ftruncate(int fd, off_t size) {
  return OnFd<int>(fd, kWritable, [&](File& f) {
    if (size < 0) {
      return Fail(Status::InvalidArgument(f.path() + ": negative size " +
                                          std::to_string(size)));
    }
    return Fail(f.Truncate(static_cast<uint64_t>(size)));
  });
}

int sluice_fstat(int fd, struct stat* st) {
  return OnFd<int>(fd, kAny, [&](File& f) {
    if (st == nullptr) {
      return Fail(Status::InvalidArgument("NULL stat buffer"), EFAULT);
    }
    FileInfo info;
    Status s = f.Stat(&info);
    if (s.ok()) FillStat(info, st);
    return Fail(s);
  });
}

// Path calls that change the namespace, in a function whose handle is
// `handle`: the file system's method, EROFS on a read-only mount, errno on
// failure.
#define SLUICE_PATH_CALL(path, call)                                    \
  return Guard(-1, [&] {                                                \
    FileSystem* fs = Fs(handle);                                        \
    if (!fs) return -1;                                                 \
    if ((path) == nullptr) {                                            \
      return Fail(Status::InvalidArgument("NULL path"), EFAULT);        \
    }                                                                   \
    if (fs->read_only()) {                                              \
      return Fail(Status::InvalidArgument(std::string(path) +           \
                                          ": the file system is "       \
                                          "mounted read-only"),         \
                  EROFS);                                               \
    }                                                                   \
    return Fail(call);                                                  \
  })

int sluice_truncate(sluice_fs_t* handle, const char* path, off_t size) {
  if (size < 0) {  // before anything else, as truncate(2)
    return Fail(Status::InvalidArgument(std::string(path ? path : "(NULL)") +
                                        ": negative size " +
                                        std::to_string(size)));
  }
  SLUICE_PATH_CALL(path, fs->Truncate(path, static_cast<uint64_t>(size)));
}

int sluice_chmod(sluice_fs_t* handle, const char* path, mode_t mode) {
  SLUICE_PATH_CALL(path, fs->SetAttr(path, sluice::ModeAttrs(mode)));
}

int sluice_utimens(sluice_fs_t* handle, const char* path,
                   const struct timespec times[2]) {
  SLUICE_PATH_CALL(path, fs->SetAttr(path, sluice::TimeAttrs(times)));
}

int sluice_unlink(sluice_fs_t* handle, const char* path) {
  SLUICE_PATH_CALL(path, fs->Unlink(path));
}

int sluice_rename(sluice_fs_t* handle, const char* from, const char* to) {
  SLUICE_PATH_CALL((from && to ? from : nullptr), fs->Rename(from, to));
}

int sluice_mkdir(sluice_fs_t* handle, const char* path, mode_t mode) {
  SLUICE_PATH_CALL(path, fs->Mkdir(path, mode));
}

int sluice_rmdir(sluice_fs_t* handle, const char* path) {
  SLUICE_PATH_CALL(path, fs->Rmdir(path));
}

int sluice_stat(sluice_fs_t* handle, const char* path, struct stat* st) {
  return Guard(-1, [&] {
    FileSystem* fs = Fs(handle);
    if (!fs) return -1;
    if (path == nullptr || st == nullptr) {
      return Fail(Status::InvalidArgument("NULL path or stat buffer"), EFAULT);
    }
    FileInfo info;
    Status s = fs->Stat(path, &info);
    if (s.ok()) FillStat(info, st);
    return Fail(s);
  });
}

sluice_dir_t* sluice_opendir(sluice_fs_t* handle, const char* path) {
  return Guard<sluice_dir_t*>(nullptr, [&]() -> sluice_dir_t* {
    FileSystem* fs = Fs(handle);
    if (!fs) return nullptr;
    if (path == nullptr) {
      Fail(Status::InvalidArgument("NULL path"), EFAULT);
      return nullptr;
    }
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
