#include "preload/shim.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "util/coding.h"

namespace sluice {
namespace preload {

thread_local bool t_inside __attribute__((tls_model("initial-exec"))) = false;
std::atomic<Desc*> g_fds[kMaxFds];
std::atomic<bool> g_ready{false};
std::mutex g_mu;

namespace {

// ---- configuration ---------------------------------------------------------
struct Config {
  bool active = false;      // SLUICE_MOUNT set and usable
  std::string prefix;       // "/sluice"
  std::string root;         // SLUICE_ROOT
  std::string error;        // why the mount is unusable
  FsOptions options;
  int writer = 0;
  bool always_writer = false;  // a writer id was given: never the merged view
  double lock_wait = 60;
};

// Everything that needs a constructor lives here, made by Init and never
// destroyed: calls arrive before this library's static constructors run
// (other libraries' constructors) and after its destructors (atexit).
struct State {
  Config cfg;
  // GUARDED_BY(g_mu)
  std::unique_ptr<FileSystem> fs;
  bool fs_writer = false;
  std::vector<Desc*> descs;
  // The current directory, virtual when inside the mount. GUARDED_BY(g_cwd_mu)
  std::string vcwd;
  std::string real_cwd;
};
State* S = nullptr;
std::mutex g_cwd_mu;
std::atomic<bool> g_vcwd_active{false};
std::atomic<bool> g_cwd_near{false};  // the real cwd is an ancestor of the mount

std::once_flag g_once;
bool g_used_store = false;         // this process opened a store
std::atomic<mode_t> g_umask{022};
bool g_forked_after_use = false;   // ... and this is a child of it, pre-exec:
                                   // opens are deferred (see ForkChild)

bool ResolveAbsolute(const char* path, std::string* out);

// ---- the placeholder ---------------------------------------------------------
// A memfd of kMapBytes, mapped shared by every process that holds it:
// the file offset (an atomic int64) at 0, the header at kHeaderAt:
// magic "SLUICEFD" | u32 version | u32 flags | u32 is_dir | u32 pending |
// u32 mode | u32 path length | path | u64 XXH64 of everything before it.
// A pending open (made in a forked child before exec) still carries
// O_CREAT/O_EXCL/O_TRUNC and the mode; the first use performs it. The
// program's descriptor is an O_PATH descriptor of the memfd, so that no
// read, write, mapping, sync or lock can act on it.
constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'F', 'D'};
constexpr uint32_t kVersion = 2;
constexpr char kMemfdName[] = "sluice-fd";

constexpr size_t kFixed = sizeof kMagic + 24;
constexpr size_t kHeaderAt = 64;
constexpr size_t kMapBytes = 8192;  // room for a path of kPathMax bytes

std::string EncodeHeader(const Desc& d) {
  std::string h(kFixed, '\0');
  memcpy(&h[0], kMagic, sizeof kMagic);
  char* p = &h[sizeof kMagic];
  EncodeFixed32(p, kVersion);
  EncodeFixed32(p + 4, static_cast<uint32_t>(d.flags));
  EncodeFixed32(p + 8, d.is_dir ? 1 : 0);
  EncodeFixed32(p + 12, d.pending ? 1 : 0);
  EncodeFixed32(p + 16, static_cast<uint32_t>(d.mode));
  EncodeFixed32(p + 20, static_cast<uint32_t>(d.path.size()));
  const std::string& path = d.path;
  h += path;
  char sum[8];
  EncodeFixed64(sum, XXH64(h.data(), h.size(), 0));
  h.append(sum, sizeof sum);
  return h;
}

bool DecodeHeader(const char* map, Desc* d) {
  const char* buf = map + kHeaderAt;
  const size_t n = kMapBytes - kHeaderAt;
  if (memcmp(buf, kMagic, sizeof kMagic) != 0) return false;
  const char* p = buf + sizeof kMagic;
  if (DecodeFixed32(p) != kVersion) return false;
  uint32_t len = DecodeFixed32(p + 20);
  if (kFixed + len + 8 > n) return false;
  if (DecodeFixed64(buf + kFixed + len) != XXH64(buf, kFixed + len, 0)) {
    return false;
  }
  d->flags = static_cast<int>(DecodeFixed32(p + 4));
  d->is_dir = DecodeFixed32(p + 8) != 0;
  d->pending = DecodeFixed32(p + 12) != 0;
  d->mode = static_cast<mode_t>(DecodeFixed32(p + 16));
  d->path.assign(buf + kFixed, len);
  return true;
}

// Maps the placeholder's page from a read-write descriptor of its memfd.
char* MapPlaceholder(int rw_fd) {
  SLUICE_REAL(mmap);
  void* m = real_mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                      rw_fd, 0);
  return m == MAP_FAILED ? nullptr : static_cast<char*>(m);
}

}  // namespace

