// The `sluice` tool's subcommands (ls, stat, cat, export, import, rm, du,
// verify) over a Sluice file system directory.
#ifndef SLUICE_TOOLS_TOOL_H_
#define SLUICE_TOOLS_TOOL_H_

namespace sluice {
namespace tool {

// Returns the exit status: 0 success, 1 failure (or bad files found by
// verify), 2 bad usage.
int Main(int argc, char** argv);

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_TOOL_H_
