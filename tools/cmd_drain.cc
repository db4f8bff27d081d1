// `sluice drain`: what a job script runs at the end of a job (DataWarp's
// stage-out): the committed ids of a data root's contexts drained to the
// next data root, the drains a killed job left finished from their
// journals; `--status` shows where each id stands (drain_status.cc).
// The drain itself is the library's (tier/status.h, over tier/drain.h):
// the same containers, journals and publication a job's drain makes.
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "commands.h"
#include "drain_targets.h"
#include "sluice/options.h"
#include "tier/status.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

extern const char kDrainHelp[] =
    "sluice drain [--to DIR] [--context NAME] [--aggregation n_n|n_m|n_1]\n"
    "             [--group N] [--bandwidth SIZE] [--config FILE] [--json]\n"
    "             ROOT\n"
    "       sluice drain --status [--to DIR] [--context NAME] [--config FILE]\n"
    "             [--json] ROOT\n"
    "Drains every committed id of the contexts in data root ROOT (each\n"
    "subdirectory holding commit/; or ROOT is one context directory) to\n"
    "the next data root: what a job script runs at the end of a job. An\n"
    "id already durable there is left as it is; a drain a killed job left\n"
    "resumes from its journals (bytes resumed, not copied again). Each\n"
    "flush is fsynced, read back and checked before it is journaled, and\n"
    "an id becomes visible on the destination only once whole (its index\n"
    "published last): a drain killed at any moment loses nothing and\n"
    "shows nothing partial. The stores of ROOT are opened read-only, so a\n"
    "job may be running on them (its writers that drain now are left to\n"
    "it; a writer drained here while the job would drain it too is left\n"
    "to this drain, and the job's drain state of the id says draining\n"
    "until this drain publishes it, durable after).\n"
    "The destination is the data root DIR (--to, an existing directory;\n"
    "the context's directory DIR/NAME is made in it), else the entry\n"
    "after ROOT in data_roots\n"
    "(SLUICE_DATA_ROOTS, or the configuration file: --config FILE or\n"
    "SLUICE_CONFIG_FILE, section [context:NAME]).\n"
    "Prints one line per id: where it went, bytes written and resumed,\n"
    "and whether it is now durable there. An id is durable once every\n"
    "writer's share is drained: writers that are busy (another process\n"
    "drains them now, as a job still running does) or absent (their\n"
    "store is not under ROOT: it is on another node's local root, so\n"
    "`sluice drain` must run on each node; the last one publishes the\n"
    "id) leave it not yet durable, which is no error. Progress goes to\n"
    "stderr every few seconds.\n"
    "--aggregation, --group: the containers of an id whose drain begins\n"
    "here (n_n a file per rank, n_m per node or per N ranks, n_1 one;\n"
    "default: aggregation and aggregation_group of the configuration); a\n"
    "drain already begun keeps its own. --bandwidth SIZE: bytes per\n"
    "second written at most (k, m, g; 0 none; default drain_bandwidth).\n"
    "--status changes nothing: for every id committed on ROOT or drained\n"
    "to the destination, where it is (source only; draining, with each\n"
    "writer's bytes durable of its total as its journal says now, done\n"
    "or not, and the process of this machine draining it now; durable\n"
    "on the destination; only on the destination).\n"
    "--json prints one JSON object instead. Exit status: 0 when every id\n"
    "reached is drained or durable, 1 when one failed (its error names\n"
    "it), 2 for bad usage (no destination known: pass --to).\n";

