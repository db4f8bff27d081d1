// What the `sluice` tool's commands share: messages, names safe to print,
// and the walk of a stored tree.
#ifndef SLUICE_TOOLS_TOOL_UTIL_H_
#define SLUICE_TOOLS_TOOL_UTIL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/fs.h"

namespace sluice {
namespace tool {

// `s` (a name, a path, a message) safe to print on a terminal, on one
// line: C0 and C1 control characters, DEL and bytes that are not UTF-8 as
// "\xHH", and, if `backslash`, '\' as "\\" (so that names print
// unambiguously; messages of the library escape their names already).
std::string Printable(const std::string& s, bool backslash = true);
// `s` as a JSON string: valid UTF-8, bytes that are not UTF-8 written as
// lone surrogates "\udcXX" (Python's "surrogateescape").
std::string Json(const std::string& s);
// "dir/name" ("/name" under the root).
std::string Join(const std::string& dir, const std::string& name);
// "YYYY-MM-DD HH:MM:SS", local time, of CLOCK_REALTIME nanoseconds.
std::string TimeString(int64_t ns);
// Prints "sluice CMD: <s>" to stderr; returns 1.
int Fail(const char* cmd, const Status& s);
// The merged, read-only view of every writer's store in `root`.
Status OpenReader(const std::string& root, std::unique_ptr<FileSystem>* fs);
// The writer numbers of the stores (writer.N) in `root`, ascending.
Status WriterNumbers(const std::string& root, std::vector<int>* writers);

// True when the n bytes at p are all zero (a hole in a copy).
bool AllZero(const char* p, size_t n);

// Progress of a long copy, printed to stderr at most once a second.
class Progress {
 public:
  Progress(const char* verb, uint64_t total_bytes, size_t total_files, bool quiet)
      : verb_(verb), total_(total_bytes), files_(total_files), quiet_(quiet),
        start_(Now()), last_(start_) {}
  void Add(uint64_t bytes, size_t files) {
    bytes_ += bytes;
    done_files_ += files;
    const double now = Now();
    std::lock_guard<std::mutex> lock(mu_);
    if (!quiet_ && now - last_ >= 1.0) {
      last_ = now;
      Print(now, false);
    }
  }
  void Finish() {
    if (!quiet_ && Now() - start_ >= 1.0) Print(Now(), true);
  }

 private:
  static double Now() {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void Print(double now, bool last) {
    const double mib = bytes_ / 1048576.0, secs = now - start_;
    fprintf(stderr, "%s: %zu/%zu files, %.0f/%.0f MiB (%.0f%%), %.0f MiB/s%s\n",
            verb_, done_files_.load(), files_, mib, total_ / 1048576.0,
            total_ ? 100.0 * bytes_ / total_ : 100.0, secs > 0 ? mib / secs : 0,
            last ? ", done" : "");
  }
  const char* verb_;
  const uint64_t total_;
  const size_t files_;
  const bool quiet_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<size_t> done_files_{0};
  std::mutex mu_;
  double start_, last_;
};

// A walk reports a directory this deep instead of entering it: no path so
// deep fits in PATH_MAX (it takes two bytes a level), so nothing else could
// use it, and the bound keeps the recursion's stack small whatever a
// damaged store holds.
constexpr int kMaxDepth = 2048;

// Calls fn(path, info) for `path` and, if a directory, everything below it
// (parents before children). What cannot be read (a path, a listing, the
// entries a listing leaves out as damaged: FileSystem::ReadDir) is passed
// to on_error, and the walk goes on with the rest; an error of fn stops it.
using WalkFn = std::function<Status(const std::string&, const FileInfo&)>;
using WalkErrorFn = std::function<void(const std::string&, const Status&)>;
Status Walk(FileSystem* fs, const std::string& path, const WalkFn& fn,
            const WalkErrorFn& on_error, int depth = 0);

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_TOOL_UTIL_H_
