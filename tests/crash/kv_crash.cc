// The K/V crash driver: a writer runs the workload of kv_workload.h against
// a store, a supervisor SIGKILLs it at a random moment, and a checker
// reopens the store and proves the crash model: the store opens, no key
// reads an error, and its whole content equals the state after some prefix
// of the workload that includes every op up to the last barrier the writer
// saw complete. The next writer resumes the workload from that prefix on
// the recovered store; every few trials a fresh store is begun, sometimes
// killed within its first milliseconds (its creation).
//
//   crash_kv run DIR OPTIONS       trials (SLUICE_CRASH_TRIALS, default 10);
//                                  seed SLUICE_CRASH_SEED (default: time);
//                                  half the writers are killed at a random
//                                  moment within SLUICE_CRASH_MAX_MS (300),
//                                  half at a random op within
//                                  SLUICE_CRASH_MAX_OPS (1500)
//   crash_kv writer DIR OPTIONS SEED START   (started by run)
//
// OPTIONS is a StoreOptions::SetAll list ("-" for none). Exit 0 when every
// trial held; 1 otherwise, each failure described on stderr and its store
// kept as DIR.failed-N.
//
// SLUICE_CRASH_MODE=power or fault crashes the writer by a simulated power
// loss or an injected I/O error instead of SIGKILL (crash/crash_env.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/kv.h"
#include "crash/crash_env.h"
#include "crash/crash_util.h"
#include "crash/kv_workload.h"

namespace sluice {
namespace crash {
namespace {

constexpr uint64_t kBarrierDone = 1ull << 63;

Status OpenStore(const std::string& dir, const std::string& opts,
                 std::unique_ptr<Store>* store) {
  StoreOptions options;
  Status s;
  if (opts != "-") s = options.SetAll(opts);
  if (s.ok()) s = Store::Open(options, dir, store);
  return s;
}

void Report(int fd, uint64_t word) {
  if (write(fd, &word, sizeof word) != sizeof word) _exit(3);
}

// Runs the workload from `start` until killed. Before op i it reports i;
// after a barrier (op i) returns it reports (i + 1) | kBarrierDone.
int Writer(const std::string& dir, const std::string& opts, uint64_t seed,
           uint64_t start) {
  const int out = 3;
  CrashEnv crash_env(dir);
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, opts, &store);
  if (!s.ok()) crash_env.Failed("crash_kv writer: open", s.ToString());
  for (uint64_t i = start; s.ok(); ++i) {
    Report(out, i);
    const Op op = MakeOp(seed, i);
    const WriteMode mode = op.async ? WriteMode::kAsync : WriteMode::kSync;
    switch (op.kind) {
      case Op::kPut:
        s = store->Put(KeyName(op.key), OpValue(seed, i, op.size), mode);
        break;
      case Op::kAppend:
        s = store->Append(KeyName(op.key), OpValue(seed, i, op.size), mode);
        break;
      case Op::kDelete:
        s = store->Delete(KeyName(op.key), mode);
        break;
      case Op::kBarrier:
        s = store->WriteBarrier();
        if (s.ok()) Report(out, (i + 1) | kBarrierDone);
        break;
    }
    if (s.ok()) crash_env.Step();
  }
  crash_env.Failed("crash_kv writer", s.ToString());
}

double NowSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

struct Progress {
  uint64_t started = 0;   // ops the writer began: [start, started)
  uint64_t barrier = 0;   // ops covered by the last completed barrier
  bool any = false;
  int exit_code = 0;      // 0: killed; else a WriterExit
};

void Absorb(int fd, Progress* p) {
  uint64_t words[512];
  for (;;) {
    const ssize_t n = read(fd, words, sizeof words);
    if (n <= 0) return;
    for (ssize_t j = 0; j < n / 8; ++j) {
      const uint64_t w = words[j];
      if (w & kBarrierDone) {
        p->barrier = w & ~kBarrierDone;
      } else {
        p->started = w + 1;
        p->any = true;
      }
    }
  }
}

// Starts a writer, kills it after `delay_ms` or once it has begun op
// `kill_at`, whichever comes first, and gathers its progress.
bool RunWriter(const char* self, const std::string& dir,
               const std::string& opts, uint64_t seed, uint64_t start,
               double delay_ms, uint64_t kill_at, Progress* p,
               std::string* why) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + strerror(errno);
    return false;
  }
  fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 3);
    const std::string seed_s = std::to_string(seed);
    const std::string start_s = std::to_string(start);
    execl(self, self, "writer", dir.c_str(), opts.c_str(), seed_s.c_str(),
          start_s.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  const double deadline = NowSeconds() + delay_ms / 1000.0;
  int status = 0;
  bool alone = false;
  for (;;) {
    const double left = deadline - NowSeconds();
    if (left <= 0) break;
    pollfd pf{fds[0], POLLIN, 0};
    poll(&pf, 1, static_cast<int>(left * 1000) + 1);
    Absorb(fds[0], p);
    if (p->started > kill_at) break;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      alone = true;
      break;
    }
  }
  if (!alone) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  Absorb(fds[0], p);
  close(fds[0]);
  if (!ExpectedEnd(status, &p->exit_code) ||
      (alone && p->exit_code == 0)) {
    *why = "the writer ended by itself (status " + std::to_string(status) +
           ") before it was killed";
    return false;
  }
  return true;
}

