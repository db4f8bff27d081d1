// The interposed POSIX calls. Each one passes straight to libc unless its
// descriptor is ours (an atomic load, no lock, no allocation) or its path is
// under the mount (a prefix compare).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <vector>

#include "preload/shim.h"

using sluice::Code;
using sluice::FileInfo;
using sluice::FileSystem;
using sluice::Status;
using sluice::ModeAttrs;
using sluice::SetAttrs;
using sluice::TimeAttrs;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" void __chk_fail(void) __attribute__((noreturn));
extern "C" int __open_2(const char*, int);
extern "C" int __open64_2(const char*, int);
extern "C" int __openat_2(int, const char*, int);
extern "C" int __openat64_2(int, const char*, int);
extern "C" ssize_t __read_chk(int, void*, size_t, size_t);
extern "C" ssize_t __pread_chk(int, void*, size_t, off_t, size_t);
extern "C" ssize_t __pread64_chk(int, void*, size_t, off64_t, size_t);
extern "C" char* __getcwd_chk(char*, size_t, size_t);
extern "C" int __xstat(int, const char*, struct stat*);
extern "C" int __lxstat(int, const char*, struct stat*);
extern "C" int __fxstat(int, int, struct stat*);
extern "C" int __fxstatat(int, int, const char*, struct stat*, int);
extern "C" int __xstat64(int, const char*, struct stat64*);
extern "C" int __lxstat64(int, const char*, struct stat64*);
extern "C" int __fxstat64(int, int, struct stat64*);
extern "C" int __fxstatat64(int, int, const char*, struct stat64*, int);
extern "C" int eaccess(const char*, int);

namespace {

SLUICE_REAL(lseek);

inline Desc* Ours(int fd) { return t_inside ? nullptr : Lookup(fd); }

// The kernel gave out `fd`; a table entry for it is stale (closed behind
// our back, e.g. by a raw system call) and must go.
inline void ClearStale(int fd) {
  if (fd >= 0 && fd < kMaxFds && g_fds[fd].load(std::memory_order_acquire)) {
    Session session;
    DropLocked(fd);
  }
}

// Runs fn(d) on descriptor fd's Desc, attached, under the lock.
template <class F>
auto OnDesc(int fd, F&& fn) -> decltype(fn(nullptr)) {
  Session session;
  Desc* d = g_fds[fd].load();
  if (!d) return FailErrno(EBADF);  // closed meanwhile
  Status s = Attach(d);
  if (!s.ok()) return Fail(s);
  Inside inside;
  return fn(d);
}

bool Readable(const Desc* d) { return (d->flags & O_ACCMODE) != O_WRONLY; }
bool Writable(const Desc* d) { return (d->flags & O_ACCMODE) != O_RDONLY; }

ssize_t DoRead(int fd, void* buf, size_t n, const off_t* at) {
  return OnDesc(fd, [&](Desc* d) -> ssize_t {
    if (d->is_dir) return FailErrno(EISDIR);
    if (!Readable(d)) return FailErrno(EBADF);
    if (at && *at < 0) return FailErrno(EINVAL);
    off_t pos = at ? *at : OffsetOf(d);
    size_t got = 0;
    Status s = d->file->PRead(buf, n, static_cast<uint64_t>(pos), &got);
    if (!s.ok()) return Fail(s);
    if (!at) SetOffset(d, pos + static_cast<off_t>(got));
    return static_cast<ssize_t>(got);
  });
}

ssize_t DoWrite(int fd, const void* buf, size_t n, const off_t* at) {
  return OnDesc(fd, [&](Desc* d) -> ssize_t {
    if (d->is_dir || !Writable(d)) return FailErrno(EBADF);
    if (at && *at < 0) return FailErrno(EINVAL);
    off_t pos;
    if (d->flags & O_APPEND) {  // Linux appends even for pwrite
      // The file layer places it (after every writer's end: fs.h).
      uint64_t end = 0;
      Status s = n > 0 ? d->file->Append(buf, n, &end) : Status::OK();
      if (!s.ok()) return Fail(s);
      if (n == 0) {
        FileInfo fi;
        s = d->file->Stat(&fi);
        if (!s.ok()) return Fail(s);
        end = fi.size;
      }
      pos = static_cast<off_t>(end);
    } else {
      pos = at ? *at : OffsetOf(d);
    }
    if (n > 0 && !(d->flags & O_APPEND)) {
      Status s = d->file->PWrite(buf, n, static_cast<uint64_t>(pos));
      if (!s.ok()) return Fail(s);
    }
    if (!at) SetOffset(d, pos + static_cast<off_t>(n));
    return static_cast<ssize_t>(n);
  });
}

off_t DoSeek(int fd, off_t off, int whence) {
  return OnDesc(fd, [&](Desc* d) -> off_t {
    if (whence == SEEK_SET || whence == SEEK_CUR) {
      off_t to = off;
      if (whence == SEEK_CUR && __builtin_add_overflow(OffsetOf(d), off, &to)) {
        return FailErrno(EOVERFLOW);
      }
      if (to < 0) return FailErrno(EINVAL);
      SetOffset(d, to);
      return to;
    }
    if (d->is_dir) return FailErrno(EINVAL);
    FileInfo fi;
    Status s = d->file->Stat(&fi);
    if (!s.ok()) return Fail(s);
    const off_t size = static_cast<off_t>(fi.size);
    off_t to;
    switch (whence) {
      case SEEK_END:
        to = size + off;
        break;
      case SEEK_DATA:  // no holes are reported: all of the file is data
        if (off < 0) return FailErrno(EINVAL);
        if (off >= size) return FailErrno(ENXIO);
        to = off;
        break;
      case SEEK_HOLE:
        if (off < 0) return FailErrno(EINVAL);
        if (off >= size) return FailErrno(ENXIO);
        to = size;
        break;
      default:
        return FailErrno(EINVAL);
    }
    if (to < 0) return FailErrno(EINVAL);
    SetOffset(d, to);
    return to;
  });
}

template <class IOV>
ssize_t DoVec(int fd, IOV* iov, int cnt, const off_t* at, bool write) {
  if (cnt < 0 || cnt > IOV_MAX) return FailErrno(EINVAL);
  ssize_t total = 0;
  off_t pos = at ? *at : 0;
  for (int i = 0; i < cnt; i++) {
    if (iov[i].iov_len == 0) continue;
    off_t here = pos + total;
    ssize_t r = write ? DoWrite(fd, iov[i].iov_base, iov[i].iov_len,
                                at ? &here : nullptr)
                      : DoRead(fd, iov[i].iov_base, iov[i].iov_len,
                               at ? &here : nullptr);
    if (r < 0) return total > 0 ? total : r;
    total += r;
    if (static_cast<size_t>(r) < iov[i].iov_len) break;
  }
  return total;
}

int DoFstat(int fd, struct stat* st) {
  return OnDesc(fd, [&](Desc* d) -> int {
    FileInfo fi;
    Status s = StatDescLocked(d, &fi);
    if (!s.ok()) return Fail(s);
    FillStat(fi, st);
    return 0;
  });
}

int StatIn(const std::string& p, struct stat* st) {
  Session session;
  FileInfo fi;
  Status s = StatLocked(p, &fi);
  if (!s.ok()) return Fail(s);
  FillStat(fi, st);
  return 0;
}

// fstatat's logic: AT_EMPTY_PATH on our descriptor, or a path.
// Returns 1 when the call is not ours.
int DoFstatat(int dirfd, const char* path, struct stat* st, int flags) {
  if ((flags & AT_EMPTY_PATH) && path && !*path && dirfd >= 0 && Ours(dirfd)) {
    return DoFstat(dirfd, st);
  }
  std::string p;
  if (!Resolve(dirfd, path, &p)) return 1;
  return StatIn(p, st);
}

int DoAccess(int dirfd, const char* path, int mode, int flags) {
  std::string p;
  if (!Resolve(dirfd, path, &p)) return 1;
  Session session;
  FileInfo fi;
  Status s = StatLocked(p, &fi);
  if (!s.ok()) return Fail(s);
  if ((mode & X_OK) && !fi.is_dir && !(fi.mode & 0111)) {
    return FailErrno(EACCES);
  }
  return 0;
}

// A change to the namespace, on the writer view.
template <class F>
int Change(F&& fn) {
  Session session;
  FileSystem* fs;
  Status s = View(true, &fs);
  if (!s.ok()) return Fail(s);
  Inside inside;
  s = fn(fs);
  return s.ok() ? 0 : Fail(s);
}

// The storage engine's own files (its opens on our thread, and any open
// under the data root, as its background threads make) are moved to high
// descriptor numbers. The program owns the low ones: a shell's `exec 5<f`
// opens f (and with it the store, whose files took 3, 4, 5, ...) and then
// dup2s f's descriptor onto 5, which closed an engine file under the
// engine, which then read the placeholder in its place.
int EngineFdBase() {
  static const int base = [] {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    const rlim_t soft = rl.rlim_cur;
    if (soft == RLIM_INFINITY || soft >= 2048) return 1024;
    return soft >= 128 ? static_cast<int>(soft / 2) : -1;
  }();
  return base;
}
bool UnderDataRoot(const char* path) {
  if (!path || path[0] != '/' || !Active()) return false;
  const std::string& root = DataRoot();
  return strncmp(path, root.c_str(), root.size()) == 0 &&
         (path[root.size()] == '/' || path[root.size()] == 0);
}
int MoveHigh(int fd) {
  const int base = EngineFdBase();
  if (fd < 0 || base < 0 || fd >= base) return fd;
  SLUICE_REAL(fcntl);
  SLUICE_REAL(close);
  const int fdflags = real_fcntl(fd, F_GETFD);
  const int high = real_fcntl(fd, (fdflags >= 0 && (fdflags & FD_CLOEXEC))
                                      ? F_DUPFD_CLOEXEC : F_DUPFD, base);
  if (high < 0) return fd;  // none free up there: keep it where it is
  real_close(fd);
  return high;
}

int DoOpen(int dirfd, const char* path, int flags, mode_t mode) {
  SLUICE_REAL(openat);
  std::string p;
  if (!Resolve(dirfd, path, &p)) {
    int r = real_openat(dirfd, path, flags, mode);
    if (r >= 0 && (t_inside || UnderDataRoot(path))) r = MoveHigh(r);
    ClearStale(r);
    return r;
  }
  if ((flags & O_TMPFILE) == O_TMPFILE) return FailErrno(EOPNOTSUPP);
  Session session;
  return OpenLocked(p, flags, mode);
}

mode_t ModeArg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE
             ? static_cast<mode_t>(va_arg(ap, int))
             : 0;
}

