// The file layer's crash driver, through the C API: a writer changes six
// files, /f0 to /f5, in steps, a supervisor crashes it at a random moment,
// and a checker mounts the recovered root and proves the crash model for
// files. The next writer resumes on the recovered root.
//
// The writer's steps, each a function of (seed, generation, step) and of
// the files' sizes, closing every descriptor it opens before the next
// step:
//   rewrite   open with O_TRUNC, write a new version (up to 3 MiB) in
//             chunks of up to 256 KiB, fsync before half of the closes;
//   append    open without O_TRUNC and write one to four pieces at the end
//             (with O_APPEND, after an lseek to the end, or by pwrite at
//             the size; pieces of up to 64 bytes, 8 KiB or 1 MiB, in
//             chunks of up to 16 bytes, 4 KiB or 256 KiB), sometimes an
//             fsync between two pieces or before the close; a file over
//             4 MiB is truncated instead;
//   truncate  shrink (to any size, 0 among them) or grow by up to 1 MiB
//             (the new bytes read as zeros), by sluice_truncate or by
//             sluice_ftruncate on a descriptor, then maybe a piece written
//             at the new end, maybe an fsync, and the close;
//   replace   write a new version into /new (O_TRUNC, chunks), maybe fsync
//             it, close it and rename it over the file: the atomic
//             replace. Sometimes the file is then opened read-only and
//             fsynced;
//   move      rename the file to another of the six names (over it, or to
//             a free one), sometimes fsyncing it after.
// A truncate or move of a missing file is a rewrite. Half of the writers
// combine writes into extents of 64 KiB (extent_bytes) instead of 4 MiB,
// unless OPTIONS sets it.
//
// What the checker accepts, and why. Every sluice_fsync and every
// sluice_close is a write barrier of the writer's store (docs/
// RELIABILITY.md, what each call promises; WriterFile::Sync and
// WriterFs::Release in src/fs/writer_file.cc), and a barrier makes every
// update the store was given before it durable: data, truncations and
// renames alike, since each is a store write issued before its call
// returns (a rename is one batch: WriterFs::RenameLocked). After a crash
// the store holds its last barrier plus a prefix of the updates issued
// after it (docs/RELIABILITY.md, the crash model), and the file layer
// issues them in the order of the calls (no rename or truncation happens
// here while a file has buffered data). So the root after a crash holds
// the whole file system as it was at one moment between the writer's last
// reported barrier and the crash: the state after some call, or the state
// in the middle of a write, where the file written holds its bytes from
// before the write followed by a prefix of the written ones and every
// other name is as before it. The checker replays the writer's steps from
// what it read at the last check, applies them up to the last barrier
// reported, and accepts only if the seven names (the six and /new:
// whether each exists, and its bytes; and no other name in the root)
// equal one of those states. A rename is thus seen whole on both of its
// names or not at all, a truncation is the old size or the new one, and
// a file renamed away while its target still holds the old content fails
// even though each name alone holds one of its own states. A call that
// failed (SLUICE_CRASH_MODE=fault) ends the writer; the states before and
// after it are both in the window. sluice_truncate also closes (a
// barrier) but is not reported as one: its contract is truncate(2)'s.
// A root in which nothing was ever made durable may hold no file system
// at all.
//
//   crash_files run ROOT OPTIONS   trials SLUICE_CRASH_TRIALS (default 10),
//                                  seed SLUICE_CRASH_SEED, kill within
//                                  SLUICE_CRASH_MAX_MS (400); a fresh
//                                  root every SLUICE_CRASH_FRESH_EVERY (50)
//   crash_files writer ROOT OPTIONS SEED GENERATION   (started by run)
//
// OPTIONS is a store option list for sluice_options_set ("-" for none).
// The writer reports on fd 3 "s I SIZE" for each name I (0 to 5, 6 for
// /new) as its mount finds it (-1: missing), which must be what the last
// check read; "b N" before its N-th step; and "d N K" after the K-th call
// of step N, an fsync or a close, returned 0. The bytes it writes are a
// function of (seed, generation, step, call), so the checker rebuilds
// them.
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
constexpr int kTemp = kFiles;      // the replace steps' temporary name
constexpr int kNames = kFiles + 1;
constexpr uint64_t kBig = 4 << 20;  // no append or growth past this

