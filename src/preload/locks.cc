// Locks on stored files, across processes: flock, lockf and fcntl's
// F_SETLK, F_SETLKW, F_GETLK and F_OFD_* on a stored file are the
// kernel's own locks, taken on a real lock file keyed by the file's path
// within the mount: SLUICE_ROOT/locks/<XXH64 of the path, 16 hex digits>.
// The kernel releases them when their holder dies, and they exclude every
// process under the interposer that uses the same data root.
//
// Who owns a lock is as on any file: a flock or OFD lock belongs to the
// open file description (one lock-file descriptor per placeholder, so dup
// and fork share it); a POSIX lock belongs to the process (one lock-file
// descriptor per process and path), and goes when the process closes any
// descriptor of the file. The lock-file descriptors are close-on-exec:
// a lock is not carried into a program the holder execs. A file renamed
// keeps its locks under its old path.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include <map>
#include <string>

#include "preload/shim.h"

using sluice::FileInfo;
using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace sluice {
namespace preload {
namespace {

// The process's descriptors for POSIX locks, by path. GUARDED_BY(g_mu);
// made at first use and never destroyed (calls come after exit's
// destructors too).
std::map<std::string, int>* g_posix = nullptr;

// Opens the lock file of `path` (within the mount): a descriptor, or -1
// with errno.
int OpenLockFile(const std::string& path) {
  SLUICE_REAL(mkdir);
  SLUICE_REAL(open);
  if (!Active()) return FailErrno(EINVAL);  // no usable data root
  const std::string dir = DataRoot() + "/locks";
  if (real_mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  char name[32];
  snprintf(name, sizeof name, "/%016llx",
           static_cast<unsigned long long>(XXH64(path.data(), path.size(), 0)));
  const std::string file = dir + name;
  const int fd = real_open(file.c_str(),
                           O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  return fd < 0 ? -1 : AsideHigh(fd, 128);
}

// The lock-file descriptor for d's locks of `kind` (g_mu held): -1 with
// errno when the lock file cannot be opened.
enum class Owner { kDescription, kProcess };
int LockFdLocked(Desc* d, Owner kind) {
  if (kind == Owner::kDescription) {
    if (d->lock_fd < 0) d->lock_fd = OpenLockFile(d->path);
    return d->lock_fd;
  }
  if (!g_posix) g_posix = new std::map<std::string, int>;
  auto it = g_posix->find(d->path);
  if (it != g_posix->end()) return it->second;
  const int fd = OpenLockFile(d->path);
  if (fd >= 0) (*g_posix)[d->path] = fd;
  return fd;
}

// Runs `op(lock_fd)` (0, or -1 with errno) on descriptor fd's lock file
// under g_mu; when `wait` and the lock is held elsewhere (EAGAIN, EACCES,
// EWOULDBLOCK), tries again without g_mu held until it is had. A signal
// ends the wait with EINTR, as it ends a blocking lock call.
template <class F>
int WithLockFd(int fd, Owner kind, bool wait, F&& op) {
  long nap_ns = 1000000;  // 1 ms, growing to 20 ms
  for (;;) {
    int r, e;
    {
      Session session;
      Desc* d = g_fds[fd].load();
      if (!d) return FailErrno(EBADF);
      Inside inside;
      const int lfd = LockFdLocked(d, kind);
      if (lfd < 0) return -1;
      r = op(d, lfd);
      e = errno;
    }
    if (r == 0 || !wait || (e != EAGAIN && e != EACCES && e != EWOULDBLOCK)) {
      errno = e;
      return r;
    }
    struct timespec ts = {0, nap_ns};
    if (nanosleep(&ts, nullptr) != 0 && errno == EINTR) return FailErrno(EINTR);
    nap_ns = nap_ns * 2 > 20000000 ? 20000000 : nap_ns * 2;
  }
}

}  // namespace

int LockFcntl(int fd, int cmd, void* arg, int* result) {
  Owner kind;
  bool wait = false, get = false;
  int try_cmd = cmd;
  switch (cmd) {
    case F_SETLKW: wait = true; try_cmd = F_SETLK; kind = Owner::kProcess; break;
    case F_SETLK: kind = Owner::kProcess; break;
    case F_GETLK: get = true; kind = Owner::kProcess; break;
    case F_OFD_SETLKW: wait = true; try_cmd = F_OFD_SETLK; kind = Owner::kDescription; break;
    case F_OFD_SETLK: kind = Owner::kDescription; break;
    case F_OFD_GETLK: get = true; kind = Owner::kDescription; break;
    default: return 1;
  }
  auto* fl = static_cast<struct flock*>(arg);
  if (!fl) {
    *result = FailErrno(EFAULT);
    return 0;
  }
  SLUICE_REAL(fcntl);
  *result = WithLockFd(fd, kind, wait, [&](Desc* d, int lfd) -> int {
    // The range, made absolute: the lock file has the stored file's
    // ranges but neither its offset nor its size.
    const int acc = d->flags & O_ACCMODE;
    if (!get && ((fl->l_type == F_RDLCK && acc == O_WRONLY) ||
                 (fl->l_type == F_WRLCK && acc == O_RDONLY))) {
      return FailErrno(EBADF);
    }
    off_t base = 0;
    if (fl->l_whence == SEEK_CUR) {
      base = OffsetOf(d);
    } else if (fl->l_whence == SEEK_END) {
      FileInfo fi;
      Status s = StatDescLocked(d, &fi);
      if (!s.ok()) return Fail(s);
      base = static_cast<off_t>(fi.size);
    } else if (fl->l_whence != SEEK_SET) {
      return FailErrno(EINVAL);
    }
    struct flock k = *fl;
    k.l_whence = SEEK_SET;
    if (__builtin_add_overflow(base, fl->l_start, &k.l_start)) {
      return FailErrno(EOVERFLOW);
    }
    if (real_fcntl(lfd, try_cmd, &k) != 0) return -1;
    if (get) *fl = k;  // the holder's range (SEEK_SET) and pid, or F_UNLCK
    return 0;
  });
  return 0;
}

void LocksOnDropLocked(Desc* d, bool last) {
  SLUICE_REAL(close);
  // Closing the process's lock-file descriptor of the path releases its
  // POSIX locks on the file, as closing any descriptor of a file does.
  if (g_posix) {
    auto it = g_posix->find(d->path);
    if (it != g_posix->end()) {
      real_close(it->second);
      g_posix->erase(it);
    }
  }
  if (last && d->lock_fd >= 0) {
    real_close(d->lock_fd);
    d->lock_fd = -1;
  }
}

}  // namespace preload
}  // namespace sluice

EXPORT int flock(int fd, int op) {
  SLUICE_REAL(flock);
  if (t_inside || !Lookup(fd)) return real_flock(fd, op);
  const bool wait = !(op & LOCK_NB) && (op & ~LOCK_NB) != LOCK_UN;
  return WithLockFd(fd, Owner::kDescription, wait,
                    [&](Desc*, int lfd) { return real_flock(lfd, op | LOCK_NB); });
}

// lockf is fcntl's POSIX locks over [offset, offset + len), as glibc's.
namespace {
int DoLockf(int fd, int cmd, off_t len) {
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_whence = SEEK_CUR;
  fl.l_start = 0;
  fl.l_len = len;
  switch (cmd) {
    case F_TEST:
      fl.l_type = F_RDLCK;
      if (fcntl(fd, F_GETLK, &fl) != 0) return -1;
      if (fl.l_type == F_UNLCK || fl.l_pid == getpid()) return 0;
      return FailErrno(EACCES);
    case F_ULOCK:
      fl.l_type = F_UNLCK;
      return fcntl(fd, F_SETLK, &fl);
    case F_LOCK:
      fl.l_type = F_WRLCK;
      return fcntl(fd, F_SETLKW, &fl);
    case F_TLOCK:
      fl.l_type = F_WRLCK;
      return fcntl(fd, F_SETLK, &fl);
    default:
      return FailErrno(EINVAL);
  }
}
}  // namespace

EXPORT int lockf(int fd, int cmd, off_t len) {
  SLUICE_REAL(lockf);
  if (t_inside || !Lookup(fd)) return real_lockf(fd, cmd, len);
  return DoLockf(fd, cmd, len);
}
EXPORT int lockf64(int fd, int cmd, off64_t len) {
  SLUICE_REAL(lockf64);
  if (t_inside || !Lookup(fd)) return real_lockf64(fd, cmd, len);
  return DoLockf(fd, cmd, len);
}
