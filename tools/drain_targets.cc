// The contexts `sluice drain` works on and their destinations
// (drain_targets.h).
#include "drain_targets.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "commands.h"
#include "tool_util.h"

extern char** environ;

namespace sluice {
namespace tool {

namespace {

std::string RealPath(const std::string& p) {
  char real[PATH_MAX];
  return realpath(p.c_str(), real) ? std::string(real) : std::string();
}

std::string Parent(const std::string& real) {
  const size_t slash = real.rfind('/');
  return slash == 0 ? "/" : real.substr(0, slash);
}

std::string Base(const std::string& real) {
  return real.substr(real.rfind('/') + 1);
}

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string NextDataRoot(const std::string& roots,
                         const std::string& data_root) {
  const std::string want = RealPath(data_root);
  if (want.empty()) return "";
  std::vector<std::string> list;
  size_t pos = 0;
  while (pos <= roots.size()) {
    size_t comma = roots.find(',', pos);
    if (comma == std::string::npos) comma = roots.size();
    list.push_back(roots.substr(pos, comma - pos));
    pos = comma + 1;
  }
  for (size_t k = 0; k + 1 < list.size(); ++k) {
    if (!list[k].empty() && RealPath(list[k]) == want) return list[k + 1];
  }
  return "";
}

Status FindTargets(const char* cmd, const Args& a,
                   std::vector<DrainTarget>* out) {
  out->clear();
  const std::string& root = a.pos[0];
  const std::string real = RealPath(root);
  if (real.empty() || !IsDir(real)) {
    return Status::NotFound(root + ": no such directory");
  }
  auto flag = [&](const char* f) {
    auto it = a.flags.find(f);
    return it == a.flags.end() ? std::string() : it->second;
  };
  const std::string only = flag("--context");
  const std::string config_file = flag("--config");
  // (name, directory) of each context.
  std::vector<std::pair<std::string, std::string>> contexts;
  std::string data_root;
  if (IsContextDir(real)) {
    if (!only.empty() && only != Base(real)) {
      Usage(cmd, root + " is the context directory of " + Base(real) +
                     ", not of " + only);
    }
    contexts.push_back({Base(real), real});
    data_root = Parent(real);
  } else {
    data_root = real;
    std::vector<std::string> names;
    if (!only.empty()) {
      names.push_back(only);
    } else {
      DIR* d = opendir(real.c_str());
      if (!d) {
        return Status::IOError("cannot list " + root + ": " + strerror(errno));
      }
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') names.push_back(e->d_name);
      }
      closedir(d);
      std::sort(names.begin(), names.end());
    }
    for (const auto& n : names) {
      const std::string dir = real + "/" + n;
      if (IsContextDir(dir)) {
        contexts.push_back({n, dir});
      } else if (!only.empty()) {
        return Status::NotFound(root + " holds no context " + only +
                                " (a directory " + n + " with commit/ in it)");
      }
    }
    if (contexts.empty()) {
      return Status::NotFound(root + " holds no context (a directory with "
                                     "commit/ in it) and is none itself");
    }
  }
  std::string to = flag("--to");
  if (a.flags.count("--to")) {
    if (to.empty() || !IsDir(to)) {
      Usage(cmd, "--to " + to + ": no such directory");
    }
    if (IsContextDir(to)) {
      Usage(cmd, "--to " + to + " is a context directory (it holds "
                 "commit/): give the data root it is in");
    }
    if (RealPath(to) == data_root) {
      Usage(cmd, "--to " + to + " is the data root of " + root + " itself");
    }
  }
  for (const auto& [name, dir] : contexts) {
    DrainTarget t;
    t.name = name;
    t.src = dir;
    Status s = Config::Load(name, config_file, environ, &t.config);
    if (!s.ok()) return s;
    t.dst_root = to;
    if (to.empty()) {
      const ConfigValue roots = t.config.Get("data_roots");
      t.dst_root = NextDataRoot(roots.value, data_root);
      if (t.dst_root.empty()) {
        Usage(cmd, "no data root follows " + data_root +
                       " in data_roots of context " + name + " ('" +
                       roots.value + "', " + roots.SourceText() +
                       "): pass --to DIR, the data root to drain to");
      }
      if (RealPath(t.dst_root) == data_root) {
        Usage(cmd, "data_roots of context " + name + " ('" + roots.value +
                       "') names " + data_root + " twice: pass --to DIR");
      }
    }
    t.dst = t.dst_root + "/" + name;
    out->push_back(std::move(t));
  }
  return Status::OK();
}

}  // namespace tool
}  // namespace sluice