std::string NameOf(int i) {
  return i == kTemp ? "/new" : "/f" + std::to_string(i);
}

// The length of a new version: one in three small (under 3000 bytes), the
// others from 4 KiB to 3 MiB.
size_t VersionLength(uint64_t r) {
  return (r >> 8) % 3 == 0 ? 1 + (r >> 16) % 3000 : 4096 + (r >> 16) % (3 << 20);
}

// The bytes a write of stream `key` writes, `length` of them: every
// stream is its own, so a prefix of one is recognisable.
std::string Stream(uint64_t seed, uint64_t key, size_t length) {
  std::string v(length, '\0');
  uint64_t x = Mix(seed ^ Mix(key));
  for (size_t j = 0; j < length; j += 8) {
    x = Mix(x);
    for (size_t b = 0; b < 8 && j + b < length; ++b) {
      v[j + b] = static_cast<char>(x >> (8 * b));
    }
  }
  return v;
}

// One call of a step, on the one descriptor a step has open at a time.
struct Op {
  enum Kind {
    kOpen, kSeekEnd, kWrite, kFsync, kClose, kTruncate, kFTruncate, kRename
  };
  Kind kind;
  int name = 0;        // the file (kRename: its source)
  int to = 0;          // kRename: its target
  int flags = 0;       // kOpen: the flags; kWrite: 1 for pwrite at the size
  uint64_t size = 0;   // kWrite: its length; kTruncate, kFTruncate: the size
  uint64_t key = 0;    // kWrite: its stream, which draws its chunks too
  uint64_t chunk = 0;  // kWrite: the largest chunk
};

struct Step {
  int kind = 0;  // index into kKindNames
  std::vector<Op> ops;
};

const char* const kKindNames[] = {"rewrite", "append", "truncate", "replace",
                                  "move"};

// The names' state: whether each exists and its size, and (the checker's
// copy) its bytes.
struct Model {
  bool exists[kNames] = {};
  uint64_t size[kNames] = {};
  std::string data[kNames];
  bool contents = false;
};

// Applies a completed call to the model.
void Apply(uint64_t seed, const Op& op, Model* m) {
  const int x = op.name;
  switch (op.kind) {
    case Op::kOpen:
      if ((op.flags & O_TRUNC) || ((op.flags & O_CREAT) && !m->exists[x])) {
        m->exists[x] = true;
        m->size[x] = 0;
        m->data[x].clear();
      }
      break;
    case Op::kWrite:
      m->size[x] += op.size;
      if (m->contents) m->data[x] += Stream(seed, op.key, op.size);
      break;
    case Op::kTruncate:
    case Op::kFTruncate:
      m->size[x] = op.size;
      if (m->contents) m->data[x].resize(op.size, '\0');
      break;
    case Op::kRename:
      if (op.to != x) {
        m->exists[op.to] = true;
        m->size[op.to] = m->size[x];
        m->data[op.to] = std::move(m->data[x]);
        m->exists[x] = false;
        m->size[x] = 0;
        m->data[x].clear();
      }
      break;
    default:
      break;
  }
}