int AsideHigh(int fd, rlim_t min_limit) {
  SLUICE_REAL(fcntl);
  SLUICE_REAL(close);
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < min_limit) return fd;
  const int base = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 2048
                       ? 1024
                       : static_cast<int>(rl.rlim_cur / 2);
  if (fd >= base) return fd;
  const int high = real_fcntl(fd, F_DUPFD_CLOEXEC, base);
  if (high < 0) return fd;
  real_close(fd);
  return high;
}

namespace {

void Say(const std::string& msg) {
  SLUICE_REAL(write);
  std::string line = "sluice: " + msg + "\n";
  int fd = 2;
  if (g_fds[2].load(std::memory_order_acquire) != nullptr) return;
  (void)!real_write(fd, line.data(), line.size());
}

bool ParseConfigInner();

// Seconds written as digits with at most one '.' ("60", "0.5"); nothing
// else (no sign, exponent, suffix or blank). Read by hand: strtod would
// follow the program's locale. Waits past a billion seconds are a billion
// (the deadline's arithmetic must not overflow).
bool ParseSeconds(const char* text, double* out) {
  double v = 0, scale = 1;
  bool digits = false, dot = false;
  for (const char* p = text; *p; ++p) {
    if (*p >= '0' && *p <= '9') {
      digits = true;
      if (dot) {
        scale /= 10;
        v += (*p - '0') * scale;
      } else {
        v = v * 10 + (*p - '0');
      }
    } else if (*p == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!digits) return false;
  *out = std::min(v, 1e9);
  return true;
}

// SLUICE_WRITER, else the MPI rank; null when neither is set.
const char* WriterNumberVar() {
  const char* w = getenv("SLUICE_WRITER");
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (!w) w = getenv(v);
  }
  return w;
}

// False when SLUICE_MOUNT is unset: everything passes through. A bad
// setting is said once on stderr; once the mount prefix is known, every call
// under it then fails with that error (EINVAL), rather than pass through and
// leave the program's files in the plain directory under the mount point.
bool ParseConfig() {
  if (!ParseConfigInner()) return false;
  if (!S->cfg.error.empty() && !S->cfg.prefix.empty()) S->cfg.active = true;
  return true;
}

bool ParseConfigInner() {
  const char* mount = getenv("SLUICE_MOUNT");
  if (!mount || !*mount) return false;
  std::string prefix = mount;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix[0] != '/' || prefix == "/") {
    S->cfg.error = "SLUICE_MOUNT must be an absolute directory other than /, "
                  "not '" + std::string(mount) + "'";
    return true;
  }
  std::string norm;
  if (!NormalizePath(prefix, &norm).ok()) norm = prefix;
  S->cfg.prefix = norm;
  const char* root = getenv("SLUICE_ROOT");
  if (!root || !*root || root[0] != '/') {
    S->cfg.error = "SLUICE_MOUNT is set but SLUICE_ROOT (an absolute directory "
                  "that holds the stores) is not";
    return true;
  }
  S->cfg.root = root;
  std::string nroot;
  if (NormalizePath(S->cfg.root, &nroot).ok() &&
      (nroot == norm || nroot.compare(0, norm.size() + 1, norm + "/") == 0)) {
    S->cfg.error = "SLUICE_ROOT " + S->cfg.root + " lies inside SLUICE_MOUNT " +
                  norm;
    return true;
  }
  // Unmodified programs expect the page cache on reads (a file read twice
  // is read from memory the second time); SLUICE_OPTIONS may say otherwise.
  S->cfg.options.store.vlog_direct_reads = false;
  // Extents of 1 MiB, the st_blksize it reports (cp and cat then move 1 MiB
  // per call): an extent then stays in cache between the copy into the
  // write-combining buffer, its checksum and the value log's copy, and
  // between the read-ahead and the caller's copy out. A stored cat of 1 GiB
  // took half the user CPU of 4 MiB extents (0.15 s against 0.31 s).
  S->cfg.options.extent_bytes = 1u << 20;
  // Up to 8 write buffers (16 MiB each; the last six only for big files):
  // a cp reads its source between writes, and with two buffers the device
  // waited through those reads (stored cp of 1 GiB: 3.4-3.9 s; with a lead
  // of 64-128 MiB, 1.6-3.2 s, plain 2.3-3.1 s).
  S->cfg.options.store.vlog_write_buffers = 8;
  // A process without a writer number (a shell's tools) reads stores
  // another process is writing, as that writer last closed its files:
  // `cat a | tee b` in one store. Ranks (and SLUICE_MERGED_READS restarts)
  // wait for the writers instead, to see complete checkpoints.
  S->cfg.options.store.snapshot_reads = WriterNumberVar() == nullptr;
  if (const char* o = getenv("SLUICE_OPTIONS")) {
    Status s = S->cfg.options.SetAll(o);
    if (!s.ok()) {
      S->cfg.error = "SLUICE_OPTIONS: " + s.message();
      return true;
    }
  }
  if (const char* e = getenv("SLUICE_EXTENT_BYTES")) {
    Status s = S->cfg.options.Set("extent_bytes", e);
    if (!s.ok()) {
      S->cfg.error = "SLUICE_EXTENT_BYTES: " + s.message();
      return true;
    }
  }
  const char* w = WriterNumberVar();
  if (w) {
    char* end;
    long v = strtol(w, &end, 10);
    if (*end || v < 0 || v > 99999999) {
      S->cfg.error = "SLUICE_WRITER (or the MPI rank) '" + std::string(w) +
                    "' is not a writer number";
      return true;
    }
    S->cfg.writer = static_cast<int>(v);
    // SLUICE_MERGED_READS=1: a process with a writer number still reads
    // through the merged view until its first change, as a restart does
    // when every writer has closed (N-to-M restart reads other ranks' data).
    const char* m = getenv("SLUICE_MERGED_READS");
    S->cfg.always_writer = !(m && !strcmp(m, "1"));
  }
  if (const char* t = getenv("SLUICE_LOCK_WAIT")) {
    if (!ParseSeconds(t, &S->cfg.lock_wait)) {
      S->cfg.error = "SLUICE_LOCK_WAIT: '" + std::string(t) +
                     "' is not a number of seconds (0 or more, e.g. 60 or "
                     "0.5)";
      return true;
    }
  }
  S->cfg.active = true;
  return true;
}

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