void DupNoted(int oldfd, int newfd) {
  if (newfd < 0) return;
  if (Lookup(oldfd) || Lookup(newfd)) {
    Session session;
    DupLocked(oldfd, newfd);
  }
}

}  // namespace

// ---- open ------------------------------------------------------------------
EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = ModeArg(flags, ap);
  va_end(ap);
  return DoOpen(AT_FDCWD, path, flags, mode);
}
// The 64 forms are the same calls on 64-bit Linux.
EXPORT int open64(const char* path, int flags, ...) __attribute__((alias("open")));
EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = ModeArg(flags, ap);
  va_end(ap);
  return DoOpen(dirfd, path, flags, mode);
}
EXPORT int openat64(int dirfd, const char* path, int flags, ...)
    __attribute__((alias("openat")));
EXPORT int creat(const char* path, mode_t mode) {
  return DoOpen(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
EXPORT int creat64(const char* path, mode_t mode) {
  return DoOpen(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
EXPORT int __open_2(const char* path, int flags) {
  return DoOpen(AT_FDCWD, path, flags, 0);
}
EXPORT int __open64_2(const char* path, int flags) {
  return DoOpen(AT_FDCWD, path, flags, 0);
}
EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return DoOpen(dirfd, path, flags, 0);
}
EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return DoOpen(dirfd, path, flags, 0);
}

// ---- data ------------------------------------------------------------------
EXPORT ssize_t read(int fd, void* buf, size_t n) {
  SLUICE_REAL(read);
  if (!Ours(fd)) return real_read(fd, buf, n);
  return DoRead(fd, buf, n, nullptr);
}
EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  if (n > buflen) __chk_fail();
  return read(fd, buf, n);
}
EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  SLUICE_REAL(write);
  if (!Ours(fd)) return real_write(fd, buf, n);
  return DoWrite(fd, buf, n, nullptr);
}
EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  SLUICE_REAL(pread);
  if (!Ours(fd)) return real_pread(fd, buf, n, off);
  return DoRead(fd, buf, n, &off);
}
EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  SLUICE_REAL(pread64);
  if (!Ours(fd)) return real_pread64(fd, buf, n, off);
  off_t o = off;
  return DoRead(fd, buf, n, &o);
}
EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off,
                           size_t buflen) {
  if (n > buflen) __chk_fail();
  return pread(fd, buf, n, off);
}
EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off,
                             size_t buflen) {
  if (n > buflen) __chk_fail();
  return pread64(fd, buf, n, off);
}
EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  SLUICE_REAL(pwrite);
  if (!Ours(fd)) return real_pwrite(fd, buf, n, off);
  return DoWrite(fd, buf, n, &off);
}
EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  SLUICE_REAL(pwrite64);
  if (!Ours(fd)) return real_pwrite64(fd, buf, n, off);
  off_t o = off;
  return DoWrite(fd, buf, n, &o);
}
EXPORT ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  SLUICE_REAL(readv);
  if (!Ours(fd)) return real_readv(fd, iov, cnt);
  return DoVec(fd, iov, cnt, nullptr, false);
}
EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  SLUICE_REAL(writev);
  if (!Ours(fd)) return real_writev(fd, iov, cnt);
  return DoVec(fd, iov, cnt, nullptr, true);
}
EXPORT ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  SLUICE_REAL(preadv);
  if (!Ours(fd)) return real_preadv(fd, iov, cnt, off);
  return DoVec(fd, iov, cnt, &off, false);
}
EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  SLUICE_REAL(pwritev);
  if (!Ours(fd)) return real_pwritev(fd, iov, cnt, off);
  return DoVec(fd, iov, cnt, &off, true);
}
EXPORT off_t lseek(int fd, off_t off, int whence) {
  if (!Ours(fd)) return real_lseek(fd, off, whence);
  return DoSeek(fd, off, whence);
}
EXPORT off64_t lseek64(int fd, off64_t off, int whence) {
  if (!Ours(fd)) return real_lseek(fd, off, whence);
  return DoSeek(fd, off, whence);
}
EXPORT int ftruncate(int fd, off_t len) {
  SLUICE_REAL(ftruncate);
  if (!Ours(fd)) return real_ftruncate(fd, len);
  return OnDesc(fd, [&](Desc* d) -> int {
    if (d->is_dir) return FailErrno(EISDIR);
    if (!Writable(d)) return FailErrno(EINVAL);
    if (len < 0) return FailErrno(EINVAL);
    Status s = d->file->Truncate(static_cast<uint64_t>(len));
    return s.ok() ? 0 : Fail(s);
  });
}
EXPORT int ftruncate64(int fd, off64_t len) { return ftruncate(fd, len); }

