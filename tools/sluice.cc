// The `sluice` command-line tool; every subcommand lives in tool.cc.
#include "tool.h"

int main(int argc, char** argv) { return sluice::tool::Main(argc, argv); }
