// Parameters of sluice-bench, with IOR's flags and meanings.
#ifndef SLUICE_BENCH_IOR_PARAMS_H_
#define SLUICE_BENCH_IOR_PARAMS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice {
namespace bench {

struct Params {
  std::vector<std::string> apis;  // -a, a comma list; run in order
  uint64_t block = 1u << 20;      // -b: contiguous bytes per rank per segment
  uint64_t transfer = 256u << 10;  // -t: bytes per I/O call
  uint64_t segments = 1;          // -s
  bool file_per_proc = false;     // -F (default: one shared file)
  bool collective = false;        // -c (MPIIO, HDF5)
  bool fsync = false;             // -e
  bool write = false;             // -w
  bool read = false;              // -r
  bool reorder = false;           // -C
  int reorder_shift = 1;          // -Q
  bool random = false;            // -z: random offsets within each block
  int reps = 1;                   // -i
  std::string path = "testFile";  // -o
  bool keep = false;              // -k
  bool check_write = false;       // -W
  bool check_read = false;        // -R
  uint64_t seed = 0;              // -G: data signature
  bool verbose = false;           // -v

  // --fast-root / --slow-root (both or neither; absolute, existing): the
  // two tiers. With them every API's files go under the slow root (-o is a
  // name there) and each write repetition reports waited and durable.
  std::string fast_root, slow_root;
  bool tiers() const { return !slow_root.empty(); }

  // -O key=value
  std::string summary_format = "text";  // summaryFormat=text|JSON
  std::string summary_file;             // summaryFile=PATH
  std::string latency_file;             // latencyFile=PATH
  bool drop_caches = false;             // dropCaches=1: before every read
  bool direct = false;                  // direct=1: O_DIRECT (POSIX)
  bool warm_memory = false;             // warmMemory=1: see runner.cc
  // sluice.NAME=VALUE: store options for the SLUICE-* APIs
  std::vector<std::pair<std::string, std::string>> store_options;

  std::string command_line;
  // One-line notes for the user (a deprecated name was given), printed by
  // rank 0 before the run.
  std::vector<std::string> notes;
};

// The APIs sluice-bench knows (whether built in or not).
const std::vector<std::string>& KnownApis();

// Whether `api` is one of fio's measurements (DEVICE-LIMIT, FIO-SYNC,
// FIO-OVERWRITE) rather than an I/O API.
bool IsFioMeasurement(const std::string& api);

// Parses argv[1..]. Returns 0 when the run should go on, 1 when help was
// printed into *message, 2 on bad input (*message says what is wrong).
int ParseArgs(const std::vector<std::string>& args, Params* params,
              std::string* message);

std::string Usage();

// "64 MiB", "100 KiB", "1000 bytes".
std::string HumanSize(uint64_t bytes);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_PARAMS_H_