namespace {

std::string IdLabel(const DrainTarget& t, const tier::IdName& n) {
  return t.name + " " + n.dataset + "." + std::to_string(n.id);
}

std::string List(const std::vector<int>& v) {
  std::string out;
  for (int w : v) out += (out.empty() ? "" : ",") + std::to_string(w);
  return out;
}

std::string JsonInts(const std::vector<int>& v) { return "[" + List(v) + "]"; }

// A line of progress on stderr every few seconds while an id drains.
class ProgressPrinter {
 public:
  ProgressPrinter() : thread_([this] { Run(); }) {}
  ~ProgressPrinter() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // The id now draining, and its counters (DrainOptions).
  void Begin(const std::string& label) {
    std::lock_guard<std::mutex> lock(mu_);
    label_ = label;
    done_ = 0;
    total_ = 0;
    last_bytes_ = 0;
    last_ = Clock::now();
    active_ = true;
  }
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = false;
  }
  std::atomic<uint64_t>* done() { return &done_; }
  std::atomic<uint64_t>* total() { return &total_; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kEvery = std::chrono::seconds(2);
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(250));
      const auto now = Clock::now();
      if (stop_ || !active_ || now - last_ < kEvery) continue;
      const uint64_t done = done_.load(), total = total_.load();
      const double secs = std::chrono::duration<double>(now - last_).count();
      const double rate = (done - std::min(done, last_bytes_)) / secs;
      fprintf(stderr,
              "sluice drain: %s: %.1f of %.1f MiB durable (%.0f%%), "
              "%.1f MiB/s\n",
              Printable(label_).c_str(), done / 1048576.0, total / 1048576.0,
              total ? 100.0 * done / total : 0.0, rate / 1048576.0);
      last_ = now;
      last_bytes_ = done;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;    // GUARDED_BY(mu_)
  bool active_ = false;  // GUARDED_BY(mu_)
  std::string label_;    // GUARDED_BY(mu_)
  Clock::time_point last_;   // GUARDED_BY(mu_)
  uint64_t last_bytes_ = 0;         // GUARDED_BY(mu_)
  std::atomic<uint64_t> done_{0}, total_{0};
  std::thread thread_;
};

// What became of one id.
struct Outcome {
  tier::IdName name;
  bool already = false;  // durable before this run
  tier::DrainResult result;
  Status error;
  bool removed = false;  // its record went while it drained (keep_last, rm)
  // A store its job holds that cannot be read beside it (LevelDB): why.
  std::string held;
};

Status ParseAggregationFlag(const std::string& v, tier::Aggregation* out) {
  if (v == "n_n") {
    *out = tier::Aggregation::kNN;
  } else if (v == "n_m") {
    *out = tier::Aggregation::kNM;
  } else if (v == "n_1") {
    *out = tier::Aggregation::kN1;
  } else {
    return Status::InvalidArgument(
        "aggregation must be n_n, n_m or n_1, not '" + v + "'");
  }
  return Status::OK();
}

const char* AggregationText(tier::Aggregation a) {
  switch (a) {
    case tier::Aggregation::kNN:
      return "n_n";
    case tier::Aggregation::kNM:
      return "n_m";
    case tier::Aggregation::kN1:
      return "n_1";
  }
  return "?";
}

// The drain options of dataset `dataset` of target `t`: the flags, else
// the configuration.
Status OptionsFor(const Args& a, const DrainTarget& t,
                  const std::string& dataset, tier::DrainOptions* o) {
  auto flag = [&](const char* f) -> const std::string* {
    auto it = a.flags.find(f);
    return it == a.flags.end() ? nullptr : &it->second;
  };
  const std::string* agg = flag("--aggregation");
  Status s = ParseAggregationFlag(
      agg ? *agg : t.config.Get("aggregation", dataset).value, &o->aggregation);
  const std::string* group = flag("--group");
  const std::string gv =
      group ? *group : t.config.Get("aggregation_group", dataset).value;
  char* end = nullptr;
  errno = 0;
  const long g = strtol(gv.c_str(), &end, 10);
  if (s.ok() && (gv.empty() || *end != '\0' || errno != 0 || g < 0 ||
                 g > INT_MAX)) {
    s = Status::InvalidArgument("the group must be a number >= 0, not '" + gv +
                                "'");
  }
  o->group = static_cast<int>(g);
  const std::string* bw = flag("--bandwidth");
  size_t bytes = 0;
  if (s.ok()) {
    s = ParseSize(bw ? *bw : t.config.Get("drain_bandwidth").value, &bytes);
  }
  o->bandwidth = bytes;
  return s;
}

