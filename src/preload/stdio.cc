// stdio and directory streams over stored files.
//
// glibc's stdio calls the kernel from inside libc, where no interposer can
// reach it. So a FILE over a stored file is a cookie stream
// (fopencookie(3)) whose read, write, seek and close are our calls; fread,
// fwrite, fgets, getline, fprintf, fseek, ftell, fflush and fclose (and
// their _unlocked forms) then work on it unchanged. The standard streams
// follow fds 0-2: when one of them is a stored file (a shell redirection
// before exec, or dup2 at run time), stdin/stdout/stderr point to a cookie
// stream over it.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "preload/shim.h"

using sluice::DirEntry;
using sluice::FileInfo;
using sluice::FileSystem;
using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace sluice {
namespace preload {
namespace {

constexpr size_t kStreamBuffer = 256 << 10;

struct Cookie {
  int fd;
  bool owns_fd;
  char* buf;
};

ssize_t CookieRead(void* c, char* buf, size_t n) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  return read(k->fd, buf, n);
}

ssize_t CookieWrite(void* c, const char* buf, size_t n) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  size_t done = 0;
  while (done < n) {
    ssize_t r = write(k->fd, buf + done, n - done);
    if (r <= 0) return done > 0 ? static_cast<ssize_t>(done) : -1;
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

int CookieSeek(void* c, off64_t* off, int whence) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  off_t r = lseek(k->fd, *off, whence);
  if (r < 0) return -1;
  *off = r;
  return 0;
}

int CookieClose(void* c) {
  Cookie* k = static_cast<Cookie*>(c);
  int r = 0;
  if (k->fd >= 0 && k->owns_fd) r = close(k->fd);
  free(k->buf);
  delete k;
  return r;
}

// "r", "w+", "ab", "re", "wx" -> open flags; -1 for a bad mode.
int ModeFlags(const char* mode) {
  int flags;
  switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return -1;
  }
  for (const char* m = mode + 1; *m && *m != ','; m++) {
    if (*m == '+') flags = (flags & ~O_ACCMODE) | O_RDWR;
    if (*m == 'e') flags |= O_CLOEXEC;
    if (*m == 'x') flags |= O_EXCL;
  }
  return flags;
}

// The standard stream variable of fd 0, 1 or 2.
FILE** StdVar(int fd) { return fd == 0 ? &stdin : fd == 1 ? &stdout : &stderr; }
FILE* g_orig_std[3];  // the real stream while a cookie stands in
FILE* g_mine_std[3];
Cookie* g_mine_cookie[3];
std::mutex g_std_mu;

// ---- directory streams -----------------------------------------------------
struct Entry {
  std::string name;
  unsigned char type;
  ino_t ino;
};
struct SDir {
  int fd;
  std::vector<Entry> entries;
  size_t pos = 0;
  struct dirent ent;
  struct dirent64 ent64;
};
constexpr int kMaxDirs = 256;
std::atomic<SDir*> g_dirs[kMaxDirs];
std::atomic<int> g_ndirs{0};

SDir* AsOurs(DIR* d) {
  if (!d || t_inside || g_ndirs.load(std::memory_order_acquire) == 0) {
    return nullptr;
  }
  SDir* s = reinterpret_cast<SDir*>(d);
  for (auto& slot : g_dirs) {
    if (slot.load(std::memory_order_acquire) == s) return s;
  }
  return nullptr;
}

// The listing of a stored directory, with "." and ".." (g_mu held).
Status ListLocked(const std::string& path, std::vector<Entry>* out) {
  FileInfo self;
  Status s = StatLocked(path, &self);
  if (!s.ok()) return s;
  out->push_back({".", DT_DIR, self.ino});
  out->push_back({"..", DT_DIR, path == "/" ? self.ino : 0});
  FileSystem* fs;
  s = View(false, &fs);
  if (s.IsNotFound() && path == "/") return Status::OK();  // nothing stored
  if (!s.ok()) return s;
  Inside inside;
  std::vector<DirEntry> entries;
  s = fs->ReadDir(path, &entries);
  if (!s.ok()) return s;
  const std::string base = path == "/" ? "" : path;
  for (const DirEntry& e : entries) {
    FileInfo fi;
    if (!fs->Stat(base + "/" + e.name, &fi).ok()) continue;
    out->push_back({e.name, static_cast<unsigned char>(e.is_dir ? DT_DIR : DT_REG),
                    static_cast<ino_t>(fi.ino)});
  }
  if (path != "/") {
    FileInfo parent;
    std::string up = path.substr(0, path.rfind('/'));
    if (fs->Stat(up.empty() ? "/" : up, &parent).ok()) {
      (*out)[1].ino = parent.ino;
    }
  }
  return Status::OK();
}

}  // namespace

