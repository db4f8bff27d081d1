// The interposed POSIX calls that read, write, seek, truncate, sync and
// allocate through a descriptor, and those that would move or map a stored
// file's bytes in the kernel (copy_file_range, sendfile, splice, ioctl,
// mmap).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/posix.h"

using sluice::FileInfo;
using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" void __chk_fail(void) __attribute__((noreturn));
extern "C" ssize_t __read_chk(int, void*, size_t, size_t);
extern "C" ssize_t __pread_chk(int, void*, size_t, off_t, size_t);
extern "C" ssize_t __pread64_chk(int, void*, size_t, off64_t, size_t);

namespace {

SLUICE_REAL(lseek);

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

}  // namespace

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
