// The interposer's crash driver: a shell under LD_PRELOAD rewrites,
// appends to, replaces (cp then mv) and removes a few files under the
// mount with real tools (cp, dd, cat with redirections, mv, rm), syncs one
// now and then (`dd conv=fsync`, `sync FILE`), and reports each sync that
// completed; the supervisor SIGKILLs the shell's whole process group at a
// random moment. Then the checker, `cp -r` of the mount under the
// interposer (a new process: the mount opens and every file reads without
// error) and `sluice verify` (no extent or checksum is bad), and the
// comparison: every file holds what it held at the last completed sync,
// or a state a later step made, or one cut short (a rewrite's prefix, an
// append's prefix), never other bytes. The next shell carries on from
// what the checker saw.
//
//   crash_preload run WORK LIBSLUICE_PRELOAD_SO SLUICE [OPTIONS]
//     trials SLUICE_CRASH_TRIALS (default 10), seed SLUICE_CRASH_SEED,
//     kill within SLUICE_CRASH_MAX_MS (1500); OPTIONS is SLUICE_OPTIONS
//     for the mount ("-" or absent: none).
//
// The contents come from source files made once in WORK/src, so each
// file's expected bytes are a concatenation of known pieces.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "crash/crash_util.h"
#include "crash/kv_workload.h"

