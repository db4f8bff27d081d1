// The `sluice` tool's command table and Main, which dispatches to the
// commands (commands.h), as rocksdb's ldb_tool over its ldb_cmd.
#include "tool.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "args.h"
#include "commands.h"

namespace sluice {
namespace tool {

extern const char kUsage[] =
    "usage: sluice COMMAND [options] ROOT ...\n"
    "ROOT is a Sluice file system directory (one store per writer inside).\n"
    "CTX is a context directory (DATA_ROOT/NAME, which holds commit/): ls,\n"
    "cat, export and rm given one speak of its datasets and ids.\n"
    "Commands:\n"
    "  ls [-l] [--json] ROOT [PATH]      list a directory\n"
    "  ls [--json] CTX [DATASET [ID]]    list datasets, a dataset's ids\n"
    "                                    (committed, torn, reclaimed), or\n"
    "                                    an id's elements\n"
    "  stat [--json] ROOT PATH...        size, mode, times, checksum state\n"
    "  cat ROOT PATH...                  write files to stdout\n"
    "  cat [--rank R] CTX DATASET ID ELEMENT\n"
    "                                    write an element to stdout\n"
    "  export [-j N] ROOT [PATH] DEST    copy files out to plain files\n"
    "  export [--rank R] CTX DATASET ID ELEMENT DEST\n"
    "                                    copy an element to a plain file\n"
    "  import [-w W] SRC ROOT [PATH]     copy plain files in, as writer W\n"
    "  rm [-r] ROOT PATH...              remove files (every writer's part)\n"
    "  rm CTX DATASET ID                 remove a dataset id\n"
    "  du [--json] ROOT [PATH]           apparent and stored bytes\n"
    "  verify [--json] ROOT [PATH]       check every checksum; exit 1 and\n"
    "                                    list the bad and incomplete files\n"
    "  reclaim [--json] ROOT             give back the space of values no\n"
    "                                    file points at any more\n"
    "  mount [-f] [-r] [-w W] ROOT DIR   serve ROOT at DIR through FUSE\n"
    "  config [--context NAME] [--dataset NAME] [--json] [FILE]\n"
    "                                    the configuration a context gets,\n"
    "                                    each value with its source\n"
    "  drain [--to DIR] [--status] [--json] ROOT\n"
    "                                    drain committed ids to the next\n"
    "                                    data root (a job's stage-out),\n"
    "                                    or show where each id stands\n"
    "`sluice COMMAND --help` describes one command.\n";

namespace {

const Command kCommands[] = {
    {"ls", Ls, kLsHelp},
    {"stat", StatCmd, kStatHelp},
    {"cat", Cat, kCatHelp},
    {"export", Export, kExportHelp},
    {"import", Import, kImportHelp},
    {"rm", Rm, kRmHelp},
    {"du", Du, kDuHelp},
    {"verify", Verify, kVerifyHelp},
    {"reclaim", Reclaim, kReclaimHelp},
    {"mount", MountCmd, kMountHelp},
    {"config", ConfigCmd, kConfigHelp},
    {"drain", Drain, kDrainHelp},
};

}  // namespace

const Command* FindCommand(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

int Main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  const Command* c = FindCommand(cmd);
  if (c == nullptr) Usage("", "unknown command '" + cmd + "'");
  return c->run(argc - 2, argv + 2);
}

}  // namespace tool
}  // namespace sluice