// Step `n` of the writer of `generation`, given the model before it.
Step PlanStep(uint64_t seed, uint64_t generation, uint64_t n, const Model& m) {
  uint64_t r = Mix(Mix(seed ^ (generation << 32)) ^ n);
  auto next = [&r] { return r = Mix(r); };
  const int f = static_cast<int>(next() % kFiles);
  const uint64_t d = next() % 20;
  int kind = d < 5 ? 0 : d < 10 ? 1 : d < 13 ? 2 : d < 17 ? 3 : 4;
  if (kind == 1 && m.size[f] > kBig) kind = 2;  // which shrinks it
  if ((kind == 2 || kind == 4) && !m.exists[f]) kind = 0;
  Step s;
  s.kind = kind;
  auto add = [&s](Op::Kind k, int name) -> Op& {
    s.ops.push_back(Op{k});
    s.ops.back().name = name;
    return s.ops.back();
  };
  // A write of `size` bytes in chunks of up to `chunk`, by pwrite or not.
  auto write = [&](int name, uint64_t size, uint64_t chunk, int by_pwrite) {
    Op& w = add(Op::kWrite, name);
    w.size = size;
    w.chunk = chunk;
    w.flags = by_pwrite;
    w.key = (generation << 40) | (n << 8) | s.ops.size();
  };
  // A piece of one of three sizes, in chunks to match.
  auto piece = [&](int name, int by_pwrite) {
    const uint64_t c = next() % 3;
    if (c == 0) write(name, 1 + next() % 64, 16, by_pwrite);
    if (c == 1) write(name, 1 + next() % 8192, 4096, by_pwrite);
    if (c == 2) write(name, 1 + next() % (1 << 20), 256 << 10, by_pwrite);
  };
  switch (kind) {
    case 0:  // rewrite
      add(Op::kOpen, f).flags = O_WRONLY | O_CREAT | O_TRUNC;
      write(f, VersionLength(next()), 256 << 10, 0);
      if (next() & 1) add(Op::kFsync, f);
      add(Op::kClose, f);
      break;
    case 1: {  // append
      const uint64_t how = next() % 3;
      add(Op::kOpen, f).flags = O_WRONLY | O_CREAT | (how == 0 ? O_APPEND : 0);
      if (how == 1) add(Op::kSeekEnd, f);
      const uint64_t pieces = 1 + next() % 4;
      for (uint64_t p = 0; p < pieces; ++p) {
        piece(f, how == 2);
        if (p + 1 < pieces && next() % 4 == 0) add(Op::kFsync, f);
      }
      if (next() & 1) add(Op::kFsync, f);
      add(Op::kClose, f);
      break;
    }
    case 2: {  // truncate
      const uint64_t size = m.size[f];
      const bool grow = size <= kBig && (next() & 1);
      const uint64_t to = grow ? size + 1 + next() % (1 << 20)
                               : next() % (size + 1);
      if (next() & 1) {
        add(Op::kTruncate, f).size = to;
        break;
      }
      add(Op::kOpen, f).flags = O_WRONLY;
      add(Op::kFTruncate, f).size = to;
      if (next() & 1) {
        add(Op::kSeekEnd, f);
        piece(f, 0);
      }
      if (next() & 1) add(Op::kFsync, f);
      add(Op::kClose, f);
      break;
    }
    case 3:  // replace
      add(Op::kOpen, kTemp).flags = O_WRONLY | O_CREAT | O_TRUNC;
      write(kTemp, VersionLength(next()), 256 << 10, 0);
      if (next() & 1) add(Op::kFsync, kTemp);
      add(Op::kClose, kTemp);
      add(Op::kRename, kTemp).to = f;
      if (next() % 3 == 0) {
        add(Op::kOpen, f).flags = O_RDONLY;
        add(Op::kFsync, f);
        add(Op::kClose, f);
      }
      break;
    case 4: {  // move
      const int to = static_cast<int>((f + 1 + next() % (kFiles - 1)) % kFiles);
      add(Op::kRename, f).to = to;
      if (next() % 3 == 0) {
        add(Op::kOpen, to).flags = O_RDONLY;
        add(Op::kFsync, to);
        add(Op::kClose, to);
      }
      break;
    }
  }
  return s;
}

std::string Describe(const Op& op) {
  switch (op.kind) {
    case Op::kOpen:
      return "open " + NameOf(op.name) +
             ((op.flags & O_ACCMODE) == O_RDONLY ? " read-only" : "") +
             (op.flags & O_TRUNC ? " O_TRUNC" : "") +
             (op.flags & O_APPEND ? " O_APPEND" : "");
    case Op::kSeekEnd: return "lseek to the end";
    case Op::kWrite:
      return (op.flags ? "pwrite " : "write ") + std::to_string(op.size);
    case Op::kFsync: return "fsync";
    case Op::kClose: return "close";
    case Op::kTruncate:
      return "truncate " + NameOf(op.name) + " " + std::to_string(op.size);
    case Op::kFTruncate: return "ftruncate " + std::to_string(op.size);
    case Op::kRename: return "rename " + NameOf(op.name) + " " + NameOf(op.to);
  }
  return "?";
}

// The file system of this process (Mount's), or null.
sluice_fs_t* the_fs = nullptr;

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
  const int rc = sluice_mount(root.c_str(), writer, o, &the_fs);
  sluice_options_destroy(o);
  return rc;
}

