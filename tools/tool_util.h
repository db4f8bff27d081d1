// What the `sluice` tool's commands share: messages, names safe to print,
// and the walk of a stored tree.
#ifndef SLUICE_TOOLS_TOOL_UTIL_H_
#define SLUICE_TOOLS_TOOL_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
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
