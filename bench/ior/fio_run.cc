#include "ior/fio_run.h"

#include <cstdio>
#include <cstdlib>

namespace sluice {
namespace bench {

std::string FioDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool RunFio(const std::string& args, std::string* output) {
  output->clear();
  const std::string cmd = "fio " + args + " --output-format=json 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) {
    *output = "cannot run fio";
    return false;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) output->append(buf, n);
  return pclose(f) == 0;
}

bool HaveFio() { return system("fio --version >/dev/null 2>&1") == 0; }

bool FioHasEngine(const std::string& engine) {
  // fio --enghelp=NAME exits 1 for an engine it was built without.
  return system(("fio --enghelp=" + ShellQuote(engine) + " >/dev/null 2>&1")
                    .c_str()) == 0;
}

std::string FioFirstLine(const std::string& output) {
  size_t at = 0;
  while (at < output.size()) {
    size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(at, end - at);
    if (line.find_first_not_of(" \t{") != std::string::npos) {
      return line.substr(0, 200);
    }
    at = end + 1;
  }
  return "no output";
}

}  // namespace bench
}  // namespace sluice
