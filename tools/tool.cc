#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common.h"
#include "sluice/config.h"
#include "sluice/fs.h"
#include "sluice/kv.h"
#include "util/text.h"

namespace sluice {
namespace tool {
namespace {

const char kUsage[] =
    "usage: sluice COMMAND [options] ROOT ...\n"
    "ROOT is a Sluice file system directory (one store per writer inside).\n"
    "Commands:\n"
    "  ls [-l] [--json] ROOT [PATH]      list a directory\n"
    "  stat [--json] ROOT PATH...        size, mode, times, checksum state\n"
    "  cat ROOT PATH...                  write files to stdout\n"
    "  export [-j N] ROOT [PATH] DEST    copy files out to plain files\n"
    "  import [-w W] SRC ROOT [PATH]     copy plain files in, as writer W\n"
    "  rm [-r] ROOT PATH...              remove files (every writer's part)\n"
    "  du [--json] ROOT [PATH]           apparent and stored bytes\n"
    "  verify [--json] ROOT [PATH]       check every checksum; exit 1 and\n"
    "                                    list the bad and incomplete files\n"
    "  reclaim [--json] ROOT             give back the space of values no\n"
    "                                    file points at any more\n"
    "  mount [-f] [-r] [-w W] ROOT DIR   serve ROOT at DIR through FUSE\n"
    "  config [--context NAME] [--dataset NAME] [--json] [FILE]\n"
    "                                    the configuration a context gets,\n"
    "                                    each value with its source\n"
    "`sluice COMMAND --help` describes one command.\n";

struct Help {
  const char* name;
  const char* text;
};
const Help kHelp[] = {
    {"ls", "sluice ls [-l] [--json] ROOT [PATH]\n"
           "Lists PATH (default /) merged over every writer. -l adds mode,\n"
           "size and modification time; --json prints a JSON array.\n"
           "Entries of a damaged directory that cannot be followed are\n"
           "reported on stderr (exit status 1) and the others listed.\n"
           "Names print one per line: control characters, bytes that are\n"
           "not UTF-8 and '\\' are escaped (\\x1b, \\xff, \\\\); in JSON,\n"
           "bytes that are not UTF-8 are \\udcXX (Python's surrogateescape).\n"},
    {"stat", "sluice stat [--json] ROOT PATH...\n"
             "Prints size, stored bytes, mode, times, whether the file\n"
             "checksum is set (by its writer's last sync or close), and\n"
             "whether the file is complete: its writer closed it after its\n"
             "last change (a writer that died, even after a sync, did not).\n"},
    {"cat", "sluice cat ROOT PATH...\n"
            "Writes the files to standard output, verifying every extent.\n"},
    {"export", "sluice export [-j N] [-q] ROOT [PATH] DEST\n"
               "Copies PATH (default /: everything) into directory DEST as\n"
               "plain files, N files at a time (default 4), keeping holes,\n"
               "modes and times. Every byte is verified as it is read.\n"
               "What cannot be read or written is reported and the rest\n"
               "exported; the exit status is then 1. DEST may be a symbolic\n"
               "link to a directory, but nothing below it is followed: a\n"
               "symbolic link (or a FIFO, ...) where a file or directory goes\n"
               "is an error naming it, never written through.\n"
               "Progress goes to stderr once a second (-q: none).\n"},
    {"import", "sluice import [-w W] [-q] SRC ROOT [PATH]\n"
               "Copies the file or directory tree SRC into ROOT at PATH\n"
               "(default /), writing as writer W (default 0): nested\n"
               "directories, empty and sparse files (holes stay holes).\n"
               "The tree is read without following any symbolic link, so\n"
               "nothing outside SRC is stored, even if the tree changes\n"
               "meanwhile: symbolic links, FIFOs, devices and sockets are\n"
               "skipped with a message. If anything was skipped or could not\n"
               "be read, the counts are printed and the exit status is 1.\n"},
    {"rm", "sluice rm [-r] ROOT PATH...\n"
           "Removes files, or with -r directory trees, from every writer's\n"
           "store (no writer may have the file system open). What cannot be\n"
           "read or removed is reported and the rest removed; the exit\n"
           "status is then 1.\n"},
    {"du", "sluice du [--json] ROOT [PATH]\n"
           "Apparent size (sum of file sizes) and stored bytes (holes\n"
           "excluded) of PATH, and its number of files. What cannot be read\n"
           "is reported on stderr and left out (exit status 1).\n"},
    {"verify", "sluice verify [--json] ROOT [PATH]\n"
               "Reads every extent of every file under PATH and checks its\n"
               "checksum, the index, and each file's checksum. Prints the bad\n"
               "files (and damaged directories, whose other entries it goes\n"
               "on with) and the incomplete ones (their writer did not close\n"
               "them after their last change, even if it synced them), and\n"
               "exits 1 if there is any of either.\n"},
    {"reclaim", "sluice reclaim [--json] ROOT\n"
                "Gives the file system back the space of stored data that no\n"
                "file refers to any more, in every writer's store. Removing,\n"
                "truncating or overwriting a stored file gives its space back\n"
                "at the writer's next sync or close; this finds what is left:\n"
                "data dropped by a writer that died before it, or kept for a\n"
                "reader that still had the store open when the writer closed.\n"
                "No process may have ROOT open (a store in use is named, and\n"
                "the exit status is 1). Prints the bytes given back per store.\n"},
    {"mount", "sluice mount [-f] [-r] [-w W] [-O NAME=VALUE,...] ROOT DIR\n"
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
              "succeeds and changes nothing.\n"},
    {"config", "sluice config [--context NAME] [--dataset NAME] [--json] "
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
               "1). The variables and the file's syntax: docs/CONFIG.md.\n"},
};

}  // namespace

[[noreturn]] void Usage(const std::string& cmd, const std::string& why) {
  if (!why.empty()) {
    fprintf(stderr, "sluice %s: %s\n", cmd.c_str(),
            Printable(why, false).c_str());
  }
  for (const Help& h : kHelp) {
    if (cmd == h.name) {
      fprintf(stderr, "usage: %s", h.text);
      exit(2);
    }
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
      for (const Help& h : kHelp) {
        if (cmd == h.name) {
          printf("usage: %s", h.text);
          exit(0);
        }
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

std::string Printable(const std::string& s, bool backslash) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : text::Utf8Length(s, i);
    // C0 controls and DEL; C1 controls (U+0080..U+009F, which some
    // terminals obey as 8-bit controls: 0x9b is CSI); and bytes that are
    // not UTF-8.
    const bool control = c < 0x20 || c == 0x7f ||
                         (n == 2 && c == 0xc2 &&
                          static_cast<unsigned char>(s[i + 1]) < 0xa0);
    const bool not_utf8 = n == 0;
    if (not_utf8) n = 1;
    if (control || not_utf8) {
      for (size_t k = 0; k < n; ++k) {
        text::AppendHex("\\x%02x", static_cast<unsigned char>(s[i + k]), &out);
      }
    } else if (c == '\\' && backslash) {
      out += "\\\\";
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

std::string Json(const std::string& s) { return text::JsonString(s); }

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string TimeString(int64_t ns) {
  time_t t = static_cast<time_t>(ns / 1000000000);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", localtime(&t));
  return buf;
}

int Fail(const char* cmd, const Status& s) {
  fprintf(stderr, "sluice %s: %s\n", cmd,
          Printable(s.ToString(), false).c_str());
  return 1;
}

namespace {

// The writer numbers of the stores (writer.N) in `root`, ascending.
Status WriterNumbers(const std::string& root, std::vector<int>* writers) {
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return Status::NotFound(root + ": " + strerror(errno));
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "writer.", 7) == 0) writers->push_back(atoi(e->d_name + 7));
  }
  closedir(d);
  std::sort(writers->begin(), writers->end());
  return Status::OK();
}

}  // namespace

Status OpenReader(const std::string& root, std::unique_ptr<FileSystem>* fs) {
  return FileSystem::Open(FsOptions(), root, FileSystem::kReader, fs);
}

namespace {

// As FileSystem::ReadDir promises of the names it lists: one path
// component, which joined to a directory's path names an entry of it and
// nothing else (export builds its output files' names from these).
bool ValidName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.size() <= 255 &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

Status Walk(FileSystem* fs, const std::string& path, const WalkFn& fn,
            const WalkErrorFn& on_error, int depth) {
  FileInfo info;
  Status s = fs->Stat(path, &info);
  if (!s.ok()) {
    on_error(path, s);
    return Status::OK();
  }
  s = fn(path, info);
  if (!s.ok() || !info.is_dir) return s;
  if (depth >= kMaxDepth) {
    on_error(path, Status::InvalidArgument(
                       path + ": more than " + std::to_string(kMaxDepth) +
                       " directories deep; not walked further"));
    return Status::OK();
  }
  std::vector<DirEntry> entries;
  s = fs->ReadDir(path, &entries);
  if (!s.ok()) on_error(path + "/", s);  // and on with what it did list
  for (const DirEntry& e : entries) {
    if (!ValidName(e.name)) {
      on_error(path + "/", Status::Corruption(path + ": an entry with a name "
                                              "no path can hold"));
      continue;
    }
    s = Walk(fs, Join(path, e.name), fn, on_error, depth + 1);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

namespace {

// ---- commands ----------------------------------------------------------

int Ls(int argc, char** argv) {
  Args a = ParseArgs("ls", argc, argv, "", " -l --json ");
  if (a.pos.empty() || a.pos.size() > 2) Usage("ls", "need ROOT [PATH]");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(a.pos[0], &fs);
  const std::string path = a.pos.size() > 1 ? a.pos[1] : "/";
  std::vector<DirEntry> entries;
  FileInfo info;
  if (s.ok()) s = fs->Stat(path, &info);
  if (!s.ok()) return Fail("ls", s);
  int rc = 0;
  if (info.is_dir) {
    // A damaged directory's valid entries are listed all the same.
    s = fs->ReadDir(path, &entries);
    if (!s.ok()) rc = Fail("ls", s);
  } else {
    entries.push_back({path, false});
  }
  const bool json = a.flags.count("--json"), longf = a.flags.count("-l");
  if (json) printf("[");
  bool first = true;
  for (const auto& e : entries) {
    FileInfo fi;
    const std::string full = info.is_dir ? Join(path, e.name) : path;
    if (longf || json) {
      s = fs->Stat(full, &fi);
      if (!s.ok()) {
        rc = Fail("ls", s);
        continue;
      }
    }
    if (json) {
      printf("%s\n  {\"name\": %s, \"type\": \"%s\", \"mode\": %u, "
             "\"size\": %llu, \"stored\": %llu, \"mtime_ns\": %lld}",
             first ? "" : ",", Json(e.name).c_str(), fi.is_dir ? "dir" : "file",
             fi.mode, (unsigned long long)fi.size,
             (unsigned long long)fi.allocated, (long long)fi.mtime_ns);
    } else if (longf) {
      printf("%c%04o %12llu %s %s\n", fi.is_dir ? 'd' : '-', fi.mode,
             (unsigned long long)fi.size, TimeString(fi.mtime_ns).c_str(),
             Printable(e.name).c_str());
    } else {
      printf("%s%s\n", Printable(e.name).c_str(), e.is_dir ? "/" : "");
    }
    first = false;
  }
  if (json) printf("\n]\n");
  return rc;
}

int StatCmd(int argc, char** argv) {
  Args a = ParseArgs("stat", argc, argv, "", " --json ");
  if (a.pos.size() < 2) Usage("stat", "need ROOT PATH...");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(a.pos[0], &fs);
  if (!s.ok()) return Fail("stat", s);
  const bool json = a.flags.count("--json");
  if (json) printf("[");
  int rc = 0;
  bool first = true;
  for (size_t i = 1; i < a.pos.size(); ++i) {
    FileInfo f;
    s = fs->Stat(a.pos[i], &f);
    if (!s.ok()) {
      rc = Fail("stat", s);
      continue;
    }
    if (json) {
      printf("%s\n  {\"path\": %s, \"type\": \"%s\", \"mode\": %u, \"size\": "
             "%llu, \"stored\": %llu, \"atime_ns\": %lld, \"mtime_ns\": %lld, "
             "\"ctime_ns\": %lld, \"checksum\": %s, \"state\": %s}",
             first ? "" : ",", Json(a.pos[i]).c_str(), f.is_dir ? "dir" : "file",
             f.mode, (unsigned long long)f.size, (unsigned long long)f.allocated,
             (long long)f.atime_ns, (long long)f.mtime_ns, (long long)f.ctime_ns,
             f.is_dir ? "null" : f.checksum_valid ? "\"set\"" : "\"not set\"",
             f.is_dir ? "null" : f.complete ? "\"complete\"" : "\"incomplete\"");
    } else {
      printf("  File: %s\n  Type: %s  Mode: %04o\n  Size: %llu  Stored: %llu\n"
             "Modify: %s\nChange: %s\nChecksum: %s\nState: %s\n",
             Printable(a.pos[i]).c_str(),
             f.is_dir ? "directory" : "regular file", f.mode,
             (unsigned long long)f.size, (unsigned long long)f.allocated,
             TimeString(f.mtime_ns).c_str(), TimeString(f.ctime_ns).c_str(),
             f.is_dir ? "-" : f.checksum_valid ? "set" : "not set",
             f.is_dir     ? "-"
             : f.complete ? "complete"
                          : "incomplete (its writer did not close it after its "
                            "last change: still writing, or died)");
    }
    first = false;
  }
  if (json) printf("\n]\n");
  return rc;
}

int Cat(int argc, char** argv) {
  Args a = ParseArgs("cat", argc, argv, "", "");
  if (a.pos.size() < 2) Usage("cat", "need ROOT PATH...");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(a.pos[0], &fs);
  if (!s.ok()) return Fail("cat", s);
  std::vector<char> buf(4u << 20);
  for (size_t i = 1; i < a.pos.size(); ++i) {
    std::unique_ptr<File> f;
    s = fs->OpenFile(a.pos[i], kRead, 0, &f);
    size_t got = 0;
    while (s.ok() && (s = f->Read(buf.data(), buf.size(), &got)).ok() && got) {
      if (fwrite(buf.data(), 1, got, stdout) != got) {
        return Fail("cat", Status::IOError("write to stdout failed"));
      }
    }
    if (!s.ok()) return Fail("cat", s);
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

int Rm(int argc, char** argv) {
  Args a = ParseArgs("rm", argc, argv, "", " -r ");
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

int Du(int argc, char** argv) {
  Args a = ParseArgs("du", argc, argv, "", " --json ");
  if (a.pos.empty() || a.pos.size() > 2) Usage("du", "need ROOT [PATH]");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(a.pos[0], &fs);
  const std::string path = a.pos.size() > 1 ? a.pos[1] : "/";
  FileInfo top;
  if (s.ok()) s = fs->Stat(path, &top);
  if (!s.ok()) return Fail("du", s);
  // What cannot be read below it is reported, and the rest counted.
  uint64_t size = 0, stored = 0, files = 0, dirs = 0;
  int rc = 0;
  Walk(
      fs.get(), path,
      [&](const std::string&, const FileInfo& f) {
        if (f.is_dir) {
          ++dirs;
        } else {
          ++files;
          size += f.size;
          stored += f.allocated;
        }
        return Status::OK();
      },
      [&](const std::string&, const Status& e) { rc = Fail("du", e); });
  if (a.flags.count("--json")) {
    printf("{\"path\": %s, \"files\": %llu, \"directories\": %llu, "
           "\"apparent_bytes\": %llu, \"stored_bytes\": %llu}\n",
           Json(path).c_str(), (unsigned long long)files,
           (unsigned long long)dirs, (unsigned long long)size,
           (unsigned long long)stored);
  } else {
    printf("%llu bytes apparent, %llu bytes stored, %llu files, %llu "
           "directories\t%s\n",
           (unsigned long long)size, (unsigned long long)stored,
           (unsigned long long)files, (unsigned long long)dirs,
           Printable(path).c_str());
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

int Verify(int argc, char** argv) {
  Args a = ParseArgs("verify", argc, argv, "", " --json ");
  if (a.pos.empty() || a.pos.size() > 2) Usage("verify", "need ROOT [PATH]");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(a.pos[0], &fs);
  if (!s.ok()) return Fail("verify", s);
  std::vector<std::pair<std::string, Status>> bad, incomplete;
  uint64_t files = 0, bytes = 0;
  std::string start;
  s = NormalizePath(a.pos.size() > 1 ? a.pos[1] : "/", &start);
  if (!s.ok()) return Fail("verify", s);
  // Goes on past what it cannot read, naming it among the bad.
  Walk(
      fs.get(), start,
      [&](const std::string& p, const FileInfo& f) {
        if (f.is_dir) return Status::OK();
        ++files;
        bytes += f.size;
        Status v = fs->Verify(p);
        if (v.code() == Code::kIncomplete) {
          incomplete.push_back({p, v});
        } else if (!v.ok()) {
          bad.push_back({p, v});
        }
        return Status::OK();
      },
      [&](const std::string& p, const Status& e) { bad.push_back({p, e}); });
  if (a.flags.count("--json")) {
    printf("{\"files\": %llu, \"bytes\": %llu, \"bad\": [",
           (unsigned long long)files, (unsigned long long)bytes);
    for (size_t i = 0; i < bad.size(); ++i) {
      printf("%s{\"path\": %s, \"error\": %s}", i ? ", " : "",
             Json(bad[i].first).c_str(), Json(bad[i].second.ToString()).c_str());
    }
    printf("], \"incomplete\": [");
    for (size_t i = 0; i < incomplete.size(); ++i) {
      printf("%s%s", i ? ", " : "", Json(incomplete[i].first).c_str());
    }
    printf("]}\n");
  } else {
    for (auto& [p, st] : bad) {
      printf("BAD %s: %s\n", Printable(p).c_str(),
             Printable(st.ToString(), false).c_str());
    }
    for (auto& [p, st] : incomplete) {
      printf("INCOMPLETE %s: %s\n", Printable(p).c_str(),
             Printable(st.message(), false).c_str());
    }
    printf("verified %llu file(s), %llu bytes: %zu bad, %zu incomplete\n",
           (unsigned long long)files, (unsigned long long)bytes, bad.size(),
           incomplete.size());
  }
  return bad.empty() && incomplete.empty() ? 0 : 1;
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

}  // namespace

int Main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  const std::map<std::string, int (*)(int, char**)> commands = {
      {"ls", Ls},         {"stat", StatCmd}, {"cat", Cat},   {"export", Export},
      {"import", Import}, {"rm", Rm},        {"du", Du},     {"verify", Verify},
      {"reclaim", Reclaim},
      {"mount", MountCmd}, {"config", ConfigCmd}};
  auto it = commands.find(cmd);
  if (it == commands.end()) Usage("", "unknown command '" + cmd + "'");
  return it->second(argc - 2, argv + 2);
}

}  // namespace tool
}  // namespace sluice
