// What the interposed POSIX calls (posix.cc, posix_data.cc,
// posix_metadata.cc) share. Each call passes straight to libc unless its
// descriptor is ours (an atomic load, no lock, no allocation) or its path
// is under the mount (a prefix compare).
#ifndef SLUICE_PRELOAD_POSIX_H_
#define SLUICE_PRELOAD_POSIX_H_

#include <sys/stat.h>

#include <string>

#include "preload/shim.h"

namespace sluice {
namespace preload {

inline Desc* Ours(int fd) { return t_inside ? nullptr : Lookup(fd); }

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

// Stat of `p` (in the file system) into *st: 0, or -1 with errno.
int StatIn(const std::string& p, struct stat* st);

}  // namespace preload
}  // namespace sluice

#endif  // SLUICE_PRELOAD_POSIX_H_
