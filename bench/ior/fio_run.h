// Running fio from sluice-bench (rank 0 only; these are local calls).
#ifndef SLUICE_BENCH_IOR_FIO_RUN_H_
#define SLUICE_BENCH_IOR_FIO_RUN_H_

#include <string>

namespace sluice {
namespace bench {

// The directory of the test file `path` ("." for a bare name).
std::string FioDir(const std::string& path);

// `s` in single quotes for sh.
std::string ShellQuote(const std::string& s);

// Runs `fio ARGS --output-format=json` and captures its output (stderr
// too). Returns true when fio exited 0.
bool RunFio(const std::string& args, std::string* output);

// Whether fio is installed, and whether it has the I/O engine `engine`.
bool HaveFio();
bool FioHasEngine(const std::string& engine);

// The first line of fio's output that says something, for a message.
std::string FioFirstLine(const std::string& output);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_FIO_RUN_H_