namespace {
FILE* MakeCookie(int fd, const char* mode, bool owns_fd, Cookie** out) {
  char m[3] = {mode[0], 0, 0};
  if (strchr(mode, '+')) m[1] = '+';
  Cookie* k = new Cookie{fd, owns_fd, nullptr};
  cookie_io_functions_t io = {CookieRead, CookieWrite, CookieSeek, CookieClose};
  FILE* f = fopencookie(k, m, io);
  if (!f) {
    delete k;
    return nullptr;
  }
  f->_fileno = fd;  // fileno() works as on any stream
  k->buf = static_cast<char*>(malloc(kStreamBuffer));
  if (k->buf) setvbuf(f, k->buf, _IOFBF, kStreamBuffer);
  if (out) *out = k;
  return f;
}
}  // namespace


void SyncStdStream(int fd) {
  if (fd < 0 || fd > 2 || t_inside) return;
  const bool ours = Lookup(fd) != nullptr;
  std::lock_guard<std::mutex> lock(g_std_mu);
  FILE** var = StdVar(fd);
  if (ours && !g_mine_std[fd]) {
    Cookie* k;
    FILE* f = MakeCookie(fd, fd == 0 ? "r" : "w", true, &k);
    if (!f) return;
    if (fd == 2) setvbuf(f, nullptr, _IONBF, 0);
    g_mine_cookie[fd] = k;
    g_orig_std[fd] = *var;
    g_mine_std[fd] = f;
    *var = f;
  } else if (!ours && g_mine_std[fd]) {
    FILE* f = g_mine_std[fd];
    if (*var == f) *var = g_orig_std[fd];
    g_mine_std[fd] = nullptr;
    // Its fd now names something else (it was flushed before the change):
    // the stream is freed without closing that fd.
    g_mine_cookie[fd]->fd = -1;
    g_mine_cookie[fd] = nullptr;
    fclose(f);
  }
}

void FlushStdStream(int fd) {
  if (fd < 0 || fd > 2 || t_inside) return;
  fflush(*StdVar(fd));
}

DIR* OpenDirStream(int fd) {
  std::vector<Entry> entries;
  {
    Session session;
    Desc* d = g_fds[fd].load();
    if (!d) return FailErrno(EBADF), nullptr;
    if (!d->is_dir) return FailErrno(ENOTDIR), nullptr;
    Status s = ListLocked(d->path, &entries);
    if (!s.ok()) return Fail(s), nullptr;
  }
  SDir* sd = new SDir;
  sd->fd = fd;
  sd->entries = std::move(entries);
  for (auto& slot : g_dirs) {
    SDir* expected = nullptr;
    if (slot.compare_exchange_strong(expected, sd)) {
      g_ndirs.fetch_add(1);
      return reinterpret_cast<DIR*>(sd);
    }
  }
  delete sd;
  errno = EMFILE;
  return nullptr;
}


}  // namespace preload
}  // namespace sluice

// ---- stdio -----------------------------------------------------------------
EXPORT FILE* fopen(const char* path, const char* mode) {
  SLUICE_REAL(fopen);
  std::string p;
  if (!Resolve(path, &p)) return real_fopen(path, mode);
  int flags = ModeFlags(mode);
  if (flags < 0) return FailErrno(EINVAL), nullptr;
  int fd;
  {
    Session session;
    fd = OpenLocked(p, flags, 0666);
  }
  if (fd < 0) return nullptr;
  FILE* f = MakeCookie(fd, mode, true, nullptr);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}
