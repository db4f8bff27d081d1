#include "ior/report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ior/format.h"
#include "ior/report_ior.h"

namespace sluice {
namespace bench {

namespace {

std::string Access(const Params& p) {
  return p.file_per_proc ? "file-per-process" : "single-shared-file";
}

std::string OrDash(bool known, const char* fmt, double v) {
  return known ? Fmt(fmt, v) : std::string("-");
}

void SummariseTiers(const std::vector<const IterResult*>& rs, OpSummary* s) {
  int n = 0;
  double waited = 0, durable = 0, waited_mib = 0, durable_mib = 0;
  for (const auto* r : rs) {
    if (!r->Tiered()) continue;
    ++n;
    waited += r->waited;
    durable += r->durable;
    waited_mib += r->WaitedMiB();
    durable_mib += r->DurableMiB();
  }
  if (n == 0) return;
  s->mean_waited = waited / n;
  s->mean_durable = durable / n;
  s->mean_waited_mib = waited_mib / n;
  s->mean_durable_mib = durable_mib / n;
}

// IOR's OPs of a repetition: transfers over its total time.
void SummariseIorOps(const std::vector<const IterResult*>& rs, OpSummary* s) {
  std::vector<double> ops;
  for (const auto* r : rs) {
    ops.push_back(r->total > 0 ? r->transfers / r->total : 0);
  }
  s->ior_max_ops = *std::max_element(ops.begin(), ops.end());
  s->ior_min_ops = *std::min_element(ops.begin(), ops.end());
  for (double o : ops) s->ior_mean_ops += o / ops.size();
  double var = 0;
  for (double o : ops) {
    var += (o - s->ior_mean_ops) * (o - s->ior_mean_ops) / ops.size();
  }
  s->ior_sd_ops = std::sqrt(var);
}

}  // namespace

void Summarise(Report* report) {
  // op -> mean MiB/s of the references
  std::map<std::string, double> device, fio_sync;
  for (auto& t : report->tests) {
    t.summary.clear();
    for (const char* op : {"write", "read"}) {
      std::vector<const IterResult*> rs;
      for (const auto& r : t.iters) {
        if (r.access == op) rs.push_back(&r);
      }
      if (rs.empty()) continue;
      OpSummary s;
      s.operation = op;
      s.block = rs[0]->Block(report->params);
      s.transfer = rs[0]->Transfer(report->params);
      s.segments = rs[0]->Segments(report->params);
      s.bytes = rs[0]->bytes;
      s.max_mib = s.max_ops = -1;
      s.min_mib = s.min_ops = 1e300;
      for (const auto* r : rs) {
        const double bw = r->BandwidthMiB(), ops = r->Iops();
        s.max_mib = std::max(s.max_mib, bw);
        s.min_mib = std::min(s.min_mib, bw);
        s.mean_mib += bw / rs.size();
        s.max_ops = std::max(s.max_ops, ops);
        s.min_ops = std::min(s.min_ops, ops);
        s.mean_ops += ops / rs.size();
        s.mean_time += r->total / rs.size();
        s.mean_open += r->open / rs.size();
        s.mean_io += r->io / rs.size();
        s.mean_close += r->close / rs.size();
      }
      for (const auto* r : rs) {
        const double d = r->BandwidthMiB() - s.mean_mib;
        s.stddev_mib += d * d / rs.size();
      }
      SummariseIorOps(rs, &s);
      SummariseTiers(rs, &s);
      s.stddev_mib = std::sqrt(s.stddev_mib);
      if (t.skipped.empty() && t.api == "DEVICE-LIMIT") {
        device.emplace(op, s.mean_mib);
      } else if (t.skipped.empty() && t.api == "FIO-SYNC") {
        fio_sync.emplace(op, s.mean_mib);
      }
      t.summary.push_back(s);
    }
  }
  for (auto& t : report->tests) {
    for (auto& s : t.summary) {
      const auto d = device.find(s.operation);
      const auto f = fio_sync.find(s.operation);
      if (t.api != "DEVICE-LIMIT" && d != device.end() && d->second > 0) {
        s.fraction_of_device = s.mean_mib / d->second;
      }
      if (t.api != "DEVICE-LIMIT" && t.api != "FIO-SYNC" &&
          f != fio_sync.end() && f->second > 0) {
        s.fraction_of_fio_sync = s.mean_mib / f->second;
      }
    }
  }
}

std::string TextHeader(const Report& r) {
  const Params& p = r.params;
  std::string out;
  out += "sluice-bench: IOR-style checkpoint I/O benchmark\n";
  out += "Began               : " + r.began + "\n";
  out += "Command line        : " + p.command_line + "\n";
  out += "Machine             : " + r.machine + "\n";
  out += "Options: \n";
  std::string apis;
  for (const auto& a : p.apis) apis += (apis.empty() ? "" : ",") + a;
  out += "api                 : " + apis + "\n";
  out += "test filename       : " + p.path + "\n";
  out += "access              : " + Access(p) + "\n";
  out += "type                : " +
         std::string(p.collective ? "collective" : "independent") + "\n";
  out += Fmt("segments            : %llu\n", (unsigned long long)p.segments);
  out += "ordering in a file  : " +
         std::string(p.random ? "random within each block" : "sequential") + "\n";
  out += "ordering inter file : " +
         (p.reorder ? Fmt("constant task offset (-C), shift %d", p.reorder_shift)
                    : std::string("no tasks offsets")) + "\n";
  out += Fmt("tasks               : %d\n", r.tasks);
  out += "xfersize            : " + HumanSize(p.transfer) + "\n";
  out += "blocksize           : " + HumanSize(p.block) + "\n";
  out += "aggregate filesize  : " +
         HumanSize(p.block * p.segments * uint64_t(r.tasks)) + "\n";
  out += Fmt("repetitions         : %d\n", p.reps);
  out += "fsync after write   : " + std::string(p.fsync ? "yes" : "no") + "\n";
  if (p.tiers()) {
    out += "fast root           : " + p.fast_root + "\n";
    out += "slow root           : " + p.slow_root + "\n";
  }
  out += "data check          : " +
         std::string(p.check_write || p.check_read
                         ? (p.check_write && p.check_read ? "write and read"
                            : p.check_write ? "write" : "read")
                         : "none") + "\n";
  return out;
}

std::string TextIterHeader(const Params& p) {
  const bool t = p.tiers();
  return std::string(
             "\naccess    bw(MiB/s)  IOPS       Latency(s)  block(KiB) "
             "xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter") +
         (t ? "  waited_s   waited(MiB/s) durable_s  durable(MiB/s)" : "") +
         "\n------    ---------  ----       ----------  ---------- "
         "---------  --------   --------   --------   --------   ----" +
         (t ? "  --------   ------------- ---------  --------------" : "") +
         "\n";
}

std::string TextIter(const IterResult& r, const Params& p) {
  std::string out =
      Fmt("%-9s %-10.2f %-10.2f %-11.6f %-10.2f %-10.2f %-10.6f %-10.6f "
          "%-10.6f %-10.6f %-4d",
          r.access.c_str(), r.BandwidthMiB(), r.Iops(), r.latency,
          r.Block(p) / 1024.0, r.Transfer(p) / 1024.0, r.open, r.io, r.close,
          r.total, r.iter);
  if (p.tiers()) {
    const bool t = r.Tiered();
    out += Fmt("  %-10s %-13s %-10s %s",
               OrDash(t, "%.6f", r.waited).c_str(),
               OrDash(t, "%.2f", r.WaitedMiB()).c_str(),
               OrDash(t, "%.6f", r.durable).c_str(),
               OrDash(t, "%.2f", r.DurableMiB()).c_str());
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

std::string TextSummary(const Report& r) {
  const Params& p = r.params;
  std::string out = "\nSummary of all tests:\n";
  out += Fmt("%-9s %10s %10s %10s %10s %10s %10s %10s %10s %8s %6s %4s %4s "
             "%5s %8s %6s %10s %10s %10s %9s %9s %-10s\n",
             "Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev",
             "Max(OPs)", "Min(OPs)", "Mean(OPs)", "Mean(s)", "open(s)",
             "#Tasks", "reps", "fPP", "reord", "reordoff", "segcnt",
             "blksiz", "xsize", "aggs(MiB)", "/device", "/fio-sync", "API");
  bool fractions = false;
  for (const auto& t : r.tests) {
    if (!t.skipped.empty()) continue;
    for (const auto& s : t.summary) {
      const std::string dev = OrDash(s.fraction_of_device >= 0, "%.2f",
                                     s.fraction_of_device);
      const std::string sync = OrDash(s.fraction_of_fio_sync >= 0, "%.2f",
                                      s.fraction_of_fio_sync);
      fractions |= s.fraction_of_device >= 0 || s.fraction_of_fio_sync >= 0;
      out += Fmt("%-9s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f "
                 "%10.5f %8.5f %6d %4d %4d %5d %8d %6llu %10llu %10llu "
                 "%10.1f %9s %9s %-10s\n",
                 s.operation.c_str(), s.max_mib, s.min_mib, s.mean_mib,
                 s.stddev_mib, s.max_ops, s.min_ops, s.mean_ops, s.mean_time,
                 s.mean_open, r.tasks, p.reps, p.file_per_proc ? 1 : 0,
                 p.reorder ? 1 : 0, p.reorder ? p.reorder_shift : 0,
                 (unsigned long long)s.segments, (unsigned long long)s.block,
                 (unsigned long long)s.transfer, s.bytes / 1048576.0,
                 dev.c_str(), sync.c_str(), t.api.c_str());
    }
  }
  if (fractions) {
    out += "/device, /fio-sync: Mean(MiB) as a fraction of DEVICE-LIMIT's "
           "and of FIO-SYNC's, same operation, this run\n";
  }
  for (const auto& t : r.tests) {
    for (const auto& s : t.summary) {
      if (s.mean_waited < 0) continue;
      out += Fmt("tiers     %s: mean waited_s %.6f (%.2f MiB/s), mean "
                 "durable_s %.6f (%.2f MiB/s)\n",
                 t.api.c_str(), s.mean_waited, s.mean_waited_mib,
                 s.mean_durable, s.mean_durable_mib);
    }
  }
  for (const auto& t : r.tests) {
    if (!t.skipped.empty()) {
      out += "skipped   " + t.api + ": " + t.skipped + "\n";
    } else if (!IsFioMeasurement(t.api)) {
      out += Fmt("resources %s: peak RSS %.1f MiB per rank, %.2f CPU s per "
                 "GiB written\n",
                 t.api.c_str(), t.peak_rss_mib, t.cpu_seconds_per_gib);
    }
  }
  return out;
}

std::string Json(const Report& r) {
  const Params& p = r.params;
  std::string out = "{\n";
  out += "  \"began\": " + JsonString(r.began) + ",\n";
  out += "  \"finished\": " + JsonString(r.finished) + ",\n";
  out += "  \"commandLine\": " + JsonString(p.command_line) + ",\n";
  out += "  \"machine\": " + JsonString(r.machine) + ",\n";
  out += IorHeaderMembers(r, "  ");
  out += "  \"options\": {\n";
  out += "    \"testFileName\": " + JsonString(p.path) + ",\n";
  out += "    \"access\": " + JsonString(Access(p)) + ",\n";
  out += "    \"filePerProc\": " + std::string(p.file_per_proc ? "true" : "false") + ",\n";
  out += "    \"collective\": " + std::string(p.collective ? "true" : "false") + ",\n";
  out += "    \"segmentCount\": " + std::to_string(p.segments) + ",\n";
  out += "    \"randomOffset\": " + std::string(p.random ? "true" : "false") + ",\n";
  out += "    \"reorderTasks\": " + std::string(p.reorder ? "true" : "false") + ",\n";
  out += "    \"taskPerNodeOffset\": " + std::to_string(p.reorder_shift) + ",\n";
  out += "    \"tasks\": " + std::to_string(r.tasks) + ",\n";
  out += "    \"transferSize\": " + std::to_string(p.transfer) + ",\n";
  out += "    \"blockSize\": " + std::to_string(p.block) + ",\n";
  out += "    \"aggregateFileSize\": " +
         std::to_string(p.block * p.segments * uint64_t(r.tasks)) + ",\n";
  out += "    \"repetitions\": " + std::to_string(p.reps) + ",\n";
  out += "    \"fsync\": " + std::string(p.fsync ? "true" : "false") + ",\n";
  out += "    \"checkWrite\": " + std::string(p.check_write ? "true" : "false") + ",\n";
  out += "    \"checkRead\": " + std::string(p.check_read ? "true" : "false") + ",\n";
  out += "    \"dropCaches\": " + std::string(p.drop_caches ? "true" : "false") + ",\n";
  out += "    \"direct\": " + std::string(p.direct ? "true" : "false") + ",\n";
  out += "    \"fastRoot\": " + (p.tiers() ? JsonString(p.fast_root) : "null") +
         ",\n";
  out += "    \"slowRoot\": " + (p.tiers() ? JsonString(p.slow_root) : "null") +
         ",\n";
  out += "    \"storeOptions\": {";
  for (size_t i = 0; i < p.store_options.size(); ++i) {
    out += (i ? ", " : "") + JsonString(p.store_options[i].first) + ": " +
           JsonString(p.store_options[i].second);
  }
  out += "}\n  },\n  \"tests\": [\n";
  for (size_t ti = 0; ti < r.tests.size(); ++ti) {
    const TestResult& t = r.tests[ti];
    out += "    {\n      \"api\": " + JsonString(t.api) + ",\n";
    out += "      \"note\": " + JsonString(t.note) + ",\n";
    out += "      \"skipped\": " + (t.skipped.empty() ? "null" : JsonString(t.skipped)) + ",\n";
    out += "      \"peakRssMiB\": " + JsonNumber(t.peak_rss_mib) + ",\n";
    out += "      \"cpuSecondsPerGiBWritten\": " + JsonNumber(t.cpu_seconds_per_gib) + ",\n";
    out += "      \"dataErrors\": " + std::to_string(t.data_errors) + ",\n";
    out += IorTestMembers(r, ti, "      ");
    out += "      \"results\": [";
    for (size_t i = 0; i < t.iters.size(); ++i) {
      const IterResult& it = t.iters[i];
      out += std::string(i ? "," : "") + "\n        {\"access\": " + JsonString(it.access) +
             ", \"bwMiB\": " + JsonNumber(it.BandwidthMiB()) +
             ", \"iops\": " + JsonNumber(it.Iops()) +
             ", \"latency\": " + JsonNumber(it.latency) +
             ", \"blockKiB\": " + JsonNumber(it.Block(p) / 1024.0) +
             ", \"xferKiB\": " + JsonNumber(it.Transfer(p) / 1024.0) +
             ", \"openTime\": " + JsonNumber(it.open) +
             ", \"wrRdTime\": " + JsonNumber(it.io) +
             ", \"closeTime\": " + JsonNumber(it.close) +
             ", \"totalTime\": " + JsonNumber(it.total) +
             ", \"cpuSeconds\": " + JsonNumber(it.cpu) +
             ", \"waitedTime\": " + JsonOrNull(it.Tiered(), it.waited) +
             ", \"waitedBwMiB\": " + JsonOrNull(it.Tiered(), it.WaitedMiB()) +
             ", \"durableTime\": " + JsonOrNull(it.Tiered(), it.durable) +
             ", \"durableBwMiB\": " + JsonOrNull(it.Tiered(), it.DurableMiB()) +
             ", \"bytes\": " + std::to_string(it.bytes) +
             ", \"iter\": " + std::to_string(it.iter) + "}";
    }
    out += "\n      ],\n      \"summary\": [";
    for (size_t i = 0; i < t.summary.size(); ++i) {
      const OpSummary& s = t.summary[i];
      out += std::string(i ? "," : "") + "\n        {\"operation\": " + JsonString(s.operation) +
             ", \"maxMiB\": " + JsonNumber(s.max_mib) +
             ", \"minMiB\": " + JsonNumber(s.min_mib) +
             ", \"meanMiB\": " + JsonNumber(s.mean_mib) +
             ", \"stdDevMiB\": " + JsonNumber(s.stddev_mib) +
             ", \"maxOPs\": " + JsonNumber(s.max_ops) +
             ", \"minOPs\": " + JsonNumber(s.min_ops) +
             ", \"meanOPs\": " + JsonNumber(s.mean_ops) +
             ", \"meanTime\": " + JsonNumber(s.mean_time) +
             ", \"meanOpenTime\": " + JsonNumber(s.mean_open) +
             ", \"meanWrRdTime\": " + JsonNumber(s.mean_io) +
             ", \"meanCloseTime\": " + JsonNumber(s.mean_close) +
             ", \"meanWaitedTime\": " +
             JsonOrNull(s.mean_waited >= 0, s.mean_waited) +
             ", \"meanWaitedBwMiB\": " +
             JsonOrNull(s.mean_waited >= 0, s.mean_waited_mib) +
             ", \"meanDurableTime\": " +
             JsonOrNull(s.mean_waited >= 0, s.mean_durable) +
             ", \"meanDurableBwMiB\": " +
             JsonOrNull(s.mean_waited >= 0, s.mean_durable_mib) +
             ", \"fractionOfDeviceLimit\": " +
             JsonOrNull(s.fraction_of_device >= 0, s.fraction_of_device) +
             ", \"fractionOfFioSync\": " +
             JsonOrNull(s.fraction_of_fio_sync >= 0, s.fraction_of_fio_sync) +
             "}";
    }
    out += "\n      ]\n    }" + std::string(ti + 1 < r.tests.size() ? "," : "") + "\n";
  }
  out += "  ],\n" + IorSummaryMember(r, "  ") + "\n}\n";
  return out;
}

}  // namespace bench
}  // namespace sluice