// Runs steps until it is crashed.
int Writer(const std::string& root, const std::string& opts, uint64_t seed,
           uint64_t generation) {
  CrashEnv crash_env(root);
  // Half of the writers combine writes into extents of 64 KiB rather than
  // 4 MiB: their long writes reach the store in several parts, so that a
  // crash can leave one cut short.
  std::string o = opts;
  if (opts.find("extent_bytes") == std::string::npos &&
      (Mix(seed ^ generation) & 1)) {
    o = (opts == "-" ? "" : opts + ",") + "extent_bytes=64k";
  }
  if (Mount(root, o, 0) != 0) {
    crash_env.Failed("crash_files writer: mount", sluice_errmsg());
  }
  Model m;
  for (int i = 0; i < kNames; ++i) {
    struct stat st;
    if (sluice_stat(the_fs, NameOf(i).c_str(), &st) == 0) {
      m.exists[i] = true;
      m.size[i] = static_cast<uint64_t>(st.st_size);
    } else if (errno != ENOENT) {
      crash_env.Failed("crash_files writer: stat", sluice_errmsg());
    }
    dprintf(3, "s %d %lld\n", i,
            m.exists[i] ? static_cast<long long>(m.size[i]) : -1LL);
  }
  for (uint64_t n = 1;; ++n) {
    const Step step = PlanStep(seed, generation, n, m);
    dprintf(3, "b %llu\n", static_cast<unsigned long long>(n));
    int fd = -1;
    for (size_t k = 0; k < step.ops.size(); ++k) {
      const Op& op = step.ops[k];
      const std::string name = NameOf(op.name);
      bool durable = false;
      switch (op.kind) {
        case Op::kOpen:
          fd = sluice_open(the_fs, name.c_str(), op.flags, 0644);
          if (fd < 0) {
            crash_env.Failed("crash_files writer: open", sluice_errmsg());
          }
          break;
        case Op::kSeekEnd: {
          const off_t at = sluice_lseek(fd, 0, SEEK_END);
          if (at < 0) {
            crash_env.Failed("crash_files writer: lseek", sluice_errmsg());
          }
          if (static_cast<uint64_t>(at) != m.size[op.name]) {
            crash_env.Failed("crash_files writer: lseek",
                             name + " ends at " + std::to_string(at) +
                                 ", not " + std::to_string(m.size[op.name]));
          }
          break;
        }
        case Op::kWrite: {
          // In chunks, as an application writes a checkpoint or a log.
          const std::string data = Stream(seed, op.key, op.size);
          for (size_t done = 0; done < data.size();) {
            const size_t chunk = std::min<size_t>(
                data.size() - done, 1 + Mix(op.key + done) % op.chunk);
            const off_t at = static_cast<off_t>(m.size[op.name] + done);
            const ssize_t w =
                op.flags ? sluice_pwrite(fd, data.data() + done, chunk, at)
                         : sluice_write(fd, data.data() + done, chunk);
            if (w != static_cast<ssize_t>(chunk)) {
              crash_env.Failed("crash_files writer: write", sluice_errmsg());
            }
            done += chunk;
          }
          break;
        }
        case Op::kFsync:
          if (sluice_fsync(fd) != 0) {
            crash_env.Failed("crash_files writer: fsync", sluice_errmsg());
          }
          durable = true;
          break;
        case Op::kClose:
          if (sluice_close(fd) != 0) {
            crash_env.Failed("crash_files writer: close", sluice_errmsg());
          }
          fd = -1;
          durable = true;
          break;
        case Op::kTruncate:
          if (sluice_truncate(the_fs, name.c_str(),
                              static_cast<off_t>(op.size)) != 0) {
            crash_env.Failed("crash_files writer: truncate", sluice_errmsg());
          }
          break;
        case Op::kFTruncate:
          if (sluice_ftruncate(fd, static_cast<off_t>(op.size)) != 0) {
            crash_env.Failed("crash_files writer: ftruncate", sluice_errmsg());
          }
          break;
        case Op::kRename:
          if (sluice_rename(the_fs, name.c_str(), NameOf(op.to).c_str()) != 0) {
            crash_env.Failed("crash_files writer: rename", sluice_errmsg());
          }
          break;
      }
      Apply(seed, op, &m);
      if (durable) {
        dprintf(3, "d %llu %zu\n", static_cast<unsigned long long>(n), k);
      }
    }
    crash_env.Step();
  }
}

