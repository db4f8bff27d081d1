// The file layer's crash driver, through the C API: a writer rewrites a
// few files whole (in chunks of several sizes; an fsync before half of the
// closes), a supervisor SIGKILLs it at a random moment, and a checker
// mounts the recovered root and proves the crash model for files: the
// root mounts, every file reads without error, and each file holds either
// what its last fsync made durable, or a prefix of a rewrite begun after it
// (a rewrite begins with its truncation, so an empty file counts). The
// next writer resumes on the recovered root.
//
//   crash_files run ROOT OPTIONS   trials SLUICE_CRASH_TRIALS (default 10),
//                                  seed SLUICE_CRASH_SEED, kill within
//                                  SLUICE_CRASH_MAX_MS (400); a fresh
//                                  root every SLUICE_CRASH_FRESH_EVERY (50)
//   crash_files writer ROOT OPTIONS SEED GENERATION   (started by run)
//
// OPTIONS is a store option list for sluice_options_set ("-" for none).
// The writer reports on fd 3 "b N" before it begins its N-th rewrite, and
// "file version length" after each fsync that returned 0; a version's
// bytes are a function of (seed, file, version) alone, so the checker
// rebuilds them.
//
// SLUICE_CRASH_MODE=power or fault crashes the writer by a simulated power
// loss or an injected I/O error instead of SIGKILL (crash/crash_env.h).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "crash/crash_env.h"
#include "crash/crash_util.h"
#include "crash/kv_workload.h"
#include "sluice/sluice.h"