Desc* FindByKey(ino_t key) {
  for (Desc* d : S->descs) {
    if (d->key == key) return d;
  }
  return nullptr;
}

void Register(int fd, Desc* d) {
  if (Desc* stale = g_fds[fd].load()) {
    if (stale != d) DropLocked(fd);
  }
  g_fds[fd].store(d, std::memory_order_release);
}

// Descriptors inherited through exec: placeholders found in /proc/self/fd.
void AdoptInherited() {
  SLUICE_REAL(opendir);
  SLUICE_REAL(readdir);
  SLUICE_REAL(closedir);
  SLUICE_REAL(readlink);
  SLUICE_REAL(fstat);
  SLUICE_REAL(open);
  SLUICE_REAL(close);
  SLUICE_REAL(munmap);
  DIR* dir = real_opendir("/proc/self/fd");
  if (!dir) return;
  std::vector<int> fds;
  while (struct dirent* e = real_readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    fds.push_back(atoi(e->d_name));
  }
  real_closedir(dir);
  const std::string want = std::string("/memfd:") + kMemfdName;
  for (int fd : fds) {
    if (fd >= kMaxFds) continue;
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = real_readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (strncmp(target, want.c_str(), want.size()) != 0) continue;
    struct stat st;
    if (real_fstat(fd, &st) != 0) continue;
    Desc* d = FindByKey(st.st_ino);
    if (!d) {
      // The O_PATH placeholder reopened for reading and writing its page.
      char* map = nullptr;
      int rw = real_open(link, O_RDWR | O_CLOEXEC);
      if (rw >= 0) {
        map = MapPlaceholder(rw);
        real_close(rw);
      }
      Desc found;
      if (!map || !DecodeHeader(map, &found)) {
        if (map) real_munmap(map, kMapBytes);
        continue;
      }
      d = new Desc;
      d->path = found.path;
      d->flags = found.flags;
      d->is_dir = found.is_dir;
      d->pending = found.pending;
      d->mode = found.mode;
      d->key = st.st_ino;
      d->map = map;
      S->descs.push_back(d);
    }
    d->refs++;
    g_fds[fd].store(d, std::memory_order_release);
  }
}

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

