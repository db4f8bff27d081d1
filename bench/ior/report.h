// Results of sluice-bench and their two renderings: IOR's text summary and
// the same fields as JSON.
#ifndef SLUICE_BENCH_IOR_REPORT_H_
#define SLUICE_BENCH_IOR_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ior/params.h"

namespace sluice {
namespace bench {

// One phase (write or read) of one repetition, over all ranks.
struct IterResult {
  std::string access;   // "write" or "read"
  int iter = 0;
  uint64_t bytes = 0;   // aggregate
  uint64_t transfers = 0;  // aggregate
  double open = 0, io = 0, close = 0, total = 0;  // seconds
  double BandwidthMiB() const { return total > 0 ? bytes / 1048576.0 / total : 0; }
  double Iops() const { return io > 0 ? transfers / io : 0; }
  // Mean seconds per transfer on one rank.
  double latency = 0;
  // CPU seconds (user + system) of all ranks between open and close.
  double cpu = 0;
  // Writes with --fast-root/--slow-root, else < 0. waited: first open to
  // last close (or commit) returned, what the application waited (== total);
  // durable: first open until every rank's data is durable on the slow root.
  double waited = -1, durable = -1;
  bool Tiered() const { return waited >= 0 && durable >= 0; }
  double WaitedMiB() const {
    return waited > 0 ? bytes / 1048576.0 / waited : 0;
  }
  double DurableMiB() const {
    return durable > 0 ? bytes / 1048576.0 / durable : 0;
  }
};

struct OpSummary {
  std::string operation;
  double max_mib = 0, min_mib = 0, mean_mib = 0, stddev_mib = 0;
  double max_ops = 0, min_ops = 0, mean_ops = 0;
  double mean_time = 0, mean_open = 0, mean_io = 0, mean_close = 0;
  double fraction_of_limit = -1;  // of FIO-SYNC's mean, when it ran
  // Means over the repetitions that measured them (writes with tiers), or
  // < 0.
  double mean_waited = -1, mean_durable = -1;
  double mean_waited_mib = -1, mean_durable_mib = -1;
};

struct TestResult {
  std::string api;
  std::string note;            // how the API was run
  std::string skipped;         // why it did not run, or ""
  std::vector<IterResult> iters;
  std::vector<OpSummary> summary;
  double peak_rss_mib = 0;     // max over ranks, whole process
  double cpu_seconds_per_gib = 0;  // write phases, all ranks
  uint64_t data_errors = 0;    // bad bytes found by -W/-R
};

struct Report {
  std::string began, finished, machine;
  int tasks = 1;
  Params params;
  std::vector<TestResult> tests;
};

// Fills `summary` of every test from its iterations, with the fraction of a
// FIO-SYNC test in the same report.
void Summarise(Report* report);
std::string TextHeader(const Report& report);
// With tiers (p.tiers()), four more columns after IOR's: waited_s, its
// bandwidth, durable_s, its bandwidth ("-" where not measured).
std::string TextIterHeader(const Params& p);
std::string TextIter(const IterResult& r, const Params& p);
std::string TextSummary(const Report& report);
std::string Json(const Report& report);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_REPORT_H_
