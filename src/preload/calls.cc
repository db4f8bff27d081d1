// The rest of libc's calls that read, write or sync through a descriptor:
// the 64 and v2 forms of the vector calls, the double-underscore names,
// readahead, sync_file_range, syncfs and POSIX AIO. On a stored file each
// is done by the interposed calls, or fails with an errno that says so;
// none reaches the placeholder (which would fail it with EBADF anyway).
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/shim.h"

using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" {
ssize_t __read(int, void*, size_t);
ssize_t __write(int, const void*, size_t);
ssize_t __pread64(int, void*, size_t, off64_t);
ssize_t __pwrite64(int, const void*, size_t, off64_t);
void* __mmap(void*, size_t, int, int, int, off_t);
}

namespace {

inline bool Ours(int fd) { return !t_inside && Lookup(fd) != nullptr; }

// preadv2/pwritev2 on a stored file: an offset of -1 is the file offset,
// RWF_DSYNC and RWF_SYNC make the write durable before it returns,
// RWF_APPEND writes at the end; RWF_HIPRI and RWF_NOWAIT are hints (the
// call may wait for the store). Other flags: EOPNOTSUPP, as the kernel.
ssize_t DoVec2(int fd, const struct iovec* iov, int cnt, off_t off, int flags,
               bool write) {
  constexpr int kKnown = RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND;
  if (flags & ~kKnown) return FailErrno(EOPNOTSUPP);
  if (off < -1) return FailErrno(EINVAL);
  if (!write) return off == -1 ? readv(fd, iov, cnt) : preadv(fd, iov, cnt, off);
  if (flags & RWF_APPEND) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    off = st.st_size;
  }
  ssize_t r = off == -1 ? writev(fd, iov, cnt) : pwritev(fd, iov, cnt, off);
  if (r > 0 && (flags & (RWF_DSYNC | RWF_SYNC)) && fdatasync(fd) != 0) return -1;
  return r;
}

}  // namespace

// ---- the vector calls' other names --------------------------------------
// (off64_t is off_t on 64-bit Linux: the 64 forms are the same calls.)
EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  SLUICE_REAL(preadv64);
  if (!Ours(fd)) return real_preadv64(fd, iov, cnt, off);
  return preadv(fd, iov, cnt, off);
}
EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off64_t off) {
  SLUICE_REAL(pwritev64);
  if (!Ours(fd)) return real_pwritev64(fd, iov, cnt, off);
  return pwritev(fd, iov, cnt, off);
}
EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int cnt, off_t off,
                       int flags) {
  SLUICE_REAL(preadv2);
  if (!Ours(fd)) return real_preadv2(fd, iov, cnt, off, flags);
  return DoVec2(fd, iov, cnt, off, flags, false);
}
EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off,
                        int flags) {
  SLUICE_REAL(pwritev2);
  if (!Ours(fd)) return real_pwritev2(fd, iov, cnt, off, flags);
  return DoVec2(fd, iov, cnt, off, flags, true);
}
EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int cnt,
                          off64_t off, int flags) {
  SLUICE_REAL(preadv64v2);
  if (!Ours(fd)) return real_preadv64v2(fd, iov, cnt, off, flags);
  return DoVec2(fd, iov, cnt, off, flags, false);
}
EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int cnt,
                           off64_t off, int flags) {
  SLUICE_REAL(pwritev64v2);
  if (!Ours(fd)) return real_pwritev64v2(fd, iov, cnt, off, flags);
  return DoVec2(fd, iov, cnt, off, flags, true);
}

// glibc's exported internal names of the same calls.
EXPORT ssize_t __read(int fd, void* buf, size_t n) { return read(fd, buf, n); }
EXPORT ssize_t __write(int fd, const void* buf, size_t n) {
  return write(fd, buf, n);
}
EXPORT ssize_t __pread64(int fd, void* buf, size_t n, off64_t off) {
  return pread64(fd, buf, n, off);
}
EXPORT ssize_t __pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  return pwrite64(fd, buf, n, off);
}
EXPORT void* __mmap(void* addr, size_t len, int prot, int flags, int fd,
                    off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}
EXPORT int __fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl(fd, cmd, arg);
}

// ---- hints and syncs -----------------------------------------------------
EXPORT ssize_t readahead(int fd, off64_t off, size_t count) {
  SLUICE_REAL(readahead);
  if (!Ours(fd)) return real_readahead(fd, off, count);
  return 0;  // advice only: the store reads ahead by itself
}
// Never less than asked: the file's data is made durable (fdatasync).
EXPORT int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
  SLUICE_REAL(sync_file_range);
  if (!Ours(fd)) return real_sync_file_range(fd, off, n, flags);
  if (off < 0 || n < 0 ||
      (flags & ~(SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                 SYNC_FILE_RANGE_WAIT_AFTER))) {
    return FailErrno(EINVAL);
  }
  return fdatasync(fd);
}
// The file system of a stored file is the process's store: everything it
// wrote is made durable (a barrier of its writer view).
EXPORT int syncfs(int fd) {
  SLUICE_REAL(syncfs);
  if (!Ours(fd)) return real_syncfs(fd);
  Session session;
  if (!g_fds[fd].load()) return FailErrno(EBADF);
  Status s = SyncNamespaceLocked();
  return s.ok() ? 0 : Fail(s);
}

// ---- POSIX AIO -----------------------------------------------------------
// glibc's AIO runs the requests on threads of its own with libc's internal
// pread and pwrite, out of an interposer's reach. A request on a stored
// file is refused when it is submitted (ENOTSUP), so it never runs.
namespace {
bool AnyOurs(struct aiocb* const list[], int n) {
  for (int i = 0; i < n; i++) {
    if (list[i] && list[i]->aio_lio_opcode != LIO_NOP &&
        Ours(list[i]->aio_fildes)) {
      return true;
    }
  }
  return false;
}
}  // namespace

EXPORT int aio_read(struct aiocb* cb) {
  SLUICE_REAL(aio_read);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_read(cb);
}
EXPORT int aio_read64(struct aiocb64* cb) {
  SLUICE_REAL(aio_read64);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_read64(cb);
}
EXPORT int aio_write(struct aiocb* cb) {
  SLUICE_REAL(aio_write);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_write(cb);
}
EXPORT int aio_write64(struct aiocb64* cb) {
  SLUICE_REAL(aio_write64);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_write64(cb);
}
EXPORT int aio_fsync(int op, struct aiocb* cb) {
  SLUICE_REAL(aio_fsync);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_fsync(op, cb);
}
EXPORT int aio_fsync64(int op, struct aiocb64* cb) {
  SLUICE_REAL(aio_fsync64);
  if (Ours(cb->aio_fildes)) return FailErrno(ENOTSUP);
  return real_aio_fsync64(op, cb);
}
EXPORT int lio_listio(int mode, struct aiocb* const list[], int n,
                      struct sigevent* sig) {
  SLUICE_REAL(lio_listio);
  if (n > 0 && AnyOurs(list, n)) return FailErrno(ENOTSUP);
  return real_lio_listio(mode, list, n, sig);
}
EXPORT int lio_listio64(int mode, struct aiocb64* const list[], int n,
                        struct sigevent* sig) {
  SLUICE_REAL(lio_listio64);
  // struct aiocb64 is struct aiocb on 64-bit Linux.
  if (n > 0 &&
      AnyOurs(reinterpret_cast<struct aiocb* const*>(list), n)) {
    return FailErrno(ENOTSUP);
  }
  return real_lio_listio64(mode, list, n, sig);
}