void AtExit() {
  if (!S || !S->cfg.active) return;
  fflush(nullptr);  // stdio buffers of stored files, before the store closes
  Release();
}

// The storage engine's function-local statics are made at its first open
// and destroyed by exit() before any library destructor runs; an atexit
// handler registered after that first open runs before them.
std::atomic<bool> g_atexit_registered{false};

__attribute__((destructor)) void Destruct() { AtExit(); }

}  // namespace

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

const std::string& MountPrefix() { return S->cfg.prefix; }

mode_t Umask() { return g_umask.load(std::memory_order_relaxed); }
mode_t CreationMode(mode_t mode) { return mode & ~Umask() & 07777; }
void NoteUmask(mode_t mask) {
  EnsureInit();
  g_umask.store(mask & 0777, std::memory_order_relaxed);
}
const std::string& DataRoot() { return S->cfg.root; }
bool Active() { return S != nullptr && S->cfg.active && S->cfg.error.empty(); }

// ---- paths -----------------------------------------------------------------
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

// ---- errors ----------------------------------------------------------------
int Fail(const Status& s) {
  int e = ErrnoOf(s);
  switch (s.code()) {
    case Code::kCorruption:
    case Code::kIOError:
    case Code::kBusy:
    case Code::kNoSpace:
    case Code::kNotAStore:
    case Code::kVersionTooNew:
      Say(s.ToString());
      break;
    default:
      break;
  }
  errno = e ? e : EIO;
  return -1;
}