std::string Describe(const std::string* actual, const std::string* expected) {
  auto one = [](const std::string* v) {
    return v ? std::to_string(v->size()) + " bytes" : std::string("absent");
  };
  std::string d = "store has " + one(actual) + ", expected " + one(expected);
  if (actual && expected) {
    size_t i = 0;
    while (i < actual->size() && i < expected->size() &&
           (*actual)[i] == (*expected)[i]) {
      ++i;
    }
    d += ", first difference at byte " + std::to_string(i);
  }
  return d;
}

// Reads the whole store: every key's value, or an error.
Status ReadAll(const std::string& dir, const std::string& opts,
               std::map<int, std::string>* out, std::string* errors) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, opts, &store);
  if (!s.ok()) return s;
  for (int k = 0; k < kKeys; ++k) {
    std::string v;
    Status g = store->Get(KeyName(k), &v);
    if (g.ok()) {
      (*out)[k] = std::move(v);
    } else if (!g.IsNotFound()) {
      *errors += "  " + KeyName(k) + ": " + g.ToString() + "\n";
    }
  }
  return store->Close();
}

int Run(const char* self, const std::string& dir, const std::string& opts) {
  const uint64_t trials = EnvNumber("SLUICE_CRASH_TRIALS", 10);
  const uint64_t seed = EnvNumber("SLUICE_CRASH_SEED",
                                  static_cast<uint64_t>(time(nullptr)));
  const uint64_t max_ms = EnvNumber("SLUICE_CRASH_MAX_MS", 300);
  const uint64_t max_ops = EnvNumber("SLUICE_CRASH_MAX_OPS", 1500);
  const uint64_t fresh_every = EnvNumber("SLUICE_CRASH_FRESH_EVERY", 8);
  const Mode mode = CrashMode();
  printf("crash_kv: %s options %s mode %s seed %llu trials %llu\n",
         dir.c_str(), opts.c_str(), ModeName(mode),
         static_cast<unsigned long long>(seed),
         static_cast<unsigned long long>(trials));
  fflush(stdout);
  uint64_t rng = Mix(seed ^ 0x5eed);
  std::map<int, std::string> model;  // the state after `resume` ops
  uint64_t resume = 0;
  uint64_t failures = 0, lost = 0, wrong = 0, unopened = 0, barriers = 0;
  uint64_t ops = 0;
  uint64_t ends[3] = {};  // writers that ended by kPowerLost, kFaultSurfaced, kFaultSwallowed
  for (uint64_t t = 0; t < trials; ++t) {
    ReportProgress("crash_kv", t, trials, failures);
    const bool fresh = t % fresh_every == 0;
    if (fresh) {
      if (system(("rm -rf '" + dir + "'").c_str()) != 0) return 2;
      model.clear();
      resume = 0;
    }
    rng = Mix(rng);
    // Fresh stores are killed early half the time: during their creation.
    const bool by_op = mode == Mode::kKill && !fresh && (rng & 2);
    const uint64_t span = mode != Mode::kKill ? 0
                          : by_op            ? 60000
                          : fresh && (rng & 1) ? 60
                                             : max_ms;
    // Under power and fault the writer ends itself; a minute is the limit.
    const double delay =
        span == 0 ? 60000.0
                  : static_cast<double>((rng >> 8) % (span * 1000)) / 1000;
    const uint64_t kill_at =
        by_op ? resume + (rng >> 24) % (max_ops + 1) : UINT64_MAX;
    PlanCrash(mode, Mix(rng ^ t), 2000);
    Progress p;
    p.barrier = resume;
    p.started = resume;
    std::string why;
    bool ok =
        RunWriter(self, dir, opts, seed, resume, delay, kill_at, &p, &why);
    if (p.exit_code >= kPowerLost && p.exit_code <= kFaultSwallowed) {
      ++ends[p.exit_code - kPowerLost];
    }
    if (system(("rm -rf '" + dir + ".stash'").c_str()) != 0) return 2;
    std::string failure;
    std::map<int, std::string> actual;
    std::string errors;
    Status s;
    if (ok) {
      s = ReadAll(dir, opts, &actual, &errors);
      if (!s.ok()) {
        ++unopened;
        failure = "the store does not open: " + s.ToString();
      } else if (!errors.empty()) {
        ++wrong;
        failure = "keys read as errors:\n" + errors;
      }
    } else {
      failure = why;
    }
    // The prefixes the store may hold: [p.barrier, p.started].
    for (uint64_t i = resume; i < p.barrier; ++i) ApplyOp(seed, i, &model);
    uint64_t found = UINT64_MAX;
    if (failure.empty()) {
      auto matches = [&](int k) {
        auto a = actual.find(k);
        auto m = model.find(k);
        if (a == actual.end() || m == model.end()) {
          return (a == actual.end()) == (m == model.end());
        }
        return a->second == m->second;
      };
      int mismatched = 0;
      for (int k = 0; k < kKeys; ++k) mismatched += !matches(k);
      std::map<int, std::string> at_barrier;
      const int mismatched_at_barrier = mismatched;
      if (mismatched > 0) at_barrier = model;
      for (uint64_t n = p.barrier;; ++n) {
        if (mismatched == 0) {
          found = n;
          break;
        }
        if (n >= p.started) break;
        const int key = MakeOp(seed, n).key;
        const bool before = matches(key);
        ApplyOp(seed, n, &model);
        mismatched += static_cast<int>(before) - static_cast<int>(matches(key));
      }
      if (found == UINT64_MAX) {
        failure = "the store holds no prefix of the workload from op " +
                  std::to_string(p.barrier) + " (the last barrier) to op " +
                  std::to_string(p.started) + "; at the barrier " +
                  std::to_string(mismatched_at_barrier) + " keys differ:\n";
        for (int k = 0; k < kKeys; ++k) {
          auto a = actual.find(k);
          auto m = at_barrier.find(k);
          const std::string* av = a == actual.end() ? nullptr : &a->second;
          const std::string* mv = m == at_barrier.end() ? nullptr : &m->second;
          if ((av == nullptr) != (mv == nullptr) || (av && *av != *mv)) {
            failure += "  " + KeyName(k) + ": " + Describe(av, mv) + "\n";
            if (mv != nullptr) lost += mv->size();
          }
        }
      }
    }
    if (p.barrier > resume) barriers += 1;
    ops += p.started - resume;
    if (!failure.empty()) {
      ++failures;
      const std::string keep = dir + ".failed-" + std::to_string(t);
      fprintf(stderr,
              "crash_kv: FAILED trial %llu (seed %llu, resumed at op %llu, "
              "killed after %.1f ms or at op %lld, last barrier at op %llu, "
              "%llu ops begun): %s  store kept as %s\n",
              static_cast<unsigned long long>(t),
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(resume), delay,
              kill_at == UINT64_MAX ? -1ll : static_cast<long long>(kill_at),
              static_cast<unsigned long long>(p.barrier),
              static_cast<unsigned long long>(p.started), failure.c_str(),
              keep.c_str());
      if (system(("rm -rf '" + keep + "' && cp -a '" + dir + "' '" + keep +
                  "'").c_str()) != 0) {
        fprintf(stderr, "crash_kv: cannot keep the store\n");
      }
      // Begin again on a fresh store.
      if (system(("rm -rf '" + dir + "'").c_str()) != 0) return 2;
      model.clear();
      resume = 0;
      continue;
    }
    // The model now holds the state after `found` ops.
    resume = found;
  }
  printf("crash_kv: %llu trials (%s: %llu power losses, %llu faults "
         "injected, %llu of them reported as errors), %llu ops, %llu with a "
         "barrier; %llu failed: %llu committed bytes lost, %llu keys wrong, "
         "%llu stores that did not open\n",
         static_cast<unsigned long long>(trials), ModeName(mode),
         static_cast<unsigned long long>(ends[0]),
         static_cast<unsigned long long>(ends[1] + ends[2]),
         static_cast<unsigned long long>(ends[1]),
         static_cast<unsigned long long>(ops),
         static_cast<unsigned long long>(barriers),
         static_cast<unsigned long long>(failures),
         static_cast<unsigned long long>(lost),
         static_cast<unsigned long long>(wrong),
         static_cast<unsigned long long>(unopened));
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace crash
}  // namespace sluice

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 4 && strcmp(argv[1], "run") == 0) {
    return sluice::crash::Run("/proc/self/exe", argv[2], argv[3]);
  }
  if (argc == 6 && strcmp(argv[1], "writer") == 0) {
    return sluice::crash::Writer(argv[2], argv[3], strtoull(argv[4], nullptr, 10),
                                 strtoull(argv[5], nullptr, 10));
  }
  fprintf(stderr,
          "usage: crash_kv run DIR OPTIONS\n"
          "       crash_kv writer DIR OPTIONS SEED START\n");
  return 2;
}
