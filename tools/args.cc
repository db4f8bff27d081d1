#include "args.h"

#include <stdlib.h>

#include <cstdio>

#include "commands.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

[[noreturn]] void Usage(const std::string& cmd, const std::string& why) {
  if (!why.empty()) {
    fprintf(stderr, "sluice %s: %s\n", cmd.c_str(),
            Printable(why, false).c_str());
  }
  if (const Command* c = FindCommand(cmd)) {
    fprintf(stderr, "usage: %s", c->help);
    exit(2);
  }
  fputs(kUsage, stderr);
  exit(2);
}

Args ParseArgs(const std::string& cmd, int argc, char** argv,
               const std::string& with_value, const std::string& bare) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--help" || s == "-h") {
      if (const Command* c = FindCommand(cmd)) {
        printf("usage: %s", c->help);
        exit(0);
      }
    }
    if (s.size() > 1 && s[0] == '-') {
      if (with_value.find(" " + s + " ") != std::string::npos) {
        if (i + 1 >= argc) Usage(cmd, s + " needs a value");
        a.flags[s] = argv[++i];
      } else if (bare.find(" " + s + " ") != std::string::npos) {
        a.flags[s] = "1";
      } else {
        Usage(cmd, "unknown option " + s);
      }
    } else {
      a.pos.push_back(s);
    }
  }
  return a;
}

}  // namespace tool
}  // namespace sluice