// ---- the store -------------------------------------------------------------
Status View(bool write, FileSystem** fs) {
  if (!S->cfg.error.empty()) return Status::InvalidArgument(S->cfg.error);
  if (S->cfg.always_writer) write = true;
  if (S->fs && (S->fs_writer || !write)) {
    *fs = S->fs.get();
    return Status::OK();
  }
  if (S->fs) ReleaseLocked();  // reader to writer: files reattach on next use
  Inside inside;
  const int who = write ? S->cfg.writer : FileSystem::kReader;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline =
      start + std::chrono::duration<double>(S->cfg.lock_wait);
  Status s;
  bool said = false;
  for (;;) {
    s = FileSystem::Open(S->cfg.options, S->cfg.root, who, &S->fs);
    const auto now = std::chrono::steady_clock::now();
    if (!s.IsBusy() || now >= deadline) break;
    // Said once the wait is more than a moment's (xargs -P, a pipeline
    // of two writers), not for every short one.
    if (!said && S->cfg.lock_wait >= 2 && now - start >= std::chrono::seconds(1)) {
      Say("waiting up to " + std::to_string(static_cast<int>(S->cfg.lock_wait)) +
          " s (SLUICE_LOCK_WAIT) for " + s.message());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!s.ok()) {
    S->fs.reset();
    return s;
  }
  S->fs_writer = write;
  g_used_store = true;
  *fs = S->fs.get();
  if (!g_atexit_registered.exchange(true)) atexit(AtExit);
  return Status::OK();
}

Status SyncNamespaceLocked() {
  if (!S->fs || !S->fs_writer) return Status::OK();
  Inside inside;
  return S->fs->Sync();
}

Status Attach(Desc* d) {
  if (!d->error.ok()) {
    Status e = std::move(d->error);
    d->error = Status::OK();
    return e;
  }
  if (d->file || (d->is_dir && !d->pending)) return Status::OK();
  const int acc = d->flags & O_ACCMODE;
  constexpr int kOpenOnly = O_CREAT | O_EXCL | O_TRUNC;
  FileSystem* fs;
  Status s = View(acc != O_RDONLY || (d->pending && (d->flags & kOpenOnly)),
                  &fs);
  if (!s.ok()) return s;
  Inside inside;
  // O_SYNC, O_DSYNC: each write is durable when it returns.
  const int ff = acc | (d->flags & (O_SYNC | O_DSYNC));
  if (!d->pending) {
    // A descriptor this process (or the one before exec) had closed its
    // file under, at a release: the file is open again, incomplete until
    // the program closes it.
    s = fs->OpenFile(d->path, ff, 0, &d->file);
    if (s.ok() && acc != O_RDONLY) s = d->file->MarkOpen();
    return s;
  }
  // An open made before exec: carry it out now, once.
  s = fs->OpenFile(d->path, ff | (d->flags & kOpenOnly), d->mode, &d->file);
  if (s.code() == Code::kIsADirectory && acc == O_RDONLY &&
      !(d->flags & O_CREAT)) {
    d->is_dir = true;
    s = Status::OK();
  }
  if (!s.ok()) return s;
  d->pending = false;
  d->flags &= ~kOpenOnly;
  for (int fd = 0; fd < kMaxFds; fd++) {
    if (g_fds[fd].load() == d) {
      RewriteHeaderLocked(fd, d);
      break;
    }
  }
  return Status::OK();
}

Status ReleaseLocked() {
  Inside inside;
  Status first;
  for (Desc* d : S->descs) {
    if (!d->file) continue;
    Status s = d->file->Close();
    if (!s.ok() && d->error.ok()) d->error = s;
    if (!s.ok() && first.ok()) first = s;
    d->file.reset();
  }
  if (S->fs) {
    Status s = S->fs->Close();
    if (!s.ok()) {
      Say("closing the store: " + s.ToString());
      if (first.ok()) first = s;
    }
    S->fs.reset();
  }
  return first;
}

Status MaybeReleaseLocked() {
  if (!S || !S->fs) return Status::OK();
  for (const Desc* d : S->descs) {
    if (d->file) return Status::OK();
  }
  return ReleaseLocked();
}

void Release() {
  if (!S || !S->cfg.active) return;
  std::lock_guard<std::mutex> lock(g_mu);
  ReleaseLocked();
}

Status StatLocked(const std::string& path, FileInfo* fi) {
  FileSystem* fs;
  Status s = View(false, &fs);
  if (s.IsNotFound() && path == "/") {
    *fi = FileInfo();
    fi->is_dir = true;
    fi->mode = 0755;
    fi->ino = 1;
    return Status::OK();
  }
  if (!s.ok()) return s;
  Inside inside;
  return fs->Stat(path, fi);
}

Status StatDescLocked(Desc* d, FileInfo* fi) {
  if (!d->is_dir) {
    Status s = Attach(d);
    if (!s.ok()) return s;
    Inside inside;
    return d->file->Stat(fi);
  }
  return StatLocked(d->path, fi);
}

void FillStat(const FileInfo& fi, struct stat* st) {
  FileInfoToStat(fi, st);
  st->st_dev = makedev(0, 0xfe51c);
  st->st_uid = geteuid();
  st->st_gid = getegid();
  // The preferred I/O size: the extent (cp and cat size their buffers by it).
  st->st_blksize = static_cast<blksize_t>(S->cfg.options.extent_bytes);
}

// ---- descriptors -----------------------------------------------------------
int OpenLocked(const std::string& path, int flags, mode_t mode) {
  const int acc = flags & O_ACCMODE;
  const bool write = acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
  const bool pending = g_forked_after_use && !(flags & O_DIRECTORY);
  FileSystem* fs = nullptr;
  Status s = pending ? Status::OK() : View(write, &fs);
  std::unique_ptr<File> file;
  bool is_dir = false;
  if (pending) {
    // Recorded for the program this child execs (a shell redirection).
  } else if (s.IsNotFound() && !write && path == "/") {
    is_dir = true;  // the mount root before anything is stored
  } else if (!s.ok()) {
    return Fail(s);
  } else {
    Inside inside;
    FileInfo fi;
    if (flags & O_DIRECTORY) {
      s = fs->Stat(path, &fi);
      if (!s.ok()) return Fail(s);
      if (!fi.is_dir) return FailErrno(ENOTDIR);
      if (acc != O_RDONLY) return FailErrno(EISDIR);
      is_dir = true;
    } else {
      int ff = acc | (flags & (O_CREAT | O_EXCL | O_TRUNC | O_SYNC | O_DSYNC));
      s = fs->OpenFile(path, ff, CreationMode(mode), &file);
      if (s.code() == Code::kIsADirectory && acc == O_RDONLY &&
          !(flags & O_CREAT)) {
        is_dir = true;
      } else if (!s.ok()) {
        return Fail(s);
      }
    }
  }
  SLUICE_REAL(close);
  SLUICE_REAL(open);
  SLUICE_REAL(fstat);
  SLUICE_REAL(ftruncate);
  SLUICE_REAL(munmap);
  Desc* d = new Desc;
  d->path = path;
  d->flags = pending ? flags & ~O_NOCTTY
                     : flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY);
  d->is_dir = is_dir;
  d->pending = pending;
  d->mode = CreationMode(mode);
  const std::string h = EncodeHeader(*d);
  // The memfd, its page mapped, then the program's O_PATH descriptor of it
  // on the lowest free number (as open gives), then the memfd let go.
  int e = 0, pfd = -1;
  int mfd = memfd_create(kMemfdName, MFD_CLOEXEC);
  if (mfd < 0) {
    e = errno;
  } else {
    mfd = AsideHigh(mfd, 64);
    if (real_ftruncate(mfd, kMapBytes) != 0 || !(d->map = MapPlaceholder(mfd))) {
      e = errno;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", mfd);
      pfd = real_open(link, O_PATH | (flags & O_CLOEXEC));
      if (pfd < 0) e = errno;
    }
    real_close(mfd);
  }
  struct stat st;
  if (pfd >= 0 && (pfd >= kMaxFds || real_fstat(pfd, &st) != 0)) {
    e = pfd >= kMaxFds ? EMFILE : errno;
    real_close(pfd);
    pfd = -1;
  }
  if (pfd < 0) {
    if (d->map) real_munmap(d->map, kMapBytes);
    if (file) file->Close();
    delete d;
    return FailErrno(e ? e : EIO);
  }
  memcpy(d->map + kHeaderAt, h.data(), h.size());
  d->key = st.st_ino;
  d->file = std::move(file);
  d->refs = 1;
  S->descs.push_back(d);
  Register(pfd, d);
  return pfd;
}

