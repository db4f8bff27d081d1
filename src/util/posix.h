// Thin, checked wrappers over the POSIX calls the store layer needs. This is
// the one place where errno becomes a Status: every message names the path.
// Short writes loop and EINTR retries; nothing here aborts.
#ifndef SLUICE_UTIL_POSIX_H_
#define SLUICE_UTIL_POSIX_H_

#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice {
namespace posix {

// errno `err` while doing `what` to `path` -> Status (ENOSPC/EDQUOT ->
// NoSpace, ENOENT -> NotFound, others IOError).
Status Error(const std::string& what, const std::string& path, int err);

enum class PathKind { kMissing, kDirectory, kFile, kOther };
Status Probe(const std::string& path, PathKind* kind);

// mkdir -p. Existing directories are fine.
Status CreateDirs(const std::string& path);
// True when `path` holds nothing but, optionally, an entry named `ignore`.
Status IsEmptyDir(const std::string& path, bool* empty,
                  const char* ignore = nullptr);

// The names in directory `path`, without "." and "..".
Status ListDir(const std::string& path, std::vector<std::string>* names);
// rm -r: `path` and everything under it, never following a symlink.
// A missing `path` is fine.
Status RemoveTree(const std::string& path);

Status ReadFile(const std::string& path, std::string* data);
// Writes `data` to path.tmp, fsyncs, renames over `path`, fsyncs the
// directory: the file is either the old or the new one after a crash.
Status WriteFileAtomic(const std::string& path, std::string_view data);
Status SyncDir(const std::string& dir);

// Loops over short writes, retries EINTR.
Status WriteAll(int fd, const void* buf, size_t n, const std::string& path);

std::string JoinPath(const std::string& dir, const std::string& name);

}  // namespace posix
}  // namespace sluice

#endif  // SLUICE_UTIL_POSIX_H_
