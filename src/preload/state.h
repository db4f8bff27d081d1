// The interposer's process state, shared by its core files (config,
// placeholder, paths, view, fd_table, shim): the settings read at start,
// the open file system, the descriptors' Descs and the current directory.
// Not for the wrappers, which go through shim.h.
#ifndef SLUICE_PRELOAD_STATE_H_
#define SLUICE_PRELOAD_STATE_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "preload/shim.h"

namespace sluice {
namespace preload {

// ---- configuration ---------------------------------------------------------
// What the interposer reads once, at its start (config.cc).
struct Settings {
  bool active = false;      // mount (SLUICE_MOUNT) set and usable
  std::string prefix;       // "/sluice"
  std::string root;         // the first data root (SLUICE_ROOT)
  std::string error;        // why the mount is unusable
  FsOptions options;        // complete: use_configuration off
  int writer = 0;
  bool always_writer = false;  // a writer id was given: never the merged view
  double lock_wait = 60;       // seconds (lock_wait, SLUICE_LOCK_WAIT)
};

// Everything that needs a constructor lives here, made by Init and never
// destroyed: calls arrive before this library's static constructors run
// (other libraries' constructors) and after its destructors (atexit).
struct State {
  Settings cfg;
  // GUARDED_BY(g_mu)
  std::unique_ptr<FileSystem> fs;
  bool fs_writer = false;
  std::vector<Desc*> descs;
  // The current directory, virtual when inside the mount. GUARDED_BY(g_cwd_mu)
  std::string vcwd;
  std::string real_cwd;
};
extern State* S;
extern std::mutex g_cwd_mu;
extern std::atomic<bool> g_vcwd_active;
extern std::atomic<bool> g_cwd_near;  // the real cwd is an ancestor of the mount

extern bool g_used_store;        // this process opened a store
extern bool g_forked_after_use;  // ... and this is a child of it, pre-exec:
                                 // opens are deferred (see ForkChild)

// Says `msg` on stderr ("sluice: msg"), unless fd 2 is ours (shim.cc).
void Say(const std::string& msg);

// Reads the settings into S->cfg (config.cc), once. False when no mount
// is configured: everything passes through. A bad setting is said once on
// stderr; once the mount prefix is known, every call under it then fails
// with that error (EINVAL), rather than pass through and leave the
// program's files in the plain directory under the mount point.
bool ParseConfig();

// Descriptors inherited through exec: placeholders found in /proc/self/fd
// (fd_table.cc; g_mu held).
void AdoptInherited();

// A program started by a shell that had changed into the mount: the
// kernel's cwd is the mount point and PWD says where inside it (paths.cc).
void AdoptCwd();

// Closes what is open at exit (view.cc); registered with atexit after the
// first store open.
void AtExit();

}  // namespace preload
}  // namespace sluice

#endif  // SLUICE_PRELOAD_STATE_H_
