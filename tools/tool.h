// The `sluice` tool: subcommands (ls, stat, cat, export, import, rm, du,
// verify, reclaim, mount) over a Sluice file system directory, config,
// which shows the configuration (sluice/config.h) a context gets, and
// drain, which drains a data root's ids to the next one. The
// command table is in tool.cc, the commands in cmd_*.cc (commands.h).
#ifndef SLUICE_TOOLS_TOOL_H_
#define SLUICE_TOOLS_TOOL_H_

#include <string>

namespace sluice {
struct FsOptions;
namespace tool {

// Returns the exit status: 0 success, 1 failure (or bad files found by
// verify), 2 bad usage.
int Main(int argc, char** argv);

// `sluice mount` (mount.cc, built with FUSE 3): serves `root` at `dir`
// until unmounted; detaches once mounted unless `foreground`.
int MountMain(const std::string& root, const std::string& dir, int writer,
              bool read_only, bool foreground, const FsOptions& options);

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_TOOL_H_
