// Paths: which calls are ours (under the mount), and the current
// directory, virtual once the program changed into the mount.
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/state.h"

namespace sluice {
namespace preload {
namespace {
// Joins `rel` to `base` (a file-system path) and normalises it; false when
// it climbs out of the mount.
bool JoinInside(const std::string& base, const char* rel, std::string* out) {
  std::string joined = base;
  if (joined.empty() || joined.back() != '/') joined += '/';
  joined += rel;
  return NormalizePath(joined, out).ok();
}

// An absolute path: under the prefix?
bool ResolveAbsolute(const char* path, std::string* out) {
  const std::string& p = S->cfg.prefix;
  if (strncmp(path, p.data(), p.size()) != 0) return false;
  char next = path[p.size()];
  if (next != '/' && next != 0) return false;
  const char* rest = path + p.size();
  if (!*rest) {
    *out = "/";
    return true;
  }
  return NormalizePath(rest, out).ok();
}
}  // namespace

// A program started by a shell that had changed into the mount: the
// kernel's cwd is the mount point and PWD says where inside it.
void AdoptCwd() {
  if (!S->cfg.active) return;
  const char* pwd = getenv("PWD");
  std::string p;
  if (!pwd || !ResolveAbsolute(pwd, &p)) return;
  struct stat st;
  SLUICE_REAL(stat);
  bool point_exists = real_stat(S->cfg.prefix.c_str(), &st) == 0;
  if (point_exists && S->real_cwd != S->cfg.prefix) return;  // PWD is stale
  SetVirtualCwd(p);
}

bool Resolve(int dirfd, const char* path, std::string* out) {
  if (!g_ready.load(std::memory_order_acquire)) EnsureInit();
  if (t_inside || !S || !S->cfg.active || !path) return false;
  if (path[0] == '/') return ResolveAbsolute(path, out);
  if (dirfd != AT_FDCWD) {
    Desc* d = Lookup(dirfd);
    if (!d) return false;
    std::string base;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (g_fds[dirfd].load() != d) return false;
      base = d->path;
    }
    return JoinInside(base, path, out);
  }
  if (g_vcwd_active.load(std::memory_order_acquire)) {
    std::string base;
    {
      std::lock_guard<std::mutex> lock(g_cwd_mu);
      base = S->vcwd;
    }
    if (!base.empty()) return JoinInside(base, path, out);
  }
  if (!g_cwd_near.load(std::memory_order_acquire) && !strstr(path, "..")) {
    return false;
  }
  std::string full;
  {
    std::lock_guard<std::mutex> lock(g_cwd_mu);
    full = S->real_cwd;
  }
  full += '/';
  full += path;
  std::string norm;
  if (!NormalizePath(full, &norm).ok()) return false;
  return ResolveAbsolute(norm.c_str(), out);
}

std::string VirtualCwd() {
  std::lock_guard<std::mutex> lock(g_cwd_mu);
  return S->vcwd;
}

void SetVirtualCwd(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_cwd_mu);
  S->vcwd = path;
  g_vcwd_active.store(!path.empty(), std::memory_order_release);
}

void RealCwdChanged() {
  if (!S || !S->cfg.active) return;
  char buf[4096];
  SLUICE_REAL(getcwd);
  const char* cwd = real_getcwd(buf, sizeof buf);
  std::lock_guard<std::mutex> lock(g_cwd_mu);
  S->real_cwd = cwd ? cwd : "";
  const std::string& p = S->cfg.prefix;
  bool near = cwd && (S->real_cwd == "/" ||
                      p.compare(0, S->real_cwd.size() + 1, S->real_cwd + "/") == 0);
  g_cwd_near.store(near, std::memory_order_release);
  S->vcwd.clear();
  g_vcwd_active.store(false, std::memory_order_release);
}

}  // namespace preload
}  // namespace sluice
