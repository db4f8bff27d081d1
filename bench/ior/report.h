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
};

struct OpSummary {
  std::string operation;
  double max_mib = 0, min_mib = 0, mean_mib = 0, stddev_mib = 0;
  double max_ops = 0, min_ops = 0, mean_ops = 0;
  double mean_time = 0, mean_open = 0, mean_io = 0, mean_close = 0;
  double fraction_of_limit = -1;  // of FIO-LIMIT's mean, when it ran
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
// FIO-LIMIT test in the same report.
void Summarise(Report* report);
std::string TextHeader(const Report& report);
std::string TextIterHeader();
std::string TextIter(const IterResult& r, const Params& p);
std::string TextSummary(const Report& report);
std::string Json(const Report& report);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_REPORT_H_
