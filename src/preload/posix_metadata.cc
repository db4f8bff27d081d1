// The interposed POSIX calls that stat stored files and directories, check
// access, change modes, owners and times, read extended attributes and
// links, and report the file system's space.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <string>

#include "preload/posix.h"

using sluice::FileInfo;
using sluice::FileSystem;
using sluice::Status;
using sluice::ModeAttrs;
using sluice::SetAttrs;
using sluice::TimeAttrs;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" int __xstat(int, const char*, struct stat*);
extern "C" int __lxstat(int, const char*, struct stat*);
extern "C" int __fxstat(int, int, struct stat*);
extern "C" int __fxstatat(int, int, const char*, struct stat*, int);
extern "C" int __xstat64(int, const char*, struct stat64*);
extern "C" int __lxstat64(int, const char*, struct stat64*);
extern "C" int __fxstat64(int, int, struct stat64*);
extern "C" int __fxstatat64(int, int, const char*, struct stat64*, int);
extern "C" int eaccess(const char*, int);

namespace sluice {
namespace preload {

int StatIn(const std::string& p, struct stat* st) {
  Session session;
  FileInfo fi;
  Status s = StatLocked(p, &fi);
  if (!s.ok()) return Fail(s);
  FillStat(fi, st);
  return 0;
}

}  // namespace preload
}  // namespace sluice

namespace {

int DoFstat(int fd, struct stat* st) {
  return OnDesc(fd, [&](Desc* d) -> int {
    FileInfo fi;
    Status s = StatDescLocked(d, &fi);
    if (!s.ok()) return Fail(s);
    FillStat(fi, st);
    return 0;
  });
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

}  // namespace

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