int DoSync(int fd) {
  return OnDesc(fd, [&](Desc* d) -> int {
    if (d->is_dir) {  // rename/unlink/create then fsync of the directory
      Status s = SyncNamespaceLocked();
      return s.ok() ? 0 : Fail(s);
    }
    // Read-only too: what the process's other handles wrote is the file's.
    Status s = d->file->Sync();
    return s.ok() ? 0 : Fail(s);
  });
}
EXPORT int fsync(int fd) {
  SLUICE_REAL(fsync);
  if (!Ours(fd)) return real_fsync(fd);
  return DoSync(fd);
}
EXPORT int fdatasync(int fd) {
  SLUICE_REAL(fdatasync);
  if (!Ours(fd)) return real_fdatasync(fd);
  return DoSync(fd);
}

int DoFallocate(int fd, int mode, off_t off, off_t len) {
  return OnDesc(fd, [&](Desc* d) -> int {
    if (d->is_dir) return FailErrno(EISDIR);
    if (!Writable(d)) return FailErrno(EBADF);
    if (mode != 0) return FailErrno(EOPNOTSUPP);
    if (off < 0 || len <= 0) return FailErrno(EINVAL);
    FileInfo fi;
    Status s = d->file->Stat(&fi);
    if (s.ok() && static_cast<uint64_t>(off + len) > fi.size) {
      s = d->file->Truncate(static_cast<uint64_t>(off + len));
    }
    return s.ok() ? 0 : Fail(s);
  });
}
EXPORT int fallocate(int fd, int mode, off_t off, off_t len) {
  SLUICE_REAL(fallocate);
  if (!Ours(fd)) return real_fallocate(fd, mode, off, len);
  return DoFallocate(fd, mode, off, len);
}
EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len) {
  SLUICE_REAL(fallocate64);
  if (!Ours(fd)) return real_fallocate64(fd, mode, off, len);
  return DoFallocate(fd, mode, off, len);
}
EXPORT int posix_fallocate(int fd, off_t off, off_t len) {
  SLUICE_REAL(posix_fallocate);
  if (!Ours(fd)) return real_posix_fallocate(fd, off, len);
  return DoFallocate(fd, 0, off, len) == 0 ? 0 : errno;
}
EXPORT int posix_fallocate64(int fd, off64_t off, off64_t len) {
  SLUICE_REAL(posix_fallocate64);
  if (!Ours(fd)) return real_posix_fallocate64(fd, off, len);
  return DoFallocate(fd, 0, off, len) == 0 ? 0 : errno;
}
EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice) {
  SLUICE_REAL(posix_fadvise);
  if (!Ours(fd)) return real_posix_fadvise(fd, off, len, advice);
  return 0;  // advice only: the store reads ahead by itself
}
EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int advice) {
  SLUICE_REAL(posix_fadvise64);
  if (!Ours(fd)) return real_posix_fadvise64(fd, off, len, advice);
  return 0;
}

