// `sluice rm`, `reclaim`, `config` and `mount`: commands that change a
// stored tree, give its space back, or show and serve it.
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "commands.h"
#include "sluice/config.h"
#include "sluice/fs.h"
#include "sluice/kv.h"
#include "tool.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

extern const char kRmHelp[] =
    "sluice rm [-r] ROOT PATH...\n"
    "       sluice rm [--config FILE] CONTEXT_DIR DATASET ID\n"
    "Removes files, or with -r directory trees, from every writer's\n"
    "store (no writer may have the file system open). What cannot be\n"
    "read or removed is reported and the rest removed; the exit\n"
    "status is then 1.\n"
    "On a context directory: removes id ID (a number) of DATASET: its\n"
    "commit record first (the id is gone once that is durable), then\n"
    "its data in every store. The context is opened as a job opens it,\n"
    "for writing: no job may have it open (a store in use is an error\n"
    "naming its holder), and every torn id is reclaimed too (rm of a\n"
    "torn id does just that). An id or dataset that is not there is an\n"
    "error, and nothing is changed. Files of a context's stores are\n"
    "not removed one by one: its commit records point at them.\n";

extern const char kReclaimHelp[] =
    "sluice reclaim [--json] ROOT\n"
    "Gives the file system back the space of stored data that no\n"
    "file refers to any more, in every writer's store. Removing,\n"
    "truncating or overwriting a stored file gives its space back\n"
    "at the writer's next sync or close; this finds what is left:\n"
    "data dropped by a writer that died before it, or kept for a\n"
    "reader that still had the store open when the writer closed.\n"
    "No process may have ROOT open (a store in use is named, and\n"
    "the exit status is 1). Prints the bytes given back per store.\n";

extern const char kMountHelp[] =
    "sluice mount [-f] [-r] [-w W] [-O NAME=VALUE,...] ROOT DIR\n"
    "Serves the file system in ROOT at directory DIR through FUSE 3,\n"
    "for programs the LD_PRELOAD interposer cannot reach (static\n"
    "binaries, setuid programs, Go). Read-write as writer W\n"
    "(default 0), which sees its own store; -r: read-only, merged\n"
    "over every writer. -O sets store options and extent_bytes\n"
    "(as SLUICE_OPTIONS).\n"
    "Detaches once mounted (-f: stays in the foreground, errors on\n"
    "stderr). `fusermount3 -u DIR` ends it; the daemon then closes\n"
    "the store, so what was written is stored when it exits.\n"
    "Stored files keep modes and times but no owners: chown\n"
    "succeeds and changes nothing.\n";

extern const char kConfigHelp[] =
    "sluice config [--context NAME] [--dataset NAME] [--json] "
    "[FILE]\n"
    "Prints the configuration context NAME (default: default)\n"
    "gets from the SLUICE_* environment and the configuration\n"
    "file FILE (else the one SLUICE_CONFIG_FILE names, if any):\n"
    "every variable's value, for dataset NAME if given (else\n"
    "the context's own), and where it came from (default, file\n"
    "PATH:LINE, environment SLUICE_NAME, or API for FILE).\n"
    "SLUICE_* names that are no variable are noted on stderr\n"
    "(--json: in \"unknown_environment\"). A bad line or value in\n"
    "FILE or the environment is an error naming it (exit status\n"
    "1). The variables and the file's syntax: docs/CONFIG.md.\n";

int Rm(int argc, char** argv) {
  Args a = ParseArgs("rm", argc, argv, " --config ", " -r ");
  if (UsesDatasets("rm", a)) return DatasetRm(a);
  RejectContextFlags("rm", a);
  if (a.pos.size() < 2) Usage("rm", "need ROOT PATH...");
  const std::string root = a.pos[0];
  std::vector<int> writers;
  Status ls = WriterNumbers(root, &writers);
  if (!ls.ok()) return Fail("rm", ls);
  std::vector<bool> found(a.pos.size(), false);
  int rc = 0;
  // What cannot be read or removed is reported, and the rest removed.
  auto report = [&](const std::string&, const Status& e) { rc = Fail("rm", e); };
  for (int w : writers) {
    std::unique_ptr<FileSystem> fs;
    Status s = FileSystem::Open(FsOptions(), root, w, &fs);
    if (!s.ok()) return Fail("rm", s);
    for (size_t i = 1; i < a.pos.size(); ++i) {
      FileInfo info;
      s = fs->Stat(a.pos[i], &info);
      if (s.IsNotFound()) continue;
      found[i] = true;
      if (s.ok() && info.is_dir && !a.flags.count("-r")) {
        s = Status::IsADirectory(a.pos[i] + ": is a directory (use -r)");
      } else if (s.ok() && info.is_dir) {
        std::vector<std::pair<std::string, bool>> all;
        s = Walk(
            fs.get(), a.pos[i],
            [&](const std::string& p, const FileInfo& fi) {
              all.push_back({p, fi.is_dir});
              return Status::OK();
            },
            report);
        for (auto it = all.rbegin(); s.ok() && it != all.rend(); ++it) {
          if (it->first == "/") continue;
          Status r = it->second ? fs->Rmdir(it->first) : fs->Unlink(it->first);
          if (!r.ok()) report(it->first, r);
        }
      } else if (s.ok()) {
        s = fs->Unlink(a.pos[i]);
      }
      if (!s.ok()) rc = Fail("rm", s);
    }
    s = fs->Close();
    if (!s.ok()) return Fail("rm", s);
  }
  for (size_t i = 1; i < a.pos.size(); ++i) {
    if (!found[i]) rc = Fail("rm", Status::NotFound(a.pos[i] + ": no such file"));
  }
  return rc;
}

