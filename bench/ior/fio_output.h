// Figures read from fio's JSON output (--output-format=json): the first
// job's, which with group_reporting is the group's.
#ifndef SLUICE_BENCH_IOR_FIO_OUTPUT_H_
#define SLUICE_BENCH_IOR_FIO_OUTPUT_H_

#include <string>

namespace sluice {
namespace bench {

// `"bw_bytes"` of the "write" or "read" section, in bytes/s. -1 if absent.
double FioBandwidth(const std::string& json, const std::string& section);

// The mean of `"lat_ns"` (submission to completion of one I/O) of the
// "write" or "read" section, in seconds. -1 if absent.
double FioMeanLatency(const std::string& json, const std::string& section);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_FIO_OUTPUT_H_
