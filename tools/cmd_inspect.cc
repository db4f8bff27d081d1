// `sluice ls`, `stat`, `cat`, `du` and `verify`: views of a stored tree
// that change nothing.
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "sluice/fs.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

extern const char kLsHelp[] =
    "sluice ls [-l] [--json] ROOT [PATH]\n"
    "       sluice ls [--json] [--config FILE] CONTEXT_DIR [DATASET [ID]]\n"
    "Lists PATH (default /) merged over every writer. -l adds mode,\n"
    "size and modification time; --json prints a JSON array.\n"
    "Entries of a damaged directory that cannot be followed are\n"
    "reported on stderr (exit status 1) and the others listed.\n"
    "Names print one per line: control characters, bytes that are\n"
    "not UTF-8 and '\\' are escaped (\\x1b, \\xff, \\\\); in JSON,\n"
    "bytes that are not UTF-8 are \\udcXX (Python's surrogateescape).\n"
    "On a context directory (DATA_ROOT/NAME, which holds commit/): its\n"
    "datasets, with the number of ids in each state and the highest\n"
    "committed id; with DATASET, its ids: state, bytes, time, ranks\n"
    "and writers (stores), and, when data_roots names a data root after\n"
    "the context's, whether each committed id is drained there (yes:\n"
    "its copy there is whole and durable; sluice drain --status tells\n"
    "more); with ID (a number, highest or newest), the id's elements:\n"
    "kind, rank, size and writers. States: committed;\n"
    "torn (data in the stores without a commit record: a job killed\n"
    "before its commit, a close that failed, or a job writing the id\n"
    "now; bytes are those its data takes in the stores), which a job's\n"
    "next open of the context reclaims; reclaimed (torn, its data\n"
    "removed; the time is the reclaim's). Nothing in the context is\n"
    "changed and no store is opened for writing, so a job may be\n"
    "running on it. Torn ids are found by reading every store: one\n"
    "that cannot be read (a LevelDB store while its job has it open)\n"
    "is named on stderr, the rest listed, exit status 1.\n"
    "--config FILE: the job's configuration file (store options,\n"
    "data_roots; the SLUICE_* environment applies too). A PATH (it\n"
    "starts with '/', a dataset never does) lists the files of the\n"
    "context's stores.\n";

extern const char kStatHelp[] =
    "sluice stat [--json] ROOT PATH...\n"
    "Prints size, stored bytes, mode, times, whether the file\n"
    "checksum is set (by its writer's last sync or close), and\n"
    "whether the file is complete: its writer closed it after its\n"
    "last change (a writer that died, even after a sync, did not).\n";

extern const char kCatHelp[] =
    "sluice cat ROOT PATH...\n"
    "       sluice cat [--rank R] [--config FILE] CONTEXT_DIR DATASET ID "
    "ELEMENT\n"
    "Writes the files to standard output, verifying every extent.\n"
    "On a context directory: writes element ELEMENT of id ID (a number,\n"
    "highest or newest) of DATASET: the shared element, or with --rank R\n"
    "rank R's own (unique) one. Every byte is checked (the commit record's\n"
    "sizes and checksums, the stores' extent checksums). Reads as ls\n"
    "does: changes nothing, and works while a job has the context open\n"
    "(RocksDB stores). A torn id, a missing id, dataset or element is\n"
    "an error saying which, and what there is instead. PATHs (they\n"
    "start with '/') name files of the context's stores, as on a ROOT.\n";

extern const char kDuHelp[] =
    "sluice du [--json] ROOT [PATH]\n"
    "Apparent size (sum of file sizes) and stored bytes (holes\n"
    "excluded) of PATH, and its number of files. What cannot be read\n"
    "is reported on stderr and left out (exit status 1).\n";

extern const char kVerifyHelp[] =
    "sluice verify [--json] ROOT [PATH]\n"
    "Reads every extent of every file under PATH and checks its\n"
    "checksum, the index, and each file's checksum. Prints the bad\n"
    "files (and damaged directories, whose other entries it goes\n"
    "on with) and the incomplete ones (their writer did not close\n"
    "them after their last change, even if it synced them), and\n"
    "exits 1 if there is any of either.\n";

int Ls(int argc, char** argv) {
  Args a = ParseArgs("ls", argc, argv, " --config ", " -l --json ");
  if (UsesDatasets("ls", a)) return DatasetLs(a);
  RejectContextFlags("ls", a);
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
  Args a = ParseArgs("cat", argc, argv, " --rank --config ", "");
  if (UsesDatasets("cat", a)) return DatasetCat(a);
  RejectContextFlags("cat", a);
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

}  // namespace tool
}  // namespace sluice