namespace {

using sluice::crash::EnvNumber;
using sluice::crash::Mix;

constexpr int kFiles = 5;
constexpr int kSources = 24;
constexpr int kSteps = 400;  // per shell; the kill comes long before

std::string Quote(const std::string& s) { return "'" + s + "'"; }

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// A state of a file: absent, or `base` followed by a prefix of `piece`
// (all of it when !cut; any prefix, none included, when cut).
struct State {
  bool present = false;
  std::string base;
  std::string piece;
  bool cut = false;
  bool Holds(bool exists, const std::string& got) const {
    if (!present) return !exists;
    if (!exists || got.size() < base.size()) return false;
    if (got.compare(0, base.size(), base) != 0) return false;
    const size_t rest = got.size() - base.size();
    if (cut ? rest > piece.size() : rest != piece.size()) return false;
    return got.compare(base.size(), rest, piece, 0, rest) == 0;
  }
  std::string Full() const { return base + piece; }
};

// One shell's steps: for each step, which file it changes (-1: none),
// what the file holds after it, and the states it passes through.
struct Step {
  int file = -1;
  State after;
  std::vector<State> during;
  bool sync = false;
};

struct Model {
  bool present[kFiles] = {};
  std::string content[kFiles];
};

// Writes the shell script of generation `t` and its steps, from `m`.
std::string MakeScript(uint64_t seed, uint64_t t, const Model& start,
                       const std::vector<std::string>& src,
                       std::vector<Step>* steps) {
  Model m = start;
  std::string sh =
      "fail() { echo \"x $1 $2\" >&3; exit 1; }\n"
      "rm -f \"$M\"/.t* || fail 0 $?\n";
  uint64_t r = Mix(seed ^ (t << 20) ^ 0x5eed);
  steps->assign(1, Step());  // step 0: the start
  for (int n = 1; n <= kSteps; ++n) {
    r = Mix(r);
    const int f = static_cast<int>(r % kFiles);
    const int v = static_cast<int>((r >> 8) % kSources);
    const int op = static_cast<int>((r >> 16) % 100);
    const std::string F = "\"$M\"/f" + std::to_string(f);
    const std::string S = "\"$S\"/v" + std::to_string(v);
    const std::string tmp = "\"$M\"/.t" + std::to_string(n);
    const std::string N = std::to_string(n);
    Step st;
    st.file = f;
    State old;
    old.present = m.present[f];
    old.piece = m.content[f];
    State whole;  // the new version, all of it
    whole.present = true;
    whole.piece = src[v];
    State cut = whole;  // ... or a prefix of it (a rewrite cut short)
    cut.cut = true;
    std::string cmd;
    if (op < 14) {
      cmd = "cp " + S + " " + F;
      st.after = whole;
      st.during = {cut};
    } else if (op < 28) {
      cmd = "dd if=" + S + " of=" + F + " bs=64k status=none";
      st.after = whole;
      st.during = {cut};
    } else if (op < 42) {
      cmd = "cat " + S + " > " + F;
      st.after = whole;
      st.during = {cut};
    } else if (op < 56) {
      cmd = "cat " + S + " >> " + F;
      State app;
      app.present = true;
      app.base = m.present[f] ? m.content[f] : "";
      app.piece = src[v];
      st.after = app;
      app.cut = true;
      st.during = {app};
    } else if (op < 68) {
      cmd = "cp " + S + " " + tmp + " && mv " + tmp + " " + F;
      st.after = whole;  // mv replaces it at once: old or new
    } else if (op < 74) {
      cmd = "rm -f " + F;
      st.after = State();
    } else if (op < 88) {
      cmd = "dd if=" + S + " of=" + F + " bs=1M conv=fsync status=none";
      st.after = whole;
      st.during = {cut};
      st.sync = true;
    } else {
      // A file made whole, then synced by name (sync opens it read-only).
      cmd = "cp " + S + " " + F + " && sync " + F;
      st.after = whole;
      st.during = {cut};
      st.sync = true;
    }
    sh += "echo \"b " + N + "\" >&3\n" + cmd + " || fail " + N + " $?\n";
    if (st.sync) sh += "echo \"s " + N + "\" >&3\n";
    m.present[f] = st.after.present;
    m.content[f] = st.after.Full();
    steps->push_back(st);
  }
  return sh;
}

int Run(const std::string& work, const std::string& lib,
        const std::string& sluice, const std::string& opts) {
  const uint64_t trials = EnvNumber("SLUICE_CRASH_TRIALS", 10);
  const uint64_t seed = EnvNumber("SLUICE_CRASH_SEED",
                                  static_cast<uint64_t>(time(nullptr)));
  const uint64_t max_ms = EnvNumber("SLUICE_CRASH_MAX_MS", 1500);
  printf("crash_preload: %s options %s seed %llu trials %llu\n", work.c_str(),
         opts.c_str(), static_cast<unsigned long long>(seed),
         static_cast<unsigned long long>(trials));
  fflush(stdout);
  const std::string root = work + "/root", mnt = work + "/mnt",
                    srcdir = work + "/src", out = work + "/seen";
  if (system(("rm -rf " + Quote(work) + " && mkdir -p " + Quote(root) + " " +
              Quote(mnt) + " " + Quote(srcdir)).c_str()) != 0) {
    return 2;
  }
  // The sources: one in three small, the others from 4 KiB to 2 MiB.
  std::vector<std::string> src(kSources);
  uint64_t x = Mix(seed ^ 0x50u);
  for (int v = 0; v < kSources; ++v) {
    x = Mix(x);
    const size_t len = x % 3 == 0 ? (x >> 8) % 3000 : 4096 + (x >> 8) % (2 << 20);
    src[v].resize(len);
    uint64_t y = Mix(x ^ v);
    for (size_t j = 0; j < len; ++j) {
      if (j % 8 == 0) y = Mix(y);
      src[v][j] = static_cast<char>(y >> (8 * (j % 8)));
    }
    std::ofstream o(srcdir + "/v" + std::to_string(v), std::ios::binary);
    o << src[v];
  }
  setenv("SLUICE_MOUNT", mnt.c_str(), 1);
  setenv("SLUICE_ROOT", root.c_str(), 1);
  setenv("SLUICE_LOCK_WAIT", "30", 1);
  if (opts != "-" && !opts.empty()) setenv("SLUICE_OPTIONS", opts.c_str(), 1);
  setenv("M", mnt.c_str(), 1);
  setenv("S", srcdir.c_str(), 1);
  // The shell's orphans (a cp whose shell died first) come back to us.
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  Model model;
  uint64_t failures = 0, syncs = 0, kills = 0, checked = 0, steps_begun = 0;
  uint64_t rng = Mix(seed ^ 0x9e1);
  struct timeval t0, t1;
  gettimeofday(&t0, nullptr);
  for (uint64_t t = 1; t <= trials; ++t) {
    sluice::crash::ReportProgress("crash_preload", t - 1, trials, failures);
    rng = Mix(rng);
    const uint64_t delay_us = (rng >> 8) % (max_ms * 1000);
    std::vector<Step> steps;
    const std::string script = work + "/writer.sh";
    {
      std::ofstream o(script);
      o << MakeScript(seed, t, model, src, &steps);
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return 2;
    const pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      dup2(fds[1], 3);
      setenv("LD_PRELOAD", lib.c_str(), 1);
      execl("/bin/bash", "bash", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);
    usleep(static_cast<useconds_t>(delay_us));
    const bool killed = kill(-pid, SIGKILL) == 0;
    int status = 0;
    waitpid(pid, &status, 0);
    while (waitpid(-1, nullptr, 0) > 0) {  // every orphan of the group
    }
    std::string reports;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) reports.append(buf, n);
    close(fds[0]);
    std::string failure;
    int begun = 0, synced = 0;
    std::istringstream rs(reports);
    for (std::string line; std::getline(rs, line);) {
      char kind;
      int n, e = 0;
      if (sscanf(line.c_str(), "%c %d %d", &kind, &n, &e) < 2) continue;
      if (kind == 'b') begun = n;
      if (kind == 's') {
        synced = n;
        ++syncs;
      }
      if (kind == 'x') {
        failure = "step " + std::to_string(n) + " failed (exit " +
                  std::to_string(e) + ")";
      }
    }
    steps_begun += static_cast<uint64_t>(begun);
    if (killed && WIFSIGNALED(status)) ++kills;
    if (failure.empty() && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
      failure = "the shell was not killed (status " + std::to_string(status) +
                "): make it longer or SLUICE_CRASH_MAX_MS shorter";
    }
    // The checker: a new process under the interposer copies the mount
    // out; then the tool checks every checksum.
    if (failure.empty()) {
      const std::string cp = "rm -rf " + Quote(out) + " && mkdir " + Quote(out) +
                             " && env LD_PRELOAD=" + Quote(lib) + " cp -r " +
                             Quote(mnt + "/.") + " " + Quote(out + "/") + " 2> " +
                             Quote(work + "/check.err");
      if (system(cp.c_str()) != 0) {
        std::string err;
        ReadFile(work + "/check.err", &err);
        failure = "the checker could not read the mount: " + err;
      }
    }
    // A shell killed before its first write leaves no store at all, which
    // `verify` calls no file system; the files' checks below still require
    // every file the model holds.
    if (failure.empty() && sluice::crash::HasWriterStores(root)) {
      const std::string v = Quote(sluice) + " verify " + Quote(root) + " > " +
                            Quote(work + "/verify.out") + " 2>&1";
      (void)!system(v.c_str());
      std::string text;
      ReadFile(work + "/verify.out", &text);
      if (text.find(" 0 bad,") == std::string::npos) {
        failure = "sluice verify: " + text;
      }
    }
    for (int f = 0; failure.empty() && f < kFiles; ++f) {
      std::string got;
      const bool exists = ReadFile(out + "/f" + std::to_string(f), &got);
      // Allowed: its state at the last sync (or at the start), any state a
      // later begun step left, or one such a step passes through.
      std::vector<State> ok;
      State at_sync;
      at_sync.present = model.present[f];
      at_sync.piece = model.content[f];
      for (int n = 1; n <= synced; ++n) {
        if (steps[n].file == f) at_sync = steps[n].after;
      }
      ok.push_back(at_sync);
      for (int n = synced + 1; n <= begun; ++n) {
        if (steps[n].file != f) continue;
        for (const State& d : steps[n].during) ok.push_back(d);
        ok.push_back(steps[n].after);
      }
      bool held = false;
      for (const State& s : ok) held = held || s.Holds(exists, got);
      ++checked;
      if (!held) {
        failure = "f" + std::to_string(f) + ": " +
                  (exists ? std::to_string(got.size()) + " bytes" : "missing") +
                  ", which is neither its state at the last sync (step " +
                  std::to_string(synced) + ": " +
                  (at_sync.present ? std::to_string(at_sync.Full().size()) +
                                         " bytes"
                                   : "missing") +
                  ") nor one of a step begun after it (to step " +
                  std::to_string(begun) + ")";
      }
      model.present[f] = exists;
      model.content[f] = got;
    }
    if (!failure.empty()) {
      ++failures;
      fprintf(stderr,
              "crash_preload: FAILED trial %llu (seed %llu, killed after %.1f "
              "ms, step %d begun, step %d synced): %s\n",
              static_cast<unsigned long long>(t),
              static_cast<unsigned long long>(seed), delay_us / 1000.0, begun,
              synced, failure.c_str());
      const std::string keep = work + ".failed-" + std::to_string(t);
      (void)!system(("rm -rf " + Quote(keep) + " && cp -a " + Quote(work) + " " +
                     Quote(keep)).c_str());
      break;  // what is durable is no longer known
    }
  }
  gettimeofday(&t1, nullptr);
  printf("crash_preload: %llu trials, %llu kills, %llu steps begun, %llu "
         "syncs reported, %llu files checked; %llu failed; %.1f s\n",
         static_cast<unsigned long long>(trials),
         static_cast<unsigned long long>(kills),
         static_cast<unsigned long long>(steps_begun),
         static_cast<unsigned long long>(syncs),
         static_cast<unsigned long long>(checked),
         static_cast<unsigned long long>(failures),
         (t1.tv_sec - t0.tv_sec) + (t1.tv_usec - t0.tv_usec) / 1e6);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "run") == 0) {
    return Run(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : "-");
  }
  fprintf(stderr, "usage: crash_preload run WORK LIBSLUICE_PRELOAD_SO SLUICE "
                  "[OPTIONS]\n");
  return 2;
}