int DropLocked(int fd) {
  Desc* d = g_fds[fd].exchange(nullptr, std::memory_order_acq_rel);
  if (!d) return 0;
  const bool last = --d->refs == 0;
  LocksOnDropLocked(d, last);
  if (!last) return 0;
  Status s = d->error;
  if (d->file) {
    Inside inside;
    Status c = d->file->Close();
    if (s.ok()) s = c;
  }
  S->descs.erase(std::find(S->descs.begin(), S->descs.end(), d));
  SLUICE_REAL(munmap);
  real_munmap(d->map, kMapBytes);
  delete d;
  return s.ok() ? 0 : Fail(s);
}

void DupLocked(int oldfd, int newfd) {
  if (newfd < 0 || newfd >= kMaxFds || oldfd == newfd) return;
  Desc* d = (oldfd >= 0 && oldfd < kMaxFds) ? g_fds[oldfd].load() : nullptr;
  if (g_fds[newfd].load()) DropLocked(newfd);
  if (d) {
    d->refs++;
    g_fds[newfd].store(d, std::memory_order_release);
  }
}

// Updates the flags the placeholder records (F_SETFL), so that a program
// after exec sees them too (g_mu held).
void RewriteHeaderLocked(int, Desc* d) {
  const std::string h = EncodeHeader(*d);
  memcpy(d->map + kHeaderAt, h.data(), h.size());
}

}  // namespace preload
}  // namespace sluice