// Whether name `i` of `got` holds what it holds in `m`.
bool Same(const Model& m, const Model& got, int i) {
  return m.exists[i] == got.exists[i] &&
         (!m.exists[i] || m.data[i] == got.data[i]);
}

// Whether name `op.name` of `got` is as in the middle of write `op` on
// `m`: its bytes before the write, then a prefix of the written ones.
bool MidWrite(uint64_t seed, const Model& m, const Op& op, const Model& got) {
  const int x = op.name;
  if (!m.exists[x] || !got.exists[x]) return false;
  const std::string& g = got.data[x];
  const std::string& base = m.data[x];
  if (g.size() < base.size() || g.size() > base.size() + op.size) return false;
  if (g.compare(0, base.size(), base) != 0) return false;
  const size_t rest = g.size() - base.size();
  return g.compare(base.size(), rest, Stream(seed, op.key, rest)) == 0;
}

std::string Show(const Model& m, int i) {
  return m.exists[i] ? std::to_string(m.data[i].size()) + " bytes" : "missing";
}

// The writer's reports on one trial.
struct Reports {
  bool saw = false;            // "s" lines: what its mount found
  long long seen_size[kNames];
  uint64_t begun = 0;          // the last step begun
  uint64_t durable_step = 0;   // the last durable call (0: none)
  uint64_t durable_call = 0;
  uint64_t durable_points = 0;
};

Reports Parse(const std::string& text) {
  Reports r;
  std::fill(r.seen_size, r.seen_size + kNames, -2LL);
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    const char* line = text.c_str() + pos;
    int i;
    long long size;
    unsigned long long a, b;
    if (sscanf(line, "s %d %lld", &i, &size) == 2 && i >= 0 && i < kNames) {
      r.saw = true;
      r.seen_size[i] = size;
    } else if (sscanf(line, "b %llu", &a) == 1) {
      r.begun = a;
    } else if (sscanf(line, "d %llu %llu", &a, &b) == 2) {
      r.durable_step = a;
      r.durable_call = b;
      ++r.durable_points;
    }
    pos = nl + 1;
  }
  return r;
}