void PrintText(const DrainTarget& t, const Outcome& o) {
  const std::string label = IdLabel(t, o.name);
  if (!o.error.ok()) return;  // on stderr
  if (o.removed) {
    printf("%s: removed from %s while it drained (keep_last or rm): not "
           "drained\n",
           Printable(label).c_str(), Printable(t.src).c_str());
    return;
  }
  if (o.already) {
    printf("%s: durable on %s (drained before)\n", Printable(label).c_str(),
           Printable(t.dst).c_str());
    return;
  }
  if (!o.held.empty()) {
    printf("%s: not drained: a store is held by a running job that this "
           "process cannot read beside it: %s\n",
           Printable(label).c_str(), Printable(o.held, false).c_str());
    return;
  }
  const tier::DrainResult& r = o.result;
  printf("%s: %s %s: %llu bytes written, %llu resumed, of %llu (%s)",
         Printable(label).c_str(),
         r.durable ? "durable on" : "not yet durable on",
         Printable(t.dst).c_str(), (unsigned long long)r.written,
         (unsigned long long)r.resumed, (unsigned long long)r.total,
         AggregationText(r.aggregation));
  if (!r.busy.empty()) {
    printf("; writers %s busy: another process drains them now (a job "
           "still running?)",
           List(r.busy).c_str());
  }
  if (!r.absent.empty()) {
    printf("; writers %s absent: their stores are not in %s (another "
           "node's local root: run sluice drain on each node)",
           List(r.absent).c_str(), Printable(t.src).c_str());
  }
  printf("\n");
}

void PrintJson(const DrainTarget& t, const Outcome& o, bool first) {
  const tier::DrainResult& r = o.result;
  printf("%s\n  {\"context\": %s, \"dataset\": %s, \"id\": %lld, "
         "\"source\": %s, \"destination\": %s, \"durable\": %s, "
         "\"already_durable\": %s, \"published\": %s, \"removed\": %s, "
         "\"aggregation\": %s, \"bytes_total\": %llu, \"bytes_written\": "
         "%llu, \"bytes_resumed\": %llu, \"drained\": %s, \"busy\": %s, "
         "\"absent\": %s, \"held\": %s, \"error\": %s}",
         first ? "" : ",", Json(t.name).c_str(), Json(o.name.dataset).c_str(),
         (long long)o.name.id, Json(t.src).c_str(), Json(t.dst).c_str(),
         o.error.ok() && (o.already || r.durable) ? "true" : "false",
         o.already ? "true" : "false", r.published ? "true" : "false",
         o.removed ? "true" : "false",
         o.already || !o.error.ok() || !o.held.empty() || o.removed
             ? "null"
             : ("\"" + std::string(AggregationText(r.aggregation)) + "\"")
                   .c_str(),
         (unsigned long long)r.total, (unsigned long long)r.written,
         (unsigned long long)r.resumed, JsonInts(r.drained).c_str(),
         JsonInts(r.busy).c_str(), JsonInts(r.absent).c_str(),
         o.held.empty() ? "null" : Json(o.held).c_str(),
         o.error.ok() ? "null" : Json(o.error.ToString()).c_str());
}