// Calls that would move raw placeholder bytes: callers fall back to
// read/write.
EXPORT ssize_t copy_file_range(int in, off64_t* off_in, int out,
                               off64_t* off_out, size_t len,
                               unsigned int flags) {
  SLUICE_REAL(copy_file_range);
  if (Ours(in) || Ours(out)) return FailErrno(EXDEV);
  return real_copy_file_range(in, off_in, out, off_out, len, flags);
}
EXPORT ssize_t sendfile(int out, int in, off_t* off, size_t count) {
  SLUICE_REAL(sendfile);
  if (Ours(in) || Ours(out)) return FailErrno(EINVAL);
  return real_sendfile(out, in, off, count);
}
EXPORT ssize_t sendfile64(int out, int in, off64_t* off, size_t count) {
  SLUICE_REAL(sendfile64);
  if (Ours(in) || Ours(out)) return FailErrno(EINVAL);
  return real_sendfile64(out, in, off, count);
}
// splice moves pages between a pipe and the placeholder itself: refused
// as a file system without splice support refuses it, so that callers
// (pv, Python's os.splice users) fall back to read and write.
EXPORT ssize_t splice(int in, off64_t* off_in, int out, off64_t* off_out,
                      size_t len, unsigned int flags) {
  SLUICE_REAL(splice);
  if (Ours(in) || Ours(out)) return FailErrno(EINVAL);
  return real_splice(in, off_in, out, off_out, len, flags);
}
EXPORT int ioctl(int fd, unsigned long req, ...) {
  SLUICE_REAL(ioctl);
  va_list ap;
  va_start(ap, req);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  // A clone names its source by descriptor: a stored source is refused
  // whatever the destination, not left to the kernel's cross-device check.
  if (req == FICLONE || req == FICLONERANGE) {
    const int src = req == FICLONE
                        ? static_cast<int>(reinterpret_cast<intptr_t>(arg))
                        : (arg != nullptr
                               ? static_cast<int>(
                                     static_cast<file_clone_range*>(arg)->src_fd)
                               : -1);
    if (Ours(fd) || (src >= 0 && Ours(src))) return FailErrno(EXDEV);
    return real_ioctl(fd, req, arg);
  }
  if (!Ours(fd)) return real_ioctl(fd, req, arg);
  return FailErrno(ENOTTY);
}
EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd,
                  off_t off) {
  SLUICE_REAL(mmap);
  if (fd < 0 || (flags & MAP_ANONYMOUS) || !Ours(fd)) {
    return real_mmap(addr, len, prot, flags, fd, off);
  }
  // Stored files have no pages of their own. A mapping that only reads
  // them, or writes privately (copy-on-write), is a copy of the bytes made
  // now, in anonymous memory: git's and NumPy's reads work; what the file
  // becomes later is not seen through it. A shared writable mapping would
  // have to carry its writes to the store: refused (ENODEV).
  const int type = flags & MAP_TYPE;
  if (type != MAP_PRIVATE && (prot & PROT_WRITE)) {
    errno = ENODEV;
    return MAP_FAILED;
  }
  const long page = sysconf(_SC_PAGESIZE);
  if (len == 0 || off < 0 || (page > 0 && off % page != 0)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  const int keep = MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_NORESERVE |
                   MAP_POPULATE | MAP_LOCKED;
  void* p = real_mmap(addr, len, PROT_READ | PROT_WRITE,
                      (flags & keep) | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return p;
  size_t done = 0;
  while (done < len) {  // beyond the end of the file the copy stays zero
    ssize_t r = pread(fd, static_cast<char*>(p) + done, len - done,
                      off + static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      munmap(p, len);
      errno = e;
      return MAP_FAILED;
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  if (prot != (PROT_READ | PROT_WRITE) && mprotect(p, len, prot) != 0) {
    const int e = errno;
    munmap(p, len);
    errno = e;
    return MAP_FAILED;
  }
  return p;
}
EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd,
                    off64_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

// ---- descriptors -----------------------------------------------------------
EXPORT int close(int fd) {
  SLUICE_REAL(close);
  if (!Ours(fd)) return real_close(fd);
  int r, e = 0;
  {
    Session session;
    r = DropLocked(fd);
    // The last stored file closed lets the store go: its error is the
    // close's too.
    Status s = MaybeReleaseLocked();
    if (r == 0 && !s.ok()) r = Fail(s);
    if (r < 0) e = errno;
  }
  real_close(fd);
  if (r < 0) errno = e;
  return r;
}
// A range that may hold the store's own descriptors (EngineFdBase and up,
// or anywhere when they could not be moved) lets the store go first, or it
// would be closed under the engine (a stored file open below the range lost
// its data): stored files left open reattach at their next use. g_mu held.
void ReleaseBeforeClosing(unsigned last) {
  const int base = EngineFdBase();
  if (Active() && (base < 0 || last >= static_cast<unsigned>(base))) {
    ReleaseLocked();
  }
}
EXPORT int close_range(unsigned int first, unsigned int last, int flags) {
  SLUICE_REAL(close_range);
  if (!(flags & CLOSE_RANGE_CLOEXEC)) {
    Session session;
    for (unsigned fd = first; fd <= last && fd < kMaxFds; fd++) {
      if (g_fds[fd].load()) DropLocked(static_cast<int>(fd));
    }
    ReleaseBeforeClosing(last);
  }
  return real_close_range(first, last, flags);
}
EXPORT void closefrom(int lowfd) {
  SLUICE_REAL(closefrom);
  {
    Session session;
    for (int fd = lowfd < 0 ? 0 : lowfd; fd < kMaxFds; fd++) {
      if (g_fds[fd].load()) DropLocked(fd);
    }
    ReleaseBeforeClosing(~0u);
  }
  real_closefrom(lowfd);
}
EXPORT int dup(int fd) {
  SLUICE_REAL(dup);
  int r = real_dup(fd);
  DupNoted(fd, r);
  return r;
}
int DoDup3(int oldfd, int newfd, int flags, bool is_dup2) {
  SLUICE_REAL(dup2);
  SLUICE_REAL(dup3);
  const bool involved = !t_inside && (Lookup(oldfd) || Lookup(newfd));
  if (involved && newfd >= 0 && newfd <= 2) FlushStdStream(newfd);
  int r = is_dup2 ? real_dup2(oldfd, newfd) : real_dup3(oldfd, newfd, flags);
  if (r >= 0 && involved && oldfd != newfd) {
    {
      Session session;
      DupLocked(oldfd, newfd);
    }
    if (newfd <= 2) SyncStdStream(newfd);
  }
  return r;
}
EXPORT int dup2(int oldfd, int newfd) { return DoDup3(oldfd, newfd, 0, true); }
EXPORT int dup3(int oldfd, int newfd, int flags) {
  return DoDup3(oldfd, newfd, flags, false);
}

int DoFcntl(int fd, int cmd, void* arg) {
  SLUICE_REAL(fcntl);
  Desc* d = Ours(fd);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
    int r = real_fcntl(fd, cmd, arg);
    if (!t_inside) DupNoted(fd, r);
    return r;
  }
  if (!d) return real_fcntl(fd, cmd, arg);
  constexpr int kSettable = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME;
  if (cmd == F_GETFL) {
    Session session;
    if (g_fds[fd].load() != d) return FailErrno(EBADF);
    return (d->flags & (O_ACCMODE | kSettable | O_SYNC | O_DSYNC |
                        O_DIRECTORY)) | O_LARGEFILE;
  }
  if (cmd == F_SETFL) {
    Session session;
    if (g_fds[fd].load() != d) return FailErrno(EBADF);
    int v = static_cast<int>(reinterpret_cast<intptr_t>(arg));
    d->flags = (d->flags & ~kSettable) | (v & kSettable);
    RewriteHeaderLocked(fd, d);
    return 0;
  }
  int locked;
  if (LockFcntl(fd, cmd, arg, &locked) == 0) return locked;
  return real_fcntl(fd, cmd, arg);  // FD_CLOEXEC: the placeholder's
}
EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return DoFcntl(fd, cmd, arg);
}
EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return DoFcntl(fd, cmd, arg);
}

// ---- metadata --------------------------------------------------------------
EXPORT int fstat(int fd, struct stat* st) {
  SLUICE_REAL(fstat);
  if (!Ours(fd)) return real_fstat(fd, st);
  return DoFstat(fd, st);
}
EXPORT int fstat64(int fd, struct stat64* st) {
  return fstat(fd, reinterpret_cast<struct stat*>(st));
}
EXPORT int stat(const char* path, struct stat* st) {
  SLUICE_REAL(stat);
  std::string p;
  if (!Resolve(path, &p)) return real_stat(path, st);
  return StatIn(p, st);
}
EXPORT int stat64(const char* path, struct stat64* st) {
  return stat(path, reinterpret_cast<struct stat*>(st));
}
EXPORT int lstat(const char* path, struct stat* st) {
  SLUICE_REAL(lstat);
  std::string p;
  if (!Resolve(path, &p)) return real_lstat(path, st);
  return StatIn(p, st);
}
EXPORT int lstat64(const char* path, struct stat64* st) {
  return lstat(path, reinterpret_cast<struct stat*>(st));
}
EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  SLUICE_REAL(fstatat);
  int r = DoFstatat(dirfd, path, st, flags);
  return r == 1 ? real_fstatat(dirfd, path, st, flags) : r;
}
EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st,
                     int flags) {
  return fstatat(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
EXPORT int statx(int dirfd, const char* path, int flags, unsigned int mask,
                 struct statx* sx) {
  SLUICE_REAL(statx);
  struct stat st;
  int r = DoFstatat(dirfd, path, &st, flags);
  if (r == 1) return real_statx(dirfd, path, flags, mask, sx);
  if (r < 0) return r;
  memset(sx, 0, sizeof *sx);
  sx->stx_mask = STATX_BASIC_STATS;
  sx->stx_blksize = static_cast<uint32_t>(st.st_blksize);
  sx->stx_nlink = static_cast<uint32_t>(st.st_nlink);
  sx->stx_uid = st.st_uid;
  sx->stx_gid = st.st_gid;
  sx->stx_mode = static_cast<uint16_t>(st.st_mode);
  sx->stx_ino = st.st_ino;
  sx->stx_size = static_cast<uint64_t>(st.st_size);
  sx->stx_blocks = static_cast<uint64_t>(st.st_blocks);
  sx->stx_atime = {st.st_atim.tv_sec, static_cast<uint32_t>(st.st_atim.tv_nsec), 0};
  sx->stx_mtime = {st.st_mtim.tv_sec, static_cast<uint32_t>(st.st_mtim.tv_nsec), 0};
  sx->stx_ctime = {st.st_ctim.tv_sec, static_cast<uint32_t>(st.st_ctim.tv_nsec), 0};
  sx->stx_dev_major = major(st.st_dev);
  sx->stx_dev_minor = minor(st.st_dev);
  return 0;
}
// The stat entry points of binaries built against glibc before 2.33.
EXPORT int __xstat(int, const char* path, struct stat* st) {
  return stat(path, st);
}
EXPORT int __lxstat(int, const char* path, struct stat* st) {
  return lstat(path, st);
}
EXPORT int __fxstat(int, int fd, struct stat* st) { return fstat(fd, st); }
EXPORT int __fxstatat(int, int dirfd, const char* path, struct stat* st,
                      int flags) {
  return fstatat(dirfd, path, st, flags);
}
EXPORT int __xstat64(int, const char* path, struct stat64* st) {
  return stat64(path, st);
}
EXPORT int __lxstat64(int, const char* path, struct stat64* st) {
  return lstat64(path, st);
}
EXPORT int __fxstat64(int, int fd, struct stat64* st) {
  return fstat64(fd, st);
}
EXPORT int __fxstatat64(int, int dirfd, const char* path, struct stat64* st,
                        int flags) {
  return fstatat64(dirfd, path, st, flags);
}

EXPORT int access(const char* path, int mode) {
  SLUICE_REAL(access);
  int r = DoAccess(AT_FDCWD, path, mode, 0);
  return r == 1 ? real_access(path, mode) : r;
}
EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  SLUICE_REAL(faccessat);
  int r = DoAccess(dirfd, path, mode, flags);
  return r == 1 ? real_faccessat(dirfd, path, mode, flags) : r;
}
EXPORT int euidaccess(const char* path, int mode) {
  SLUICE_REAL(euidaccess);
  int r = DoAccess(AT_FDCWD, path, mode, 0);
  return r == 1 ? real_euidaccess(path, mode) : r;
}
EXPORT int eaccess(const char* path, int mode) {
  SLUICE_REAL(eaccess);
  int r = DoAccess(AT_FDCWD, path, mode, 0);
  return r == 1 ? real_eaccess(path, mode) : r;
}

// Owners are not kept for stored files: chown and friends on a stored
// path that exists succeed when they change nothing (ChownStored), else
// EPERM. Modes and times are the file layer's (SetAttr, on the writer
// view: a writer changes its own store).
int Exists(int dirfd, const char* path, int flags) {
  struct stat st;
  return DoFstatat(dirfd, path, &st, flags);
}

// The stored path of `path` (relative to dirfd), or of descriptor dirfd
// itself when path is null or empty with AT_EMPTY_PATH: 1 when not ours.
int StoredPath(int dirfd, const char* path, int flags, std::string* p) {
  if (!path || (!*path && (flags & AT_EMPTY_PATH))) {
    Desc* d = Lookup(dirfd);
    if (!d) return 1;
    Session session;
    *p = d->path;
    return 0;
  }
  return Resolve(dirfd, path, p) ? 0 : 1;
}

int DoSetAttr(int dirfd, const char* path, int flags, const SetAttrs& a) {
  std::string p;
  if (StoredPath(dirfd, path, flags, &p)) return 1;
  return Change([&](FileSystem* fs) { return fs->SetAttr(p, a); });
}

// utimes' times, as utimensat's.
SetAttrs TimevalAttrs(const struct timeval* t) {
  if (!t) return TimeAttrs(nullptr);
  struct timespec ts[2];
  for (int i = 0; i < 2; ++i) {
    ts[i].tv_sec = t[i].tv_sec;
    ts[i].tv_nsec = t[i].tv_usec * 1000;
  }
  return TimeAttrs(ts);
}

EXPORT int chmod(const char* path, mode_t mode) {
  SLUICE_REAL(chmod);
  int r = DoSetAttr(AT_FDCWD, path, 0, ModeAttrs(mode));
  return r == 1 ? real_chmod(path, mode) : r;
}
EXPORT int fchmodat(int dirfd, const char* path, mode_t mode, int flags) {
  SLUICE_REAL(fchmodat);
  int r = DoSetAttr(dirfd, path, flags, ModeAttrs(mode));
  return r == 1 ? real_fchmodat(dirfd, path, mode, flags) : r;
}
EXPORT int fchmod(int fd, mode_t mode) {
  SLUICE_REAL(fchmod);
  int r = DoSetAttr(fd, nullptr, 0, ModeAttrs(mode));
  return r == 1 ? real_fchmod(fd, mode) : r;
}
EXPORT int chown(const char* path, uid_t u, gid_t g) {
  SLUICE_REAL(chown);
  int r = Exists(AT_FDCWD, path, 0);
  return r == 1 ? real_chown(path, u, g) : r < 0 ? r : ChownStored(u, g);
}
EXPORT int lchown(const char* path, uid_t u, gid_t g) {
  SLUICE_REAL(lchown);
  int r = Exists(AT_FDCWD, path, 0);
  return r == 1 ? real_lchown(path, u, g) : r < 0 ? r : ChownStored(u, g);
}
EXPORT int fchownat(int dirfd, const char* path, uid_t u, gid_t g,
                    int flags) {
  SLUICE_REAL(fchownat);
  int r = Exists(dirfd, path, flags & AT_EMPTY_PATH);
  return r == 1 ? real_fchownat(dirfd, path, u, g, flags)
                : r < 0 ? r : ChownStored(u, g);
}
EXPORT int utimensat(int dirfd, const char* path, const struct timespec t[2],
                     int flags) {
  SLUICE_REAL(utimensat);
  int r = DoSetAttr(dirfd, path, flags, TimeAttrs(t));
  return r == 1 ? real_utimensat(dirfd, path, t, flags) : r;
}
EXPORT int futimens(int fd, const struct timespec t[2]) {
  SLUICE_REAL(futimens);
  int r = DoSetAttr(fd, nullptr, 0, TimeAttrs(t));
  return r == 1 ? real_futimens(fd, t) : r;
}
EXPORT int utimes(const char* path, const struct timeval t[2]) {
  SLUICE_REAL(utimes);
  int r = DoSetAttr(AT_FDCWD, path, 0, TimevalAttrs(t));
  return r == 1 ? real_utimes(path, t) : r;
}
EXPORT int utime(const char* path, const struct utimbuf* t) {
  SLUICE_REAL(utime);
  struct timeval tv[2];
  if (t) {
    tv[0] = {t->actime, 0};
    tv[1] = {t->modtime, 0};
  }
  int r = DoSetAttr(AT_FDCWD, path, 0, TimevalAttrs(t ? tv : nullptr));
  return r == 1 ? real_utime(path, t) : r;
}
// No extended attributes on stored files.
EXPORT ssize_t getxattr(const char* path, const char* name, void* v,
                        size_t n) {
  SLUICE_REAL(getxattr);
  std::string p;
  if (!Resolve(path, &p)) return real_getxattr(path, name, v, n);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t lgetxattr(const char* path, const char* name, void* v,
                         size_t n) {
  SLUICE_REAL(lgetxattr);
  std::string p;
  if (!Resolve(path, &p)) return real_lgetxattr(path, name, v, n);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t listxattr(const char* path, char* list, size_t n) {
  SLUICE_REAL(listxattr);
  std::string p;
  if (!Resolve(path, &p)) return real_listxattr(path, list, n);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t llistxattr(const char* path, char* list, size_t n) {
  SLUICE_REAL(llistxattr);
  std::string p;
  if (!Resolve(path, &p)) return real_llistxattr(path, list, n);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t readlink(const char* path, char* buf, size_t n) {
  SLUICE_REAL(readlink);
  std::string p;
  if (!Resolve(path, &p)) return real_readlink(path, buf, n);
  struct stat st;
  int r = StatIn(p, &st);
  return r < 0 ? r : FailErrno(EINVAL);  // no symbolic links are stored
}

EXPORT int statvfs(const char* path, struct statvfs* sv) {
  SLUICE_REAL(statvfs);
  std::string p;
  if (!Resolve(path, &p)) return real_statvfs(path, sv);
  return real_statvfs(DataRoot().c_str(), sv);  // the space the data uses
}
EXPORT int statvfs64(const char* path, struct statvfs64* sv) {
  return statvfs(path, reinterpret_cast<struct statvfs*>(sv));
}
EXPORT int fstatvfs(int fd, struct statvfs* sv) {
  SLUICE_REAL(fstatvfs);
  SLUICE_REAL(statvfs);
  if (!Ours(fd)) return real_fstatvfs(fd, sv);
  return real_statvfs(DataRoot().c_str(), sv);
}
EXPORT int fstatvfs64(int fd, struct statvfs64* sv) {
  return fstatvfs(fd, reinterpret_cast<struct statvfs*>(sv));
}

// ---- namespace -------------------------------------------------------------
EXPORT int unlink(const char* path) {
  SLUICE_REAL(unlink);
  std::string p;
  if (!Resolve(path, &p)) return real_unlink(path);
  return Change([&](FileSystem* fs) { return fs->Unlink(p); });
}
EXPORT int rmdir(const char* path) {
  SLUICE_REAL(rmdir);
  std::string p;
  if (!Resolve(path, &p)) return real_rmdir(path);
  return Change([&](FileSystem* fs) { return fs->Rmdir(p); });
}
EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  SLUICE_REAL(unlinkat);
  std::string p;
  if (!Resolve(dirfd, path, &p)) return real_unlinkat(dirfd, path, flags);
  return Change([&](FileSystem* fs) {
    return (flags & AT_REMOVEDIR) ? fs->Rmdir(p) : fs->Unlink(p);
  });
}
EXPORT int mkdir(const char* path, mode_t mode) {
  SLUICE_REAL(mkdir);
  std::string p;
  if (!Resolve(path, &p)) return real_mkdir(path, mode);
  return Change([&](FileSystem* fs) { return fs->Mkdir(p, CreationMode(mode)); });
}
EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) {
  SLUICE_REAL(mkdirat);
  std::string p;
  if (!Resolve(dirfd, path, &p)) return real_mkdirat(dirfd, path, mode);
  return Change([&](FileSystem* fs) { return fs->Mkdir(p, CreationMode(mode)); });
}

// The file layer stores no links: under the mount, link and symlink fail
// as on a file system without them (EPERM), and a link between the mount
// and elsewhere crosses devices (EXDEV). Nothing is made outside the store.
int DoLink(int fromfd, const char* from, int tofd, const char* to, bool* ours) {
  std::string f, t;
  bool a = Resolve(fromfd, from, &f), b = Resolve(tofd, to, &t);
  *ours = a || b;
  if (!*ours) return 0;
  return FailErrno(a && b ? EPERM : EXDEV);
}
EXPORT int link(const char* from, const char* to) {
  SLUICE_REAL(link);
  bool ours;
  int r = DoLink(AT_FDCWD, from, AT_FDCWD, to, &ours);
  return ours ? r : real_link(from, to);
}
EXPORT int linkat(int fromfd, const char* from, int tofd, const char* to,
                  int flags) {
  SLUICE_REAL(linkat);
  bool ours;
  int r = DoLink(fromfd, from, tofd, to, &ours);
  return ours ? r : real_linkat(fromfd, from, tofd, to, flags);
}
EXPORT int symlink(const char* target, const char* path) {
  SLUICE_REAL(symlink);
  std::string p;
  if (!Resolve(path, &p)) return real_symlink(target, path);
  return FailErrno(EPERM);
}
EXPORT int symlinkat(const char* target, int dirfd, const char* path) {
  SLUICE_REAL(symlinkat);
  std::string p;
  if (!Resolve(dirfd, path, &p)) return real_symlinkat(target, dirfd, path);
  return FailErrno(EPERM);
}

// Special files (FIFOs, devices, sockets) are not stored: mknod and mkfifo
// under the mount fail with EPERM, as on a file system without them, and
// make nothing in the real directory; mknod of a regular file makes an
// empty one.
namespace {
int DoMknod(int dirfd, const char* path, mode_t mode, bool* ours) {
  std::string p;
  *ours = Resolve(dirfd, path, &p);
  if (!*ours) return 0;
  const mode_t type = mode & S_IFMT;
  if (type != 0 && type != S_IFREG) return FailErrno(EPERM);
  int fd = DoOpen(dirfd, path, O_WRONLY | O_CREAT | O_EXCL, mode & 07777);
  return fd < 0 ? -1 : close(fd);
}
}  // namespace
EXPORT int mknodat(int dirfd, const char* path, mode_t mode, dev_t dev) {
  SLUICE_REAL(mknodat);
  bool ours;
  int r = DoMknod(dirfd, path, mode, &ours);
  return ours ? r : real_mknodat(dirfd, path, mode, dev);
}
EXPORT int mknod(const char* path, mode_t mode, dev_t dev) {
  return mknodat(AT_FDCWD, path, mode, dev);
}
EXPORT int __xmknodat(int, int dirfd, const char* path, mode_t mode,
                      dev_t* dev) {
  return mknodat(dirfd, path, mode, dev ? *dev : 0);
}
EXPORT int __xmknod(int ver, const char* path, mode_t mode, dev_t* dev) {
  return __xmknodat(ver, AT_FDCWD, path, mode, dev);
}
EXPORT int mkfifoat(int dirfd, const char* path, mode_t mode) {
  return mknodat(dirfd, path, (mode & 07777) | S_IFIFO, 0);
}
EXPORT int mkfifo(const char* path, mode_t mode) {
  return mkfifoat(AT_FDCWD, path, mode);
}

// ---- temporary files: glibc makes them with its internal open -------------
namespace {

// The template's six X's (before `suffix` characters), or null (EINVAL).
char* TemplateXs(char* tmpl, int suffix) {
  const size_t n = strlen(tmpl);
  if (suffix < 0 || n < 6 + static_cast<size_t>(suffix)) return nullptr;
  char* x = tmpl + n - suffix - 6;
  return strncmp(x, "XXXXXX", 6) == 0 ? x : nullptr;
}

// Tries names until `make` (0, or -1 with errno) makes one that did not
// exist, as glibc's __gen_tempname does.
template <class F>
int MakeUnique(char* x, F&& make) {
  static const char kChars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 238328; ++attempt) {  // 62^3, as glibc
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
      for (auto& c : r) c = static_cast<unsigned char>(rand());
    }
    for (int i = 0; i < 6; ++i) x[i] = kChars[r[i] % 62];
    const int e = errno;
    int fd = make();
    if (fd >= 0 || errno != EEXIST) return fd;
    errno = e;
  }
  errno = EEXIST;
  return -1;
}

// A template under the mount: names tried until `make` makes one (as
// MakeUnique); *ours says whether it was, else the caller hands it to libc.
template <class F>
int MakeTemp(char* tmpl, int suffix, bool* ours, F&& make) {
  std::string p;
  *ours = tmpl && Resolve(tmpl, &p);
  if (!*ours) return -1;
  char* x = TemplateXs(tmpl, suffix);
  if (!x) return FailErrno(EINVAL);
  return MakeUnique(x, make);
}

// The mkstemp family.
int DoMkstemp(char* tmpl, int suffix, int flags, bool* ours) {
  flags &= ~O_ACCMODE;
  return MakeTemp(tmpl, suffix, ours, [&] {
    return DoOpen(AT_FDCWD, tmpl, flags | O_RDWR | O_CREAT | O_EXCL, 0600);
  });
}

}  // namespace

EXPORT int mkstemp(char* tmpl) {
  SLUICE_REAL(mkstemp);
  bool ours;
  int r = DoMkstemp(tmpl, 0, 0, &ours);
  return ours ? r : real_mkstemp(tmpl);
}
EXPORT int mkstemp64(char* tmpl) __attribute__((alias("mkstemp")));
EXPORT int mkostemp(char* tmpl, int flags) {
  SLUICE_REAL(mkostemp);
  bool ours;
  int r = DoMkstemp(tmpl, 0, flags, &ours);
  return ours ? r : real_mkostemp(tmpl, flags);
}
EXPORT int mkostemp64(char* tmpl, int flags) __attribute__((alias("mkostemp")));
EXPORT int mkstemps(char* tmpl, int suffix) {
  SLUICE_REAL(mkstemps);
  bool ours;
  int r = DoMkstemp(tmpl, suffix, 0, &ours);
  return ours ? r : real_mkstemps(tmpl, suffix);
}
EXPORT int mkstemps64(char* tmpl, int suffix) __attribute__((alias("mkstemps")));
EXPORT int mkostemps(char* tmpl, int suffix, int flags) {
  SLUICE_REAL(mkostemps);
  bool ours;
  int r = DoMkstemp(tmpl, suffix, flags, &ours);
  return ours ? r : real_mkostemps(tmpl, suffix, flags);
}
EXPORT int mkostemps64(char* tmpl, int suffix, int flags)
    __attribute__((alias("mkostemps")));
EXPORT char* mkdtemp(char* tmpl) {
  SLUICE_REAL(mkdtemp);
  bool ours;
  int r = MakeTemp(tmpl, 0, &ours, [&] { return mkdir(tmpl, 0700); });
  if (!ours) return real_mkdtemp(tmpl);
  return r == 0 ? tmpl : nullptr;
}

// The umask applies to stored files and directories too.
EXPORT mode_t umask(mode_t mask) {
  SLUICE_REAL(umask);
  mode_t old = real_umask(mask);
  if (!t_inside) NoteUmask(mask);
  return old;
}
int DoRename(int fromfd, const char* from, int tofd, const char* to,
             unsigned flags, bool* ours) {
  std::string f, t;
  bool a = Resolve(fromfd, from, &f), b = Resolve(tofd, to, &t);
  *ours = a || b;
  if (!a && !b) return 0;
  if (a != b) return FailErrno(EXDEV);  // mv then copies
  if (flags) return FailErrno(EINVAL);
  return Change([&](FileSystem* fs) { return fs->Rename(f, t); });
}
EXPORT int rename(const char* from, const char* to) {
  SLUICE_REAL(rename);
  bool ours;
  int r = DoRename(AT_FDCWD, from, AT_FDCWD, to, 0, &ours);
  return ours ? r : real_rename(from, to);
}
EXPORT int renameat(int fromfd, const char* from, int tofd, const char* to) {
  SLUICE_REAL(renameat);
  bool ours;
  int r = DoRename(fromfd, from, tofd, to, 0, &ours);
  return ours ? r : real_renameat(fromfd, from, tofd, to);
}
EXPORT int renameat2(int fromfd, const char* from, int tofd, const char* to,
                     unsigned int flags) {
  SLUICE_REAL(renameat2);
  bool ours;
  int r = DoRename(fromfd, from, tofd, to, flags, &ours);
  return ours ? r : real_renameat2(fromfd, from, tofd, to, flags);
}
EXPORT int truncate(const char* path, off_t len) {
  SLUICE_REAL(truncate);
  std::string p;
  if (!Resolve(path, &p)) return real_truncate(path, len);
  if (len < 0) return FailErrno(EINVAL);
  return Change([&](FileSystem* fs) {
    return fs->Truncate(p, static_cast<uint64_t>(len));
  });
}
EXPORT int truncate64(const char* path, off64_t len) {
  return truncate(path, len);
}

// ---- the current directory -------------------------------------------------
EXPORT int chdir(const char* path) {
  SLUICE_REAL(chdir);
  std::string p;
  if (!Resolve(path, &p)) {
    int r = real_chdir(path);
    if (r == 0) RealCwdChanged();
    return r;
  }
  struct stat st;
  int r = StatIn(p, &st);
  if (r < 0) return r;
  if (!S_ISDIR(st.st_mode)) return FailErrno(ENOTDIR);
  // The kernel's cwd goes to the mount point (when it exists), so that a
  // program this one starts finds itself in the mount (with PWD).
  if (real_chdir(MountPrefix().c_str()) == 0) RealCwdChanged();
  SetVirtualCwd(p);
  return 0;
}
EXPORT int fchdir(int fd) {
  SLUICE_REAL(fchdir);
  Desc* d = Ours(fd);
  if (!d) {
    int r = real_fchdir(fd);
    if (r == 0) RealCwdChanged();
    return r;
  }
  std::string p;
  {
    Session session;
    if (g_fds[fd].load() != d) return FailErrno(EBADF);
    if (!d->is_dir) return FailErrno(ENOTDIR);
    p = d->path;
  }
  SLUICE_REAL(chdir);
  if (real_chdir(MountPrefix().c_str()) == 0) RealCwdChanged();
  SetVirtualCwd(p);
  return 0;
}
EXPORT char* getcwd(char* buf, size_t size) {
  SLUICE_REAL(getcwd);
  std::string v = t_inside ? std::string() : VirtualCwd();
  if (v.empty()) return real_getcwd(buf, size);
  std::string full = MountPrefix() + (v == "/" ? "" : v);
  if (!buf) {
    size_t n = size ? size : full.size() + 1;
    if (n < full.size() + 1) {
      errno = ERANGE;
      return nullptr;
    }
    buf = static_cast<char*>(malloc(n));
    if (!buf) return nullptr;
  } else if (size < full.size() + 1) {
    errno = size == 0 ? EINVAL : ERANGE;
    return nullptr;
  }
  memcpy(buf, full.c_str(), full.size() + 1);
  return buf;
}
EXPORT char* __getcwd_chk(char* buf, size_t size, size_t buflen) {
  if (size > buflen) __chk_fail();
  return getcwd(buf, size);
}

// ---- processes: let the store go before another process may want it -------
EXPORT pid_t vfork(void) {
  // vfork's child shares our memory until it execs; a fork is always a
  // valid vfork, and runs the fork handlers that release the store.
  return fork();
}
// A stored file cannot be executed: the kernel loads programs (and reads
// scripts' #! lines) from real files. Refused as on a noexec mount (EACCES)
// rather than passed to the kernel, which would say ENOENT of a path that
// stat finds. A bare name is searched in PATH, not here.
namespace {
bool StoredProgram(const char* file) {
  std::string p;
  return !t_inside && file && strchr(file, '/') && Resolve(file, &p);
}
}  // namespace

EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  SLUICE_REAL(execve);
  if (StoredProgram(path)) return FailErrno(EACCES);
  if (!t_inside) Release();
  return real_execve(path, argv, envp);
}
EXPORT int execv(const char* path, char* const argv[]) {
  SLUICE_REAL(execv);
  if (StoredProgram(path)) return FailErrno(EACCES);
  if (!t_inside) Release();
  return real_execv(path, argv);
}
EXPORT int execvp(const char* file, char* const argv[]) {
  SLUICE_REAL(execvp);
  if (StoredProgram(file)) return FailErrno(EACCES);
  if (!t_inside) Release();
  return real_execvp(file, argv);
}
EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  SLUICE_REAL(execvpe);
  if (StoredProgram(file)) return FailErrno(EACCES);
  if (!t_inside) Release();
  return real_execvpe(file, argv, envp);
}
EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  SLUICE_REAL(fexecve);
  if (!t_inside) Release();
  return real_fexecve(fd, argv, envp);
}
namespace {
std::vector<char*> CollectArgs(const char* arg0, va_list ap, char*** envp) {
  std::vector<char*> args{const_cast<char*>(arg0)};
  while (args.back()) args.push_back(va_arg(ap, char*));
  if (envp) *envp = va_arg(ap, char**);
  return args;
}
}  // namespace
EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execv(path, args.data());
}
EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> args = CollectArgs(arg, ap, nullptr);
  va_end(ap);
  return execvp(file, args.data());
}
EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** envp;
  std::vector<char*> args = CollectArgs(arg, ap, &envp);
  va_end(ap);
  return execve(path, args.data(), envp);
}
EXPORT int posix_spawn(pid_t* pid, const char* path,
                       const posix_spawn_file_actions_t* fa,
                       const posix_spawnattr_t* attr, char* const argv[],
                       char* const envp[]) {
  SLUICE_REAL(posix_spawn);
  if (StoredProgram(path)) return EACCES;
  if (!t_inside) Release();
  return real_posix_spawn(pid, path, fa, attr, argv, envp);
}
EXPORT int posix_spawnp(pid_t* pid, const char* file,
                        const posix_spawn_file_actions_t* fa,
                        const posix_spawnattr_t* attr, char* const argv[],
                        char* const envp[]) {
  SLUICE_REAL(posix_spawnp);
  if (StoredProgram(file)) return EACCES;
  if (!t_inside) Release();
  return real_posix_spawnp(pid, file, fa, attr, argv, envp);
}
EXPORT int system(const char* cmd) {
  SLUICE_REAL(system);
  if (!t_inside) Release();
  return real_system(cmd);
}
EXPORT FILE* popen(const char* cmd, const char* mode) {
  SLUICE_REAL(popen);
  if (!t_inside) Release();
  return real_popen(cmd, mode);
}