EXPORT FILE* fopen64(const char* path, const char* mode) {
  return fopen(path, mode);
}
EXPORT FILE* fdopen(int fd, const char* mode) {
  SLUICE_REAL(fdopen);
  if (t_inside || !Lookup(fd)) return real_fdopen(fd, mode);
  if (ModeFlags(mode) < 0) return FailErrno(EINVAL), nullptr;
  return MakeCookie(fd, mode, true, nullptr);
}
EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  SLUICE_REAL(freopen);
  std::string p;
  if (!path) {
    // A mode change of a stream over a stored file: nothing to reopen.
    if (!t_inside && stream && Lookup(fileno(stream))) {
      return ModeFlags(mode) < 0 ? (FailErrno(EINVAL), nullptr) : stream;
    }
    return real_freopen(path, mode, stream);
  }
  if (!Resolve(path, &p)) return real_freopen(path, mode, stream);
  int target = -1;
  for (int i = 0; i <= 2; i++) {
    if (stream == *StdVar(i)) target = i;
  }
  if (target < 0) {
    // Another stream: closed, and a new one opened in its place.
    fclose(stream);
    return fopen(path, mode);
  }
  fflush(stream);
  int flags = ModeFlags(mode);
  if (flags < 0) return FailErrno(EINVAL), nullptr;
  int fd;
  {
    Session session;
    fd = OpenLocked(p, flags & ~O_CLOEXEC, 0666);
  }
  if (fd < 0) return nullptr;
  int r = dup2(fd, target);  // swaps the standard stream to a cookie
  int e = errno;
  close(fd);
  if (r < 0) return FailErrno(e), nullptr;
  return *StdVar(target);
}
EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return freopen(path, mode, stream);
}

// ---- directories -----------------------------------------------------------
EXPORT DIR* opendir(const char* path) {
  SLUICE_REAL(opendir);
  std::string p;
  if (!Resolve(path, &p)) return real_opendir(path);
  int fd;
  {
    Session session;
    fd = OpenLocked(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  }
  if (fd < 0) return nullptr;
  DIR* d = OpenDirStream(fd);
  if (!d) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return d;
}
EXPORT DIR* fdopendir(int fd) {
  SLUICE_REAL(fdopendir);
  if (t_inside || !Lookup(fd)) return real_fdopendir(fd);
  return OpenDirStream(fd);
}
EXPORT struct dirent* readdir(DIR* dir) {
  SLUICE_REAL(readdir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_readdir(dir);
  if (sd->pos >= sd->entries.size()) return nullptr;  // end: errno unchanged
  const Entry& e = sd->entries[sd->pos++];
  memset(&sd->ent, 0, sizeof sd->ent);
  sd->ent.d_ino = e.ino;
  sd->ent.d_off = static_cast<off_t>(sd->pos);
  sd->ent.d_reclen = sizeof sd->ent;
  sd->ent.d_type = e.type;
  snprintf(sd->ent.d_name, sizeof sd->ent.d_name, "%s", e.name.c_str());
  return &sd->ent;
}
EXPORT struct dirent64* readdir64(DIR* dir) {
  SLUICE_REAL(readdir64);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_readdir64(dir);
  struct dirent* e = readdir(dir);
  if (!e) return nullptr;
  memset(&sd->ent64, 0, sizeof sd->ent64);
  sd->ent64.d_ino = e->d_ino;
  sd->ent64.d_off = e->d_off;
  sd->ent64.d_reclen = sizeof sd->ent64;
  sd->ent64.d_type = e->d_type;
  memcpy(sd->ent64.d_name, e->d_name, sizeof sd->ent64.d_name);
  return &sd->ent64;
}
EXPORT int closedir(DIR* dir) {
  SLUICE_REAL(closedir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_closedir(dir);
  for (auto& slot : g_dirs) {
    SDir* expected = sd;
    if (slot.compare_exchange_strong(expected, nullptr)) {
      g_ndirs.fetch_sub(1);
      break;
    }
  }
  int r = close(sd->fd);
  delete sd;
  return r;
}
EXPORT int dirfd(DIR* dir) {
  SLUICE_REAL(dirfd);
  SDir* sd = AsOurs(dir);
  return sd ? sd->fd : real_dirfd(dir);
}
EXPORT void rewinddir(DIR* dir) {
  SLUICE_REAL(rewinddir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_rewinddir(dir);
  sd->pos = 0;
}
EXPORT long telldir(DIR* dir) {
  SLUICE_REAL(telldir);
  SDir* sd = AsOurs(dir);
  return sd ? static_cast<long>(sd->pos) : real_telldir(dir);
}
EXPORT void seekdir(DIR* dir, long loc) {
  SLUICE_REAL(seekdir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_seekdir(dir, loc);
  sd->pos = loc < 0 ? 0 : static_cast<size_t>(loc);
}