namespace {

using sluice::crash::CrashEnv;
using sluice::crash::EnvNumber;
using sluice::crash::Mode;
using sluice::crash::Mix;

constexpr int kFiles = 6;

std::string FileName(int f) { return "/f" + std::to_string(f); }

// The length of the version the writer draws `r` for: one in three small
// (under 3000 bytes), the others from 4 KiB to 3 MiB.
size_t VersionLength(uint64_t r) {
  return (r >> 8) % 3 == 0 ? 1 + (r >> 16) % 3000 : 4096 + (r >> 16) % (3 << 20);
}

// The bytes of `file` at `version`, `length` long: every version's content
// is a stream of its own, so a prefix of it is recognisable.
std::string Content(uint64_t seed, int file, uint64_t version, size_t length) {
  std::string v(length, '\0');
  uint64_t x = Mix(seed ^ (static_cast<uint64_t>(file) << 40) ^ version);
  for (size_t j = 0; j < length; j += 8) {
    x = Mix(x);
    for (size_t b = 0; b < 8 && j + b < length; ++b) {
      v[j + b] = static_cast<char>(x >> (8 * b));
    }
  }
  return v;
}

int Mount(const std::string& root, const std::string& opts, int writer) {
  sluice_options_t* o = sluice_options_create();
  if (opts != "-") {
    size_t start = 0;
    while (start < opts.size()) {
      size_t comma = opts.find(',', start);
      if (comma == std::string::npos) comma = opts.size();
      const std::string item = opts.substr(start, comma - start);
      const size_t eq = item.find('=');
      if (eq == std::string::npos ||
          sluice_options_set(o, item.substr(0, eq).c_str(),
                             item.substr(eq + 1).c_str()) != SLUICE_OK) {
        fprintf(stderr, "crash_files: bad option %s\n", item.c_str());
        exit(2);
      }
      start = comma + 1;
    }
  }
  const int rc = sluice_mount(root.c_str(), writer, o);
  sluice_options_destroy(o);
  return rc;
}

// Rewrites or appends to files until killed. Versions are numbered per
// file and generation: (generation << 32) | n.
int Writer(const std::string& root, const std::string& opts, uint64_t seed,
           uint64_t generation) {
  CrashEnv crash_env(root);
  if (Mount(root, opts, 0) != 0) {
    crash_env.Failed("crash_files writer: mount", sluice_errmsg());
  }
  uint64_t r = Mix(seed ^ generation);
  for (uint64_t n = 1;; ++n) {
    r = Mix(r);
    const int f = static_cast<int>(r % kFiles);
    const uint64_t version = (generation << 32) | n;
    const size_t length = VersionLength(r);
    const std::string data = Content(seed, f, version, length);
    dprintf(3, "b %llu\n", static_cast<unsigned long long>(n));
    const int fd = sluice_open(FileName(f).c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                               0644);
    if (fd < 0) crash_env.Failed("crash_files writer: open", sluice_errmsg());
    // In chunks of up to 256 KiB, as an application writes a checkpoint.
    for (size_t done = 0; done < data.size();) {
      const size_t chunk = std::min<size_t>(data.size() - done,
                                            1 + Mix(r + done) % (256 << 10));
      if (sluice_write(fd, data.data() + done, chunk) != static_cast<ssize_t>(chunk)) {
        crash_env.Failed("crash_files writer: write", sluice_errmsg());
      }
      done += chunk;
    }
    const bool by_fsync = (r >> 40) & 1;
    if (by_fsync && sluice_fsync(fd) != 0) {
      crash_env.Failed("crash_files writer: fsync", sluice_errmsg());
    }
    if (by_fsync) {
      dprintf(3, "%d %llu %zu\n", f, static_cast<unsigned long long>(version),
              length);
    }
    // A close is not a durability point (as on any file system): only
    // an fsync is reported.
    if (sluice_close(fd) != 0) {
      crash_env.Failed("crash_files writer: close", sluice_errmsg());
    }
    crash_env.Step();
  }
}

struct Committed {
  uint64_t version = 0;  // 0: never written
  size_t length = 0;
};

// Whether `got` is a prefix (the truncation and some of the writes) of a
// version of file `f` that the writer of `generation` began as its n-th,
// for n in [from, to]: the writer's sequence of (file, length) is a
// function of the seed, replayed here.
bool IsPrefixOfAVersionOf(uint64_t seed, int f, uint64_t generation,
                          uint64_t from, uint64_t to, const std::string& got) {
  uint64_t r = Mix(seed ^ generation);
  for (uint64_t n = 1; n <= to; ++n) {
    r = Mix(r);
    if (n < from || static_cast<int>(r % kFiles) != f) continue;
    const size_t length = VersionLength(r);
    if (got.size() > length) continue;
    const uint64_t version = (generation << 32) | n;
    if (Content(seed, f, version, got.size()) == got) return true;
  }
  return false;
}

int Run(const char* self, const std::string& root, const std::string& opts) {
  const uint64_t trials = EnvNumber("SLUICE_CRASH_TRIALS", 10);
  const uint64_t seed = EnvNumber("SLUICE_CRASH_SEED",
                                  static_cast<uint64_t>(time(nullptr)));
  const uint64_t max_ms = EnvNumber("SLUICE_CRASH_MAX_MS", 400);
  const uint64_t fresh_every =
      std::max<uint64_t>(1, EnvNumber("SLUICE_CRASH_FRESH_EVERY", 50));
  const Mode mode = sluice::crash::CrashMode();
  printf("crash_files: %s options %s mode %s seed %llu trials %llu\n",
         root.c_str(), opts.c_str(), sluice::crash::ModeName(mode),
         static_cast<unsigned long long>(seed),
         static_cast<unsigned long long>(trials));
  fflush(stdout);
  if (system(("rm -rf '" + root + "' && mkdir -p '" + root + "'").c_str()) != 0) {
    return 2;
  }
  Committed committed[kFiles];
  // What the last check saw of each file (a file seen cut short keeps
  // that content until a writer makes another durable); absent: none.
  std::string seen[kFiles];
  bool present[kFiles] = {};
  uint64_t failures = 0, commits = 0;
  uint64_t commits_before_root = 0;  // fsyncs reported before this root
  uint64_t ends[3] = {};  // writers that ended by kPowerLost, kFaultSurfaced, kFaultSwallowed
  uint64_t rng = Mix(seed ^ 0xf11e5);
  for (uint64_t t = 1; t <= trials; ++t) {
    sluice::crash::ReportProgress("crash_files", t - 1, trials, failures);
    // A fresh root every so often: a root that is never closed cleanly
    // gathers a table per writer, and opening it gets slower.
    if (t > 1 && (t - 1) % fresh_every == 0) {
      if (system(("rm -rf '" + root + "' && mkdir -p '" + root + "'").c_str()) != 0) {
        return 2;
      }
      commits_before_root = commits;
      for (int f = 0; f < kFiles; ++f) {
        committed[f] = Committed{};
        seen[f].clear();
        present[f] = false;
      }
    }
    rng = Mix(rng);
    // Under power and fault the writer ends itself; a minute is the limit.
    const double delay =
        mode != Mode::kKill
            ? 60000.0
            : static_cast<double>((rng >> 8) % (max_ms * 1000)) / 1000;
    sluice::crash::PlanCrash(mode, Mix(rng ^ t), 600);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return 2;
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], 3);
      const std::string s = std::to_string(seed), g = std::to_string(t);
      execl(self, self, "writer", root.c_str(), opts.c_str(), s.c_str(),
            g.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    int status = 0;
    bool alone = false;
    for (double left = delay; left > 0; left -= 5) {
      usleep(static_cast<useconds_t>(std::min(left, 5.0) * 1000));
      if (waitpid(pid, &status, WNOHANG) == pid) {
        alone = true;
        break;
      }
    }
    if (!alone) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    if (system(("rm -rf '" + root + ".stash'").c_str()) != 0) return 2;
    std::string reports;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) reports.append(buf, n);
    close(fds[0]);
    std::string failure;
    uint64_t begun = 0;
    bool reported[kFiles] = {};
    int code = 0;
    if (!sluice::crash::ExpectedEnd(status, &code) || (alone && code == 0)) {
      failure = "the writer ended by itself (status " + std::to_string(status) + ")";
    } else if (code != 0) {
      ++ends[code - sluice::crash::kPowerLost];
    }
    size_t pos = 0;
    while (pos < reports.size()) {
      const size_t nl = reports.find('\n', pos);
      if (nl == std::string::npos) break;
      int f;
      unsigned long long version;
      size_t length;
      if (sscanf(reports.c_str() + pos, "b %llu", &version) == 1) {
        begun = version;
      } else if (sscanf(reports.c_str() + pos, "%d %llu %zu", &f, &version,
                        &length) == 3 &&
                 f >= 0 && f < kFiles) {
        committed[f] = {version, length};
        reported[f] = true;
        ++commits;
      }
      pos = nl + 1;
    }
    // A power loss before anything was ever made durable may leave no
    // file system at all, which is right.
    bool anything = commits > commits_before_root;
    for (int f = 0; f < kFiles; ++f) anything |= present[f];
    if (failure.empty() && !anything && !sluice::crash::HasWriterStores(root)) continue;
    if (failure.empty() && Mount(root, opts, SLUICE_READER) != 0) {
      failure = std::string("the root does not mount: ") + sluice_errmsg();
    }
    for (int f = 0; failure.empty() && f < kFiles; ++f) {
      std::string got;
      const int fd = sluice_open(FileName(f).c_str(), O_RDONLY);
      if (fd < 0) {
        if (errno == ENOENT && !present[f] && !reported[f]) continue;
        failure = FileName(f) + ": open: " + sluice_errmsg();
        break;
      }
      ssize_t n;
      while ((n = sluice_read(fd, buf, sizeof buf)) > 0) got.append(buf, n);
      if (n < 0 || sluice_close(fd) != 0) {
        failure = FileName(f) + ": read: " + sluice_errmsg();
        break;
      }
      seen[f] = got;
      present[f] = true;
      const Committed& c = committed[f];
      const uint64_t gen = c.version >> 32;
      // What the last durable point left: this trial's last report, or
      // else what the last check saw.
      const bool durable =
          reported[f] ? got == Content(seed, f, c.version, c.length)
                      : present[f] && got == seen[f];
      // Or a later version of this trial's writer, cut short (the
      // rewrite's truncation and a prefix of its writes).
      const uint64_t from = reported[f] ? (c.version & 0xffffffff) + 1 : 1;
      if (!durable && !IsPrefixOfAVersionOf(seed, f, t, from, begun, got)) {
        failure = FileName(f) + ": " + std::to_string(got.size()) +
                  " bytes that are neither version " +
                  std::to_string(c.version & 0xffffffff) + " of generation " +
                  std::to_string(gen) + " (" + std::to_string(c.length) +
                  " bytes, made durable) nor a prefix of a later one" +
                  (reported[f] && got.size() < c.length &&
                           Content(seed, f, c.version, got.size()) == got
                       ? " (it is a prefix of the durable version)"
                       : "") +
                  (IsPrefixOfAVersionOf(seed, f, t, 1, begun, got)
                       ? " (it is a prefix of an earlier version)"
                       : "") +
                  " [" + std::to_string(begun) + " begun]";
      }
    }
    sluice_unmount();
    if (!failure.empty()) {
      ++failures;
      fprintf(stderr, "crash_files: FAILED trial %llu (seed %llu, killed after "
                      "%.1f ms): %s\n",
              static_cast<unsigned long long>(t),
              static_cast<unsigned long long>(seed), delay, failure.c_str());
      const std::string keep = root + ".failed-" + std::to_string(t);
      if (system(("rm -rf '" + keep + "' && cp -a '" + root + "' '" + keep + "'").c_str()) != 0) {
        fprintf(stderr, "crash_files: cannot keep the root\n");
      }
      break;  // what is committed is no longer known
    }
  }
  printf("crash_files: %llu trials (%s: %llu power losses, %llu faults "
         "injected, %llu of them reported as errors), %llu fsyncs reported; "
         "%llu failed\n",
         static_cast<unsigned long long>(trials), sluice::crash::ModeName(mode),
         static_cast<unsigned long long>(ends[0]),
         static_cast<unsigned long long>(ends[1] + ends[2]),
         static_cast<unsigned long long>(ends[1]),
         static_cast<unsigned long long>(commits),
         static_cast<unsigned long long>(failures));
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 4 && strcmp(argv[1], "run") == 0) {
    return Run("/proc/self/exe", argv[2], argv[3]);
  }
  if (argc == 6 && strcmp(argv[1], "writer") == 0) {
    return Writer(argv[2], argv[3], strtoull(argv[4], nullptr, 10),
                  strtoull(argv[5], nullptr, 10));
  }
  fprintf(stderr,
          "usage: crash_files run ROOT OPTIONS\n"
          "       crash_files writer ROOT OPTIONS SEED GENERATION\n");
  return 2;
}