// Drains every committed id of `t` not yet durable on its destination.
void DrainTargetIds(const Args& a, const DrainTarget& t,
                    ProgressPrinter* progress, std::vector<Outcome>* out) {
  std::vector<tier::IdName> ids;
  Status s = tier::ListCommitted(t.src, &ids);
  if (!s.ok()) {
    Outcome o;
    o.error = s;
    out->push_back(o);
    return;
  }
  FsOptions fs;
  s = t.config.ToFsOptions(&fs);
  tier::SourceDrainer drainer(t.src, t.dst, fs.store);
  for (const auto& n : ids) {
    Outcome o;
    o.name = n;
    const std::string what = "context " + t.name + " dataset " + n.dataset +
                             " id " + std::to_string(n.id);
    bool durable = false;
    Status r = s;
    if (r.ok()) r = drainer.Durable(n.dataset, n.id, &durable);
    if (r.ok() && durable) {
      o.already = true;
    } else if (r.ok()) {
      tier::DrainOptions opt;
      r = OptionsFor(a, t, n.dataset, &opt);
      opt.bytes_done = progress->done();
      opt.bytes_total = progress->total();
      if (r.ok()) {
        progress->Begin(IdLabel(t, n));
        r = drainer.Drain(n.dataset, n.id, opt, &o.result);
        progress->End();
      }
      if (!r.ok() && !tier::HasIndex(t.dst, n.dataset, n.id)) {
        // Gone from the source meanwhile: nothing to drain.
        std::vector<tier::IdName> now;
        if (tier::ListCommitted(t.src, &now).ok() &&
            std::find(now.begin(), now.end(), n) == now.end()) {
          o.removed = true;
          r = Status::OK();
        }
      }
      if (r.IsBusy()) {
        // A store its job holds and that cannot be read beside it.
        o.held = r.message();
        r = Status::OK();
      }
    }
    if (!r.ok()) {
      o.error = Status(r.code(), what + ": " + r.message());
    }
    out->push_back(o);
  }
}

}  // namespace

int Drain(int argc, char** argv) {
  Args a = ParseArgs("drain", argc, argv,
                     " --to --context --aggregation --group --bandwidth "
                     "--config ",
                     " --status --json ");
  if (a.pos.size() != 1) Usage("drain", "need one ROOT");
  const bool json = a.flags.count("--json") > 0;
  if (a.flags.count("--status")) {
    for (const char* f : {"--aggregation", "--group", "--bandwidth"}) {
      if (a.flags.count(f)) {
        Usage("drain", std::string(f) + " is for a drain, not --status");
      }
    }
  }
  // The flags' values, checked before anything is done.
  if (a.flags.count("--aggregation")) {
    tier::Aggregation agg;
    Status s = ParseAggregationFlag(a.flags["--aggregation"], &agg);
    if (!s.ok()) Usage("drain", "--aggregation: " + s.message());
  }
  if (a.flags.count("--group")) {
    const std::string& v = a.flags["--group"];
    char* end = nullptr;
    errno = 0;
    const long g = strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || g < 0 || g > INT_MAX) {
      Usage("drain", "--group must be a number >= 0, not '" + v + "'");
    }
  }
  if (a.flags.count("--bandwidth")) {
    size_t bw = 0;
    Status s = ParseSize(a.flags["--bandwidth"], &bw);
    if (!s.ok()) Usage("drain", "--bandwidth: " + s.message());
  }
  std::vector<DrainTarget> targets;
  Status s = FindTargets("drain", a, &targets);
  if (!s.ok()) return Fail("drain", s);
  if (a.flags.count("--status")) return DrainStatusCmd(targets, json);

  std::vector<std::pair<const DrainTarget*, std::vector<Outcome>>> all;
  {
    ProgressPrinter progress;
    for (const DrainTarget& t : targets) {
      all.push_back({&t, {}});
      DrainTargetIds(a, t, &progress, &all.back().second);
    }
  }
  int durable = 0, pending = 0, failed = 0;
  if (json) printf("{\"ids\": [");
  bool first = true;
  for (const auto& [t, outcomes] : all) {
    for (const Outcome& o : outcomes) {
      if (!o.error.ok()) {
        ++failed;
        Fail("drain", o.error);
      } else if (o.already || o.result.durable) {
        ++durable;
      } else if (!o.removed) {
        ++pending;
      }
      if (json) {
        if (o.name.dataset.empty()) continue;  // the listing failed
        PrintJson(*t, o, first);
        first = false;
      } else {
        PrintText(*t, o);
      }
    }
  }
  if (json) {
    printf("\n], \"durable\": %d, \"not_durable\": %d, \"failed\": %d}\n",
           durable, pending, failed);
  } else {
    printf("%d id(s) durable on the destination, %d not yet, %d failed\n",
           durable, pending, failed);
  }
  if (fflush(stdout) != 0) return 1;
  return failed ? 1 : 0;
}

}  // namespace tool
}  // namespace sluice
