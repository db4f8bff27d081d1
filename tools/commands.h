// The `sluice` tool's command table (tool.cc) and its commands, one file
// per group: cmd_inspect.cc (ls, stat, cat, du, verify), cmd_copy.cc
// (export, import), cmd_admin.cc (rm, reclaim, config, mount) and
// cmd_dataset.cc (ls, cat, export, rm of a context's dataset ids). Each
// command takes the arguments after its name and returns the exit status:
// 0 success, 1 failure (or bad files found by verify), 2 bad usage.
#ifndef SLUICE_TOOLS_COMMANDS_H_
#define SLUICE_TOOLS_COMMANDS_H_

#include <string>

#include "args.h"

namespace sluice {
namespace tool {

using CommandFn = int (*)(int argc, char** argv);

struct Command {
  const char* name;
  CommandFn run;
  const char* help;  // `sluice NAME --help`, starting "sluice NAME ..."
};

// The command called `name`, or null.
const Command* FindCommand(const std::string& name);
// `sluice --help`: every command in one line or two.
extern const char kUsage[];

// cmd_inspect.cc
int Ls(int argc, char** argv);
int StatCmd(int argc, char** argv);
int Cat(int argc, char** argv);
int Du(int argc, char** argv);
int Verify(int argc, char** argv);
extern const char kLsHelp[], kStatHelp[], kCatHelp[], kDuHelp[],
    kVerifyHelp[];

// cmd_dataset.cc: ls, cat, export and rm when their first argument is a
// context directory (DATA_ROOT/NAME, which holds commit/): its datasets,
// ids and elements instead of files.
bool IsContextDir(const std::string& dir);
// Whether command `cmd`'s arguments name dataset ids: the first is a
// context directory, and the next is no PATH (a dataset name never starts
// with '/'; `ls CTX /`, `cat CTX /D/I/shared/E` and `export CTX [PATH]
// DEST` still show the files of its stores). rm on a context takes ids
// only: removing its stores' files would break its committed ids.
bool UsesDatasets(const char* cmd, const Args& a);
int DatasetLs(const Args& a);
int DatasetCat(const Args& a);
int DatasetExport(const Args& a);
int DatasetRm(const Args& a);
// Exits 2 (Usage) if `a` has a flag only a context directory takes.
void RejectContextFlags(const char* cmd, const Args& a);

// cmd_copy.cc
int Export(int argc, char** argv);
int Import(int argc, char** argv);
extern const char kExportHelp[], kImportHelp[];

// cmd_admin.cc
int Rm(int argc, char** argv);
int Reclaim(int argc, char** argv);
int ConfigCmd(int argc, char** argv);
int MountCmd(int argc, char** argv);
extern const char kRmHelp[], kReclaimHelp[], kConfigHelp[], kMountHelp[];

// cmd_drain.cc
int Drain(int argc, char** argv);
extern const char kDrainHelp[];

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_COMMANDS_H_
