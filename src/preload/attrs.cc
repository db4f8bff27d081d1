// Owners and extended attributes of stored files, which the file layer
// does not keep. What would change them fails: an owner other than the
// one stat reports is EPERM, any extended attribute ENOTSUP (as on a file
// system without them); nothing succeeds without doing what it says.
#include <errno.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "preload/shim.h"

using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace sluice {
namespace preload {

int ChownStored(uid_t u, gid_t g) {
  const bool same_user = u == static_cast<uid_t>(-1) || u == geteuid();
  const bool same_group = g == static_cast<gid_t>(-1) || g == getegid();
  return same_user && same_group ? 0 : FailErrno(EPERM);
}

}  // namespace preload
}  // namespace sluice

namespace {
inline bool OursFd(int fd) { return !t_inside && Lookup(fd) != nullptr; }
inline bool OursPath(const char* path) {
  std::string p;
  return Resolve(path, &p);
}
}  // namespace

EXPORT int fchown(int fd, uid_t u, gid_t g) {
  SLUICE_REAL(fchown);
  if (!OursFd(fd)) return real_fchown(fd, u, g);
  return ChownStored(u, g);
}

EXPORT int setxattr(const char* path, const char* name, const void* v,
                    size_t n, int flags) {
  SLUICE_REAL(setxattr);
  if (!OursPath(path)) return real_setxattr(path, name, v, n, flags);
  return FailErrno(ENOTSUP);
}
EXPORT int lsetxattr(const char* path, const char* name, const void* v,
                     size_t n, int flags) {
  SLUICE_REAL(lsetxattr);
  if (!OursPath(path)) return real_lsetxattr(path, name, v, n, flags);
  return FailErrno(ENOTSUP);
}
EXPORT int fsetxattr(int fd, const char* name, const void* v, size_t n,
                     int flags) {
  SLUICE_REAL(fsetxattr);
  if (!OursFd(fd)) return real_fsetxattr(fd, name, v, n, flags);
  return FailErrno(ENOTSUP);
}
EXPORT int removexattr(const char* path, const char* name) {
  SLUICE_REAL(removexattr);
  if (!OursPath(path)) return real_removexattr(path, name);
  return FailErrno(ENOTSUP);
}
EXPORT int lremovexattr(const char* path, const char* name) {
  SLUICE_REAL(lremovexattr);
  if (!OursPath(path)) return real_lremovexattr(path, name);
  return FailErrno(ENOTSUP);
}
EXPORT int fremovexattr(int fd, const char* name) {
  SLUICE_REAL(fremovexattr);
  if (!OursFd(fd)) return real_fremovexattr(fd, name);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t fgetxattr(int fd, const char* name, void* v, size_t n) {
  SLUICE_REAL(fgetxattr);
  if (!OursFd(fd)) return real_fgetxattr(fd, name, v, n);
  return FailErrno(ENOTSUP);
}
EXPORT ssize_t flistxattr(int fd, char* list, size_t n) {
  SLUICE_REAL(flistxattr);
  if (!OursFd(fd)) return real_flistxattr(fd, list, n);
  return FailErrno(ENOTSUP);
}