// Checks `got`, the root after the crash of the writer of `generation`,
// which began from `start` and reported `rep`: "" if it equals a state the
// file system was in between the last durable point and the crash, else
// what is wrong. `kinds` counts the steps begun by kind.
std::string Check(uint64_t seed, uint64_t generation, const Model& start,
                  const Reports& rep, const Model& got, uint64_t* kinds,
                  std::string* state) {
  if (rep.saw) {
    for (int i = 0; i < kNames; ++i) {
      const long long want =
          start.exists[i] ? static_cast<long long>(start.data[i].size()) : -1;
      if (rep.seen_size[i] != -2 && rep.seen_size[i] != want) {
        const std::string found =
            rep.seen_size[i] < 0
                ? std::string("missing")
                : std::to_string(rep.seen_size[i]) + " bytes";
        return "the writer found " + NameOf(i) + " " + found +
               ", the last check " + Show(start, i);
      }
    }
  }
  Model m = start;
  // The window's states, described, and for each name the states (and
  // writes) its bytes match, for the message.
  std::vector<std::string> window;
  std::vector<std::string> matches[kNames];
  bool match[kNames];
  bool checking = rep.durable_step == 0;
  bool accepted = false;
  Model durable;  // the state at the last durable point, for the message
  durable.contents = true;
  auto begin_window = [&](const std::string& what) {
    checking = true;
    durable = m;
    window.push_back(what);
    accepted = true;
    for (int i = 0; i < kNames; ++i) {
      match[i] = Same(m, got, i);
      if (match[i]) matches[i].push_back(what);
      accepted &= match[i];
    }
    if (accepted) *state = "";
  };
  if (checking) begin_window("the state it began from");
  for (uint64_t n = 1; n <= rep.begun; ++n) {
    const Step step = PlanStep(seed, generation, n, m);
    ++kinds[step.kind];
    for (size_t k = 0; k < step.ops.size(); ++k) {
      const Op& op = step.ops[k];
      if (accepted) {  // the rest only counts the steps: sizes will do
        m.contents = false;
        Apply(seed, op, &m);
        continue;
      }
      const std::string at = "step " + std::to_string(n) + " (" +
                             kKindNames[step.kind] + ") call " +
                             std::to_string(k) + " (" + Describe(op) + ")";
      if (checking && op.kind == Op::kWrite && MidWrite(seed, m, op, got)) {
        matches[op.name].push_back("during " + at);
        bool others = true;
        for (int i = 0; i < kNames; ++i) others &= i == op.name || match[i];
        if (others) {
          accepted = true;
          *state = "during " + at;
        }
      }
      Apply(seed, op, &m);
      if (!checking) {
        if (n == rep.durable_step && k == rep.durable_call) {
          begin_window("after " + at + ", durable");
        }
        continue;
      }
      if (op.kind == Op::kOpen || op.kind == Op::kWrite ||
          op.kind == Op::kTruncate || op.kind == Op::kFTruncate ||
          op.kind == Op::kRename) {
        window.push_back("after " + at);
        for (int i : {op.name, op.kind == Op::kRename ? op.to : op.name}) {
          match[i] = Same(m, got, i);
          if (match[i]) matches[i].push_back("after " + at);
        }
        bool all = true;
        for (int i = 0; i < kNames; ++i) all &= match[i];
        if (all) {
          accepted = true;
          *state = "after " + at;
        }
      }
    }
  }
  if (accepted) return "";
  if (!checking) {
    return "the durable point reported (step " +
           std::to_string(rep.durable_step) + " call " +
           std::to_string(rep.durable_call) + ") is not in " +
           std::to_string(rep.begun) + " steps begun";
  }
  std::string why = "no state between the last durable point and the crash "
                    "holds what the root holds (" +
                    std::to_string(window.size()) + " states from " +
                    window.front() + " to " + window.back() + ")";
  for (int i = 0; i < kNames; ++i) {
    why += "; " + NameOf(i) + ": " + Show(got, i) + ", at the durable point " +
           Show(durable, i);
    if (got.exists[i] && durable.exists[i] && got.data[i] != durable.data[i] &&
        got.data[i].size() < durable.data[i].size() &&
        durable.data[i].compare(0, got.data[i].size(), got.data[i]) == 0) {
      why += " (a prefix of it)";
    }
    if (matches[i].empty()) {
      why += ", as in no state";
    } else {
      why += ", as " + matches[i].front();
      if (matches[i].size() > 1) {
        why += " and " + std::to_string(matches[i].size() - 1) + " more";
      }
    }
  }
  return why;
}

