// The `sluice` command-line tool: a main over tool::Main, which dispatches
// to the commands (tools/commands.h).
#include "tool.h"

int main(int argc, char** argv) { return sluice::tool::Main(argc, argv); }
