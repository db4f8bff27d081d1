// The interposer's start and end: its process-wide state, the settings
// read once, the fork handlers, and the real symbols.
#include "preload/shim.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/state.h"

namespace sluice {
namespace preload {

thread_local bool t_inside __attribute__((tls_model("initial-exec"))) = false;
std::atomic<Desc*> g_fds[kMaxFds];
std::atomic<bool> g_ready{false};
std::mutex g_mu;

State* S = nullptr;
std::mutex g_cwd_mu;
std::atomic<bool> g_vcwd_active{false};
std::atomic<bool> g_cwd_near{false};
bool g_used_store = false;
bool g_forked_after_use = false;

namespace {

std::once_flag g_once;
std::atomic<mode_t> g_umask{022};

mode_t ReadUmask() {
  // umask(2) cannot be read without changing it; /proc can.
  SLUICE_REAL(open);
  SLUICE_REAL(read);
  SLUICE_REAL(close);
  mode_t mask = 022;
  int fd = real_open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return mask;
  char buf[4096];
  ssize_t n = real_read(fd, buf, sizeof buf - 1);
  real_close(fd);
  if (n <= 0) return mask;
  buf[n] = 0;
  if (const char* u = strstr(buf, "Umask:")) {
    mask = static_cast<mode_t>(strtol(u + 6, nullptr, 8));
  }
  return mask;
}

void ForkPrepare() {
  g_mu.lock();
  ReleaseLocked();
}
void ForkParent() { g_mu.unlock(); }
void ForkChild() {
  // ForkPrepare closed the store, and with it every thread of the engine
  // (each store runs its backend's background work on threads of its own),
  // so this child can open stores as any process can. A forked child mostly
  // execs soon (a shell redirection): its opens are recorded and carried
  // out at their first use, here or by the program it execs, rather than
  // opening the store only to close it again at exec.
  if (g_used_store) g_forked_after_use = true;
  g_mu.unlock();
}

void InitState() {
  Inside inside;
  S = new State;
  if (!ParseConfig()) {
    g_ready.store(true, std::memory_order_release);
    return;
  }
  if (!S->cfg.error.empty()) Say(S->cfg.error);
  g_umask.store(ReadUmask(), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    AdoptInherited();
  }
  RealCwdChanged();
  AdoptCwd();
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  g_ready.store(true, std::memory_order_release);
}

void Init() {
  InitState();
  if (!S->cfg.active) return;
  for (int fd = 0; fd <= 2; fd++) SyncStdStream(fd);
}

__attribute__((constructor)) void Construct() { EnsureInit(); }

__attribute__((destructor)) void Destruct() { AtExit(); }

}  // namespace

void Say(const std::string& msg) {
  SLUICE_REAL(write);
  std::string line = "sluice: " + msg + "\n";
  int fd = 2;
  if (g_fds[2].load(std::memory_order_acquire) != nullptr) return;
  (void)!real_write(fd, line.data(), line.size());
}

void* RealSym(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) {
    // A libc without it (older than the one this was built for).
    dprintf(2, "sluice: libc has no %s\n", name);
    abort();
  }
  return p;
}

void EnsureInit() {
  if (g_ready.load(std::memory_order_acquire) || t_inside) return;
  std::call_once(g_once, Init);
}

mode_t Umask() { return g_umask.load(std::memory_order_relaxed); }
mode_t CreationMode(mode_t mode) { return mode & ~Umask() & 07777; }
void NoteUmask(mode_t mask) {
  EnsureInit();
  g_umask.store(mask & 0777, std::memory_order_relaxed);
}

}  // namespace preload
}  // namespace sluice