int Reclaim(int argc, char** argv) {
  Args a = ParseArgs("reclaim", argc, argv, "", " --json ");
  if (a.pos.size() != 1) Usage("reclaim", "need ROOT");
  const std::string root = a.pos[0];
  std::vector<int> writers;
  Status ls = WriterNumbers(root, &writers);
  if (!ls.ok()) return Fail("reclaim", ls);
  std::vector<std::string> stores;
  for (int w : writers) {
    const std::string path = FileSystem::StorePath(root, w);
    stores.push_back(path.substr(path.rfind('/') + 1));
  }
  if (stores.empty()) {
    return Fail("reclaim", Status::NotFound(root + ": no writer's store in it"));
  }
  const bool json = a.flags.count("--json") > 0;
  uint64_t total = 0;
  int failed = 0;
  if (json) printf("{\"stores\": [");
  for (size_t i = 0; i < stores.size(); ++i) {
    const std::string path = FileSystem::StorePath(root, writers[i]);
    std::unique_ptr<Store> store;
    StoreOptions o;
    Status s = Store::Open(o, path, &store);
    uint64_t freed = 0;
    if (s.ok()) s = store->ReclaimSpace(&freed);
    if (store) {
      Status c = store->Close();
      if (s.ok()) s = c;
    }
    if (!s.ok()) ++failed;
    total += freed;
    if (json) {
      printf("%s{\"store\": %s, \"bytes_freed\": %llu, \"error\": %s}",
             i ? ", " : "", Json(stores[i]).c_str(), (unsigned long long)freed,
             s.ok() ? "null" : Json(s.ToString()).c_str());
    } else if (s.ok()) {
      printf("%llu bytes given back\t%s\n", (unsigned long long)freed,
             Printable(stores[i]).c_str());
    } else {
      Fail("reclaim", s);
    }
  }
  if (json) {
    printf("], \"bytes_freed\": %llu}\n", (unsigned long long)total);
  } else {
    printf("%llu bytes given back in all\n", (unsigned long long)total);
  }
  return failed ? 1 : 0;
}

int ConfigCmd(int argc, char** argv) {
  Args a = ParseArgs("config", argc, argv, " --context --dataset ", " --json ");
  if (a.pos.size() > 1) Usage("config", "at most one FILE");
  const std::string context =
      a.flags.count("--context") ? a.flags["--context"] : "default";
  const std::string dataset =
      a.flags.count("--dataset") ? a.flags["--dataset"] : "";
  if (context.empty()) Usage("config", "--context needs a NAME");
  Config config;
  Status s = Config::Load(context, a.pos.empty() ? "" : a.pos[0], environ,
                          &config);
  if (!s.ok()) return Fail("config", s);
  if (a.flags.count("--json")) {
    fputs(config.ToJson(dataset).c_str(), stdout);
  } else {
    // ToText writes control characters escaped already; Printable also
    // takes care of bytes that are not UTF-8.
    const std::string text = config.ToText(dataset);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      printf("%s\n", Printable(text.substr(pos, end - pos), false).c_str());
      pos = end + 1;
    }
    for (const std::string& u : config.unknown_environment()) {
      fprintf(stderr, "sluice config: note: not a configuration variable, "
                      "ignored: %s\n", Printable(u, false).c_str());
    }
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

#ifdef SLUICE_HAVE_FUSE
int MountCmd(int argc, char** argv) {
  Args a = ParseArgs("mount", argc, argv, " -w -O ", " -f -r ");
  if (a.pos.size() != 2) Usage("mount", "need ROOT DIR");
  const int writer = a.flags.count("-w") ? atoi(a.flags["-w"].c_str()) : 0;
  if (writer < 0) Usage("mount", "-w must be >= 0");
  FsOptions options;
  if (a.flags.count("-O")) {
    Status s = options.SetAll(a.flags["-O"]);
    if (!s.ok()) Usage("mount", "-O: " + s.message());
  }
  char root[PATH_MAX], dir[PATH_MAX];
  if (!realpath(a.pos[0].c_str(), root)) {
    return Fail("mount", Status::IOError(a.pos[0] + ": " + strerror(errno)));
  }
  if (!realpath(a.pos[1].c_str(), dir)) {
    return Fail("mount", Status::IOError(a.pos[1] + ": " + strerror(errno)));
  }
  return MountMain(root, dir, writer, a.flags.count("-r"), a.flags.count("-f"),
                   options);
}
#else
int MountCmd(int, char**) {
  fprintf(stderr, "sluice mount: built without FUSE (apt-get install "
                  "libfuse3-dev and rebuild)\n");
  return 1;
}
#endif

}  // namespace tool
}  // namespace sluice
