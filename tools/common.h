// What the `sluice` tool's commands share: argument parsing, messages, the
// walk of a stored tree (tool.cc), and the copying commands (copy.cc).
#ifndef SLUICE_TOOLS_COMMON_H_
#define SLUICE_TOOLS_COMMON_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/fs.h"

namespace sluice {
namespace tool {

// Prints `why` (if any) and the usage of `cmd`, and exits 2.
[[noreturn]] void Usage(const std::string& cmd, const std::string& why);

// Flags of one command, then its positional arguments.
struct Args {
  std::map<std::string, std::string> flags;
  std::vector<std::string> pos;
};
// `with_value` and `bare` list the flags (" -j -w "); --help prints the
// command's usage and exits 0.
Args ParseArgs(const std::string& cmd, int argc, char** argv,
               const std::string& with_value, const std::string& bare);

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
// Prints "sluice CMD: <s>" to stderr; returns 1.
int Fail(const char* cmd, const Status& s);
// The merged, read-only view of every writer's store in `root`.
Status OpenReader(const std::string& root, std::unique_ptr<FileSystem>* fs);

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

// `sluice export` and `sluice import` (copy.cc).
int Export(int argc, char** argv);
int Import(int argc, char** argv);

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_COMMON_H_
