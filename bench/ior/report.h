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
  // Bytes per job and per I/O call when they are not the run's -b and -t
  // (DEVICE-LIMIT's fio job), else 0.
  uint64_t block_size = 0, transfer_size = 0;
  uint64_t Block(const Params& p) const {
    return block_size ? block_size : p.block;
  }
  uint64_t Transfer(const Params& p) const {
    return transfer_size ? transfer_size : p.transfer;
  }
  uint64_t Segments(const Params& p) const {
    return block_size ? 1 : p.segments;
  }
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
  // Of the first repetition: bytes per job and per I/O call, segments
  // (IterResult's Block, Transfer, Segments), bytes moved by all ranks.
  uint64_t block = 0, transfer = 0, segments = 0, bytes = 0;
  double max_mib = 0, min_mib = 0, mean_mib = 0, stddev_mib = 0;
  double max_ops = 0, min_ops = 0, mean_ops = 0;  // transfers / wr/rd time
  // IOR's summary OPs: transfers / total time (open to close), over the
  // repetitions; sd is the population standard deviation, as IOR's.
  double ior_max_ops = 0, ior_min_ops = 0, ior_mean_ops = 0, ior_sd_ops = 0;
  double mean_time = 0, mean_open = 0, mean_io = 0, mean_close = 0;
  // The mean as a fraction of DEVICE-LIMIT's and of FIO-SYNC's mean for
  // the same operation in the same run, or < 0 (not run, or this is it;
  // DEVICE-LIMIT gets no fraction of FIO-SYNC: it is the ceiling).
  double fraction_of_device = -1, fraction_of_fio_sync = -1;
  // Means over the repetitions that measured them (writes with tiers), or
  // < 0.
  double mean_waited = -1, mean_durable = -1;
  double mean_waited_mib = -1, mean_durable_mib = -1;
};

struct TestResult {
  std::string api;
  std::string started;         // when it began, as Report::began
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
  // Nodes (shared-memory domains) of the run, and ranks on rank 0's node
  // (IOR's tasksPerNode).
  int nodes = 1, tasks_per_node = 1;
  Params params;
  std::vector<TestResult> tests;
};

// Fills `summary` of every test from its iterations, with the fractions of
// the DEVICE-LIMIT and FIO-SYNC tests in the same report (the first of
// each that ran, wherever it is in the list).
void Summarise(Report* report);
std::string TextHeader(const Report& report);
// With tiers (p.tiers()), four more columns after IOR's: waited_s, its
// bandwidth, durable_s, its bandwidth ("-" where not measured).
std::string TextIterHeader(const Params& p);
std::string TextIter(const IterResult& r, const Params& p);
std::string TextSummary(const Report& report);
// The JSON summary: sluice-bench's keys, and IOR's (report_ior.h).
std::string Json(const Report& report);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_REPORT_H_
