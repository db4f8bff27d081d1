#include "ior/report_ior.h"

#include <algorithm>
#include <vector>

#include "ior/format.h"

namespace sluice {
namespace bench {

namespace {

// A JSON object written member by member.
class Members {
 public:
  explicit Members(const std::string& indent) : indent_(indent) {}
  Members& Raw(const std::string& key, const std::string& json) {
    items_.push_back(JsonString(key) + ": " + json);
    return *this;
  }
  Members& Str(const std::string& key, const std::string& v) {
    return Raw(key, JsonString(v));
  }
  Members& Int(const std::string& key, uint64_t v) {
    return Raw(key, std::to_string(v));
  }
  Members& Num(const std::string& key, double v) {
    return Raw(key, JsonNumber(v));
  }
  // As members, one per line, each followed by ",\n".
  std::string Lines() const {
    std::string out;
    for (const auto& i : items_) out += indent_ + i + ",\n";
    return out;
  }
  // As an object on one line.
  std::string Object() const {
    std::string out = "{";
    for (size_t i = 0; i < items_.size(); ++i) {
      out += (i ? ", " : "") + items_[i];
    }
    return out + "}";
  }

 private:
  std::string indent_;
  std::vector<std::string> items_;
};

// The sizes a test ran with: fio's own for DEVICE-LIMIT, else -b/-t/-s.
struct Shape {
  uint64_t block, transfer, segments, bytes;
};

Shape ShapeOf(const Report& r, const TestResult& t) {
  const Params& p = r.params;
  if (t.iters.empty()) {
    return {p.block, p.transfer, p.segments,
            p.block * p.segments * uint64_t(r.tasks)};
  }
  const IterResult& i = t.iters.front();
  return {i.Block(p), i.Transfer(p), i.Segments(p), i.bytes};
}

std::string Parameters(const Report& r, size_t ti, const Shape& s) {
  const Params& p = r.params;
  Members m("");
  m.Int("testID", ti)
      .Int("refnum", 0)
      .Str("api", r.tests[ti].api)
      .Str("testFileName", p.path)
      .Int("nodes", r.nodes)
      .Int("tasksPerNode", r.tasks_per_node)
      .Int("repetitions", p.reps)
      .Int("fsync", p.fsync)
      .Int("readFile", p.read)
      .Int("writeFile", p.write)
      .Int("filePerProc", p.file_per_proc)
      .Int("reorderTasks", p.reorder)
      .Int("reorderTasksRandom", 0)
      .Int("reorderTasksRandomSeed", 0)
      .Int("randomOffset", p.random)
      .Int("checkWrite", p.check_write)
      .Int("checkRead", p.check_read)
      .Int("keepFile", p.keep)
      .Int("verbose", p.verbose)
      .Int("setTimeStampSignature/incompressibleSeed", p.seed)
      .Int("collective", p.collective)
      .Int("segmentCount", s.segments)
      .Int("transferSize", s.transfer)
      .Int("blockSize", s.block);
  return m.Object();
}

std::string Options(const Report& r, size_t ti, const Shape& s) {
  const Params& p = r.params;
  Members m("");
  m.Str("api", r.tests[ti].api)
      .Str("test filename", p.path)
      .Str("access",
           p.file_per_proc ? "file-per-process" : "single-shared-file")
      .Str("type", p.collective ? "collective" : "independent")
      .Int("segments", s.segments)
      .Str("ordering in a file", p.random ? "random" : "sequential")
      .Str("ordering inter file",
           p.reorder ? "constant task offset" : "no tasks offsets");
  if (p.reorder) m.Int("task offset", p.reorder_shift);
  m.Int("nodes", r.nodes)
      .Int("tasks", r.tasks)
      .Int("clients per node", r.tasks_per_node)
      .Int("repetitions", p.reps)
      .Str("xfersize", IorHumanSize(s.transfer))
      .Str("blocksize", IorHumanSize(s.block))
      .Str("aggregate filesize", IorHumanSize(s.bytes));
  return m.Object();
}

std::string Results(const Report& r, const TestResult& t,
                    const std::string& indent) {
  const Params& p = r.params;
  std::string out = "[";
  for (size_t i = 0; i < t.iters.size(); ++i) {
    const IterResult& it = t.iters[i];
    Members m("");
    m.Str("access", it.access)
        .Num("bwMiB", it.BandwidthMiB())
        .Num("blockKiB", it.Block(p) / 1024.0)
        .Num("xferKiB", it.Transfer(p) / 1024.0)
        .Num("iops", it.Iops())
        .Num("latency", it.latency)
        .Num("openTime", it.open)
        .Num("wrRdTime", it.io)
        .Num("closeTime", it.close)
        .Num("totalTime", it.total);
    out += std::string(i ? "," : "") + "\n" + indent + "  " + m.Object();
  }
  return out + (t.iters.empty() ? "]" : "\n" + indent + "]");
}

// IOR's short summary: the best repetition of each operation.
std::string Max(const TestResult& t) {
  Members m("");
  for (const char* op : {"write", "read"}) {
    double best = -1;
    for (const auto& it : t.iters) {
      if (it.access == op) best = std::max(best, it.BandwidthMiB());
    }
    if (best < 0) continue;
    m.Num(std::string(op) + "MiB", best);
    m.Num(std::string(op) + "MB", best * 1048576.0 / 1e6);
  }
  return m.Object();
}

}  // namespace

std::string IorHumanSize(uint64_t b) {
  const struct {
    uint64_t unit;
    const char* name;
  } units[] = {{1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}};
  for (const auto& u : units) {
    if (b < u.unit) continue;
    if (b % u.unit == 0) {
      return Fmt("%llu %s", (unsigned long long)(b / u.unit), u.name);
    }
    return Fmt("%.2f %s", double(b) / u.unit, u.name);
  }
  return Fmt("%llu bytes", (unsigned long long)b);
}

std::string IorHeaderMembers(const Report& r, const std::string& indent) {
  return Members(indent)
      .Str("Began", r.began)
      .Str("Command line", r.params.command_line)
      .Str("Machine", r.machine)
      .Str("Finished", r.finished)
      .Lines();
}

std::string IorTestMembers(const Report& r, size_t ti,
                           const std::string& indent) {
  const TestResult& t = r.tests[ti];
  const Shape s = ShapeOf(r, t);
  return Members(indent)
      .Int("TestID", ti)
      .Str("StartTime", t.started)
      .Str("Path", r.params.path)
      .Raw("Parameters", Parameters(r, ti, s))
      .Raw("Options", Options(r, ti, s))
      .Raw("Results", Results(r, t, indent))
      .Raw("max", Max(t))
      .Lines();
}

std::string IorSummaryMember(const Report& r, const std::string& indent) {
  const Params& p = r.params;
  std::string out = indent + "\"summary\": [";
  bool first = true;
  for (size_t ti = 0; ti < r.tests.size(); ++ti) {
    const TestResult& t = r.tests[ti];
    if (!t.skipped.empty()) continue;
    for (const OpSummary& s : t.summary) {
      Members m("");
      m.Str("operation", s.operation)
          .Str("API", t.api)
          .Int("TestID", ti)
          .Int("ReferenceNumber", 0)
          .Int("segmentCount", s.segments)
          .Int("blockSize", s.block)
          .Int("transferSize", s.transfer)
          .Int("numTasks", r.tasks)
          .Int("tasksPerNode", r.tasks_per_node)
          .Int("repetitions", p.reps)
          .Int("filePerProc", p.file_per_proc)
          .Int("reorderTasks", p.reorder)
          .Int("taskPerNodeOffset", p.reorder_shift)
          .Int("reorderTasksRandom", 0)
          .Int("reorderTasksRandomSeed", 0)
          .Num("bwMaxMIB", s.max_mib)
          .Num("bwMinMIB", s.min_mib)
          .Num("bwMeanMIB", s.mean_mib)
          .Num("bwStdMIB", s.stddev_mib)
          .Num("OPsMax", s.ior_max_ops)
          .Num("OPsMin", s.ior_min_ops)
          .Num("OPsMean", s.ior_mean_ops)
          .Num("OPsSD", s.ior_sd_ops)
          .Num("MeanTime", s.mean_time)
          .Num("xsizeMiB", s.bytes / 1048576.0)
          .Raw("fractionOfDeviceLimit",
               JsonOrNull(s.fraction_of_device >= 0, s.fraction_of_device))
          .Raw("fractionOfFioSync",
               JsonOrNull(s.fraction_of_fio_sync >= 0, s.fraction_of_fio_sync));
      out += std::string(first ? "" : ",") + "\n" + indent + "  " + m.Object();
      first = false;
    }
  }
  return out + (first ? "]" : "\n" + indent + "]");
}

}  // namespace bench
}  // namespace sluice
