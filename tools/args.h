// The `sluice` tool's command lines: flags and positional arguments, and
// the usage message of bad ones.
#ifndef SLUICE_TOOLS_ARGS_H_
#define SLUICE_TOOLS_ARGS_H_

#include <map>
#include <string>
#include <vector>

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

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_ARGS_H_
