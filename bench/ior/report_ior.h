// IOR's own key names in sluice-bench's JSON summary, beside sluice-bench's
// keys, so that a script written for IOR's JSON (-O summaryFormat=JSON;
// hpc/ior src/ior-output.c, IOR 3.3 and 4.x) reads ours: the top-level
// "Began", "Command line", "Machine", "Finished" and "summary" array, and in
// each of "tests" "TestID", "StartTime", "Path", "Parameters", "Options",
// "Results" and "max". Only what maps onto our results is written: IOR's
// keys with no counterpart here are left out (docs/BENCHMARKS.md lists
// them). Each function returns JSON members, each line starting with
// `indent` and ending with ",\n" except where said.
#ifndef SLUICE_BENCH_IOR_REPORT_IOR_H_
#define SLUICE_BENCH_IOR_REPORT_IOR_H_

#include <cstddef>
#include <string>

#include "ior/report.h"

namespace sluice {
namespace bench {

// "Began", "Command line", "Machine", "Finished".
std::string IorHeaderMembers(const Report& report, const std::string& indent);

// The members of tests[test] under IOR's names.
std::string IorTestMembers(const Report& report, size_t test,
                           const std::string& indent);

// `"summary": [...]`: a row per operation of every test that ran, with
// IOR's keys (and the fractions of DEVICE-LIMIT and FIO-SYNC). No ",\n".
std::string IorSummaryMember(const Report& report, const std::string& indent);

// IOR's HumanReadable(BASE_TWO): "1 MiB", "1.50 GiB", "262144 bytes".
std::string IorHumanSize(uint64_t bytes);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_REPORT_IOR_H_
