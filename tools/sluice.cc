// The `sluice` command-line tool; its subcommands live in tool.cc, copy.cc
// (export, import) and mount.cc.
#include "tool.h"

int main(int argc, char** argv) { return sluice::tool::Main(argc, argv); }
