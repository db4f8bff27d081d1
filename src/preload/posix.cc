// The interposed POSIX calls that open and close descriptors, duplicate
// them and change their flags, change the namespace, make temporary files,
// change the current directory, and start programs. The calls that read,
// write and sync are in posix_data.cc, those that stat and change
// attributes in posix_metadata.cc.
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "preload/posix.h"

using sluice::Code;
using sluice::FileSystem;
using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" void __chk_fail(void) __attribute__((noreturn));
extern "C" int __open_2(const char*, int);
extern "C" int __open64_2(const char*, int);
extern "C" int __openat_2(int, const char*, int);
extern "C" int __openat64_2(int, const char*, int);
extern "C" char* __getcwd_chk(char*, size_t, size_t);

namespace {

// The kernel gave out `fd`; a table entry for it is stale (closed behind
// our back, e.g. by a raw system call) and must go.
inline void ClearStale(int fd) {
  if (fd >= 0 && fd < kMaxFds && g_fds[fd].load(std::memory_order_acquire)) {
    Session session;
    DropLocked(fd);
  }
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