// Reads the root as a reader: every name's bytes, and whether the root
// lists any other name. "" or what failed. `unborn`: nothing was ever
// made durable in this root, so it may hold no file system yet (a store
// whose creation was cut short mounts with no "/").
std::string ReadRoot(bool unborn, Model* got) {
  std::vector<char> buf(1 << 20);
  for (int i = 0; i < kNames; ++i) {
    const std::string name = NameOf(i);
    got->exists[i] = false;
    got->data[i].clear();
    const int fd = sluice_open(the_fs, name.c_str(), O_RDONLY);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      return name + ": open: " + sluice_errmsg();
    }
    got->exists[i] = true;
    ssize_t n;
    while ((n = sluice_read(fd, buf.data(), buf.size())) > 0) {
      got->data[i].append(buf.data(), static_cast<size_t>(n));
    }
    if (n < 0) {
      const std::string e = sluice_errmsg();
      sluice_close(fd);
      return name + ": read: " + e;
    }
    if (sluice_close(fd) != 0) return name + ": close: " + sluice_errmsg();
    got->size[i] = got->data[i].size();
  }
  sluice_dir_t* dir = sluice_opendir(the_fs, "/");
  if (dir == nullptr) {
    bool none = unborn && errno == ENOENT;
    for (int i = 0; i < kNames; ++i) none &= !got->exists[i];
    return none ? "" : std::string("/: opendir: ") + sluice_errmsg();
  }
  bool listed[kNames] = {};
  std::string other;
  errno = 0;
  while (struct dirent* e = sluice_readdir(dir)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    int i = 0;
    while (i < kNames && "/" + n != NameOf(i)) ++i;
    if (i < kNames) {
      listed[i] = true;
    } else if (other.empty()) {
      other = "the root lists " + n + ", a name the writer never made";
    }
  }
  const int err = errno;
  sluice_closedir(dir);
  if (err != 0) return "/: readdir: " + std::string(strerror(err));
  for (int i = 0; i < kNames && other.empty(); ++i) {
    if (listed[i] != got->exists[i]) {
      other = NameOf(i) + (listed[i] ? " is listed but does not open"
                                     : " opens but is not listed");
    }
  }
  return other;
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
  // What the last check read: the state the next writer begins from.
  Model start;
  start.contents = true;
  uint64_t failures = 0, durable_points = 0, steps = 0;
  uint64_t past = 0, mid = 0;  // trials that found a later state, a write's
  uint64_t kinds[5] = {};
  uint64_t durable_before_root = 0;  // durable points before this root
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
      durable_before_root = durable_points;
      start = Model();
      start.contents = true;
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
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
    close(fds[0]);
    const Reports rep = Parse(text);
    durable_points += rep.durable_points;
    steps += rep.begun;
    std::string failure;
    int code = 0;
    if (!sluice::crash::ExpectedEnd(status, &code) || (alone && code == 0)) {
      failure = "the writer ended by itself (status " + std::to_string(status) + ")";
    } else if (code != 0) {
      ++ends[code - sluice::crash::kPowerLost];
    }
    Model got;
    got.contents = true;
    // A crash before anything was ever made durable may leave no file
    // system at all, which is right: then every name is missing.
    bool anything = durable_points > durable_before_root;
    for (int i = 0; i < kNames; ++i) anything |= start.exists[i];
    const bool mounted = failure.empty() &&
                         (anything || sluice::crash::HasWriterStores(root));
    if (mounted && Mount(root, opts, SLUICE_READER) != 0) {
      failure = std::string("the root does not mount: ") + sluice_errmsg();
    } else if (mounted) {
      failure = ReadRoot(!anything, &got);
    }
    std::string state;
    if (failure.empty()) {
      failure = Check(seed, t, start, rep, got, kinds, &state);
    }
    if (failure.empty() && !state.empty()) {
      ++past;
      mid += state.compare(0, 7, "during ") == 0;
    }
    if (failure.empty() && getenv("SLUICE_CRASH_VERBOSE") != nullptr) {
      printf("crash_files: trial %llu: %llu steps begun, %s\n",
             static_cast<unsigned long long>(t),
             static_cast<unsigned long long>(rep.begun),
             state.empty() ? "the last durable state" : state.c_str());
    }
    if (mounted) sluice_unmount(the_fs);
    the_fs = nullptr;
    if (!failure.empty()) {
      ++failures;
      fprintf(stderr, "crash_files: FAILED trial %llu (seed %llu, killed after "
                      "%.1f ms, %llu steps begun): %s\n",
              static_cast<unsigned long long>(t),
              static_cast<unsigned long long>(seed), delay,
              static_cast<unsigned long long>(rep.begun), failure.c_str());
      const std::string keep = root + ".failed-" + std::to_string(t);
      if (system(("rm -rf '" + keep + "' && cp -a '" + root + "' '" + keep + "'").c_str()) != 0) {
        fprintf(stderr, "crash_files: cannot keep the root\n");
      }
      break;  // what is committed is no longer known
    }
    start = std::move(got);
  }
  printf("crash_files: %llu trials (%s: %llu power losses, %llu faults "
         "injected, %llu of them reported as errors), %llu steps begun "
         "(%llu rewrites, %llu appends, %llu truncates, %llu replaces, "
         "%llu moves), %llu fsyncs and closes reported, %llu trials found "
         "a state after the last of them (%llu in the middle of a write); "
         "%llu failed\n",
         static_cast<unsigned long long>(trials), sluice::crash::ModeName(mode),
         static_cast<unsigned long long>(ends[0]),
         static_cast<unsigned long long>(ends[1] + ends[2]),
         static_cast<unsigned long long>(ends[1]),
         static_cast<unsigned long long>(steps),
         static_cast<unsigned long long>(kinds[0]),
         static_cast<unsigned long long>(kinds[1]),
         static_cast<unsigned long long>(kinds[2]),
         static_cast<unsigned long long>(kinds[3]),
         static_cast<unsigned long long>(kinds[4]),
         static_cast<unsigned long long>(durable_points),
         static_cast<unsigned long long>(past),
         static_cast<unsigned long long>(mid),
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
