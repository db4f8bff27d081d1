// `sluice export` and `sluice import`: stored trees out to plain files, and
// plain trees in.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "commands.h"
#include "sluice/fs.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

extern const char kExportHelp[] =
    "sluice export [-j N] [-q] ROOT [PATH] DEST\n"
    "       sluice export [--rank R] [-q] [--config FILE] CONTEXT_DIR DATASET "
    "ID ELEMENT DEST\n"
    "Copies PATH (default /: everything) into directory DEST as\n"
    "plain files, N files at a time (default 4), keeping holes,\n"
    "modes and times. Every byte is verified as it is read.\n"
    "What cannot be read or written is reported and the rest\n"
    "exported; the exit status is then 1. DEST may be a symbolic\n"
    "link to a directory, but nothing below it is followed: a\n"
    "symbolic link (or a FIFO, ...) where a file or directory goes\n"
    "is an error naming it, never written through.\n"
    "Progress goes to stderr once a second (-q: none).\n"
    "On a context directory: copies one element, read as `sluice cat`\n"
    "reads it, to the plain file DEST (DEST/ELEMENT if DEST is a\n"
    "directory), holes kept. The copy is written beside DEST, synced,\n"
    "then renamed over it: a failed export leaves no partial file, and\n"
    "a DEST already there is replaced whole (a symbolic link too, never\n"
    "written through). `sluice export CONTEXT_DIR [PATH] DEST` exports\n"
    "the files of the context's stores (PATH starts with '/').\n";

extern const char kImportHelp[] =
    "sluice import [-w W] [-q] SRC ROOT [PATH]\n"
    "Copies the file or directory tree SRC into ROOT at PATH\n"
    "(default /), writing as writer W (default 0): nested\n"
    "directories, empty and sparse files (holes stay holes).\n"
    "The tree is read without following any symbolic link, so\n"
    "nothing outside SRC is stored, even if the tree changes\n"
    "meanwhile: symbolic links, FIFOs, devices and sockets are\n"
    "skipped with a message. If anything was skipped or could not\n"
    "be read, the counts are printed and the exit status is 1.\n";

namespace {

// ---- the destination of an export ---------------------------------------
//
// Everything below DEST is reached relative to directory descriptors, one
// name at a time, and never through a symbolic link: directories are
// entered with O_DIRECTORY | O_NOFOLLOW, files opened with O_NOFOLLOW and
// checked with fstat to be regular files before a byte is written. A
// symlink already in DEST (made by mistake, or by someone sharing DEST, to
// point at a file or directory elsewhere) is an error naming it, never
// followed out of the tree. DEST itself is the caller's to name, and may be
// a symlink to a directory.

// Why `name` in directory `dir` (shown as `shown`) could not be opened or
// made (errno `err`): a symlink is named as one.
Status DestError(int dir, const std::string& name, const std::string& shown,
                 const char* what, int err) {
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode)) {
    return Status::IOError(shown + " is a symbolic link: not written through");
  }
  return Status::IOError(std::string(what) + " " + shown + ": " +
                         strerror(err));
}

// Opens directory `rel` ("a/b"; "" for `dest` itself) below the directory
// open at `dest` (shown as `shown`), entering each component without
// following a symlink. Returns a new descriptor, or -1 with *error set.
int OpenBelow(int dest, const std::string& shown, const std::string& rel,
              Status* error) {
  int fd = fcntl(dest, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    *error = Status::IOError("cannot open " + shown + ": " + strerror(errno));
    return -1;
  }
  std::string at = shown;
  for (size_t pos = 0; pos < rel.size();) {
    size_t slash = rel.find('/', pos);
    if (slash == std::string::npos) slash = rel.size();
    const std::string part = rel.substr(pos, slash - pos);
    at += "/" + part;
    const int next = openat(fd, part.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      *error = DestError(fd, part, at, "cannot open", errno);
      close(fd);
      return -1;
    }
    close(fd);
    fd = next;
    pos = slash + 1;
  }
  return fd;
}

// Splits "a/b/c" into "a/b" and "c" ("" and "c" for "c").
void SplitLast(const std::string& rel, std::string* dir, std::string* name) {
  const size_t slash = rel.rfind('/');
  *dir = slash == std::string::npos ? "" : rel.substr(0, slash);
  *name = slash == std::string::npos ? rel : rel.substr(slash + 1);
}

// Makes directory `rel` below `dest` (its parent exists), or checks that
// what is there is a directory, not a symlink.
Status MakeDestDir(int dest, const std::string& shown, const std::string& rel) {
  std::string parent_rel, name;
  SplitLast(rel, &parent_rel, &name);
  Status s;
  const int parent = OpenBelow(dest, shown, parent_rel, &s);
  if (parent < 0) return s;
  const std::string at = shown + "/" + rel;
  if (mkdirat(parent, name.c_str(), 0755) != 0 && errno != EEXIST) {
    s = Status::IOError("cannot create " + at + ": " + strerror(errno));
  } else {
    const int fd = openat(parent, name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) s = DestError(parent, name, at, "cannot create", errno);
    if (fd >= 0) close(fd);
  }
  close(parent);
  return s;
}

// Copies stored file `path` to `rel` below `dest`, leaving zero blocks as
// holes. An existing file there is overwritten; anything else there (a
// symlink, a FIFO, a directory) is an error.
Status ExportFile(FileSystem* fs, const std::string& path, int dest,
                  const std::string& shown, const std::string& rel,
                  const FileInfo& info, Progress* progress) {
  std::unique_ptr<File> f;
  Status s = fs->OpenFile(path, kRead, 0, &f);
  if (!s.ok()) return s;
  std::string parent_rel, name;
  SplitLast(rel, &parent_rel, &name);
  const int parent = OpenBelow(dest, shown, parent_rel, &s);
  if (parent < 0) return s;
  const std::string out = shown + "/" + rel;
  // O_NONBLOCK: a FIFO there fails the open (ENXIO) instead of blocking it.
  int fd = openat(parent, name.c_str(),
                  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  info.mode & 07777);
  if (fd < 0) s = DestError(parent, name, out, "cannot create", errno);
  close(parent);
  if (fd < 0) return s;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::IOError(out + " exists and is not a regular file");
  }
  if (ftruncate(fd, 0) != 0) {
    s = Status::IOError("cannot truncate " + out + ": " + strerror(errno));
  }
  std::vector<char> buf(4u << 20);
  uint64_t off = 0;
  size_t got = 0;
  while (s.ok() && (s = f->Read(buf.data(), buf.size(), &got)).ok() && got > 0) {
    for (size_t i = 0; s.ok() && i < got; i += 65536) {
      const size_t n = std::min<size_t>(65536, got - i);
      if (AllZero(buf.data() + i, n)) continue;  // a hole in the copy too
      if (pwrite(fd, buf.data() + i, n, off + i) != static_cast<ssize_t>(n)) {
        s = Status::IOError("cannot write " + out + ": " + strerror(errno));
      }
    }
    off += got;
    progress->Add(got, 0);
  }
  if (s.ok() && ftruncate(fd, static_cast<off_t>(info.size)) != 0) {
    s = Status::IOError("cannot size " + out + ": " + strerror(errno));
  }
  struct timespec times[2] = {
      {static_cast<time_t>(info.atime_ns / 1000000000), info.atime_ns % 1000000000},
      {static_cast<time_t>(info.mtime_ns / 1000000000), info.mtime_ns % 1000000000}};
  if (s.ok()) futimens(fd, times);
  if (close(fd) != 0 && s.ok()) s = Status::IOError("cannot close " + out);
  progress->Add(0, 1);
  return s;
}

}  // namespace

int Export(int argc, char** argv) {
  Args a = ParseArgs("export", argc, argv, " -j --rank --config ", " -q ");
  if (UsesDatasets("export", a)) return DatasetExport(a);
  RejectContextFlags("export", a);
  if (a.pos.size() != 2 && a.pos.size() != 3) Usage("export", "need ROOT [PATH] DEST");
  std::string dest = a.pos.back();
  while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  const std::string root = a.pos[0];
  const std::string base = a.pos.size() == 3 ? a.pos[1] : "/";
  const int jobs = a.flags.count("-j") ? atoi(a.flags["-j"].c_str()) : 4;
  if (jobs < 1) Usage("export", "-j must be >= 1");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(root, &fs);
  if (!s.ok()) return Fail("export", s);
  std::string norm;
  s = NormalizePath(base, &norm);
  if (!s.ok()) return Fail("export", s);
  if (mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) {
    return Fail("export", Status::IOError("cannot create " + dest + ": " +
                                          strerror(errno)));
  }
  const int dest_fd = open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dest_fd < 0) {
    return Fail("export", Status::IOError("cannot open " + dest + ": " +
                                          strerror(errno)));
  }
  struct Job {
    std::string path, rel;  // stored path; where below DEST ("a/b")
    FileInfo info;
  };
  std::vector<Job> files, dirs;
  uint64_t total = 0;
  std::mutex err_mu;
  bool failed = false;
  // What cannot be read or written is reported, and the rest exported.
  auto report = [&](const std::string&, const Status& e) {
    std::lock_guard<std::mutex> lock(err_mu);
    failed = true;
    fprintf(stderr, "sluice export: %s\n",
            Printable(e.ToString(), false).c_str());
  };
  // Directories that could not be made: what is below them is left out
  // (reported once, with them).
  std::vector<std::string> lost;
  auto under_lost = [&](const std::string& rel) {
    for (const auto& d : lost) {
      if (rel.compare(0, d.size() + 1, d + "/") == 0) return true;
    }
    return false;
  };
  s = Walk(
      fs.get(), norm,
      [&](const std::string& p, const FileInfo& info) {
        std::string rel = norm == "/" ? p : p.substr(norm.size());
        if (!rel.empty()) rel.erase(0, 1);  // the leading '/'
        if (under_lost(rel)) return Status::OK();
        if (info.is_dir) {
          Status d =
              rel.empty() ? Status::OK() : MakeDestDir(dest_fd, dest, rel);
          if (!d.ok()) {
            report(rel, d);
            lost.push_back(rel);
          } else {
            dirs.push_back({p, rel, info});
          }
        } else {
          if (rel.empty()) rel = p.substr(p.rfind('/') + 1);  // PATH is a file
          files.push_back({p, rel, info});
          total += info.size;
        }
        return Status::OK();
      },
      report);
  if (!s.ok()) return Fail("export", s);
  Progress progress("export", total, files.size(), a.flags.count("-q"));
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) {
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < files.size();) {
        Status e = ExportFile(fs.get(), files[i].path, dest_fd, dest,
                              files[i].rel, files[i].info, &progress);
        if (!e.ok()) report(files[i].rel, e);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {  // after contents
    Status e;
    const int fd = OpenBelow(dest_fd, dest, it->rel, &e);
    if (fd >= 0 && fchmod(fd, it->info.mode & 07777) != 0) {
      e = Status::IOError("cannot chmod " + dest + "/" + it->rel + ": " +
                          strerror(errno));
    }
    if (fd >= 0) close(fd);
    if (!e.ok()) report(it->rel, e);
  }
  close(dest_fd);
  progress.Finish();
  return failed ? 1 : 0;
}

namespace {

// ---- the source of an import -----------------------------------------------
//
// The source tree is read relative to directory descriptors, one name at a
// time: each entry is looked at with fstatat (no symlink followed), then
// opened in its parent's descriptor with O_NOFOLLOW (O_DIRECTORY too for a
// directory), and what is copied is what fstat of the opened descriptor
// says. A file or directory swapped for a symlink between the look and the
// open (pointing out of the tree, at /etc/shadow say) fails the open and is
// skipped, never read; the walk never leaves the tree it started in.
// SRC's own path is the caller's to name (only its last component is not
// followed, as lstat would not).

class Importer {
 public:
  explicit Importer(FileSystem* fs) : fs_(fs) {}

  // Counts the regular files and their bytes under `name` in `dir`, for the
  // progress lines (what cannot be read is left to Copy to report).
  void Count(int dir, const std::string& name, int depth) {
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (S_ISREG(st.st_mode)) {
      ++files_;
      bytes_ += static_cast<uint64_t>(st.st_size);
    }
    if (!S_ISDIR(st.st_mode) || depth >= kMaxDepth) return;
    std::vector<std::string> names;
    const int fd = OpenDir(dir, name, &names);
    if (fd < 0) return;
    if (Enter(fd)) {
      for (const auto& n : names) Count(fd, n, depth + 1);
      open_dirs_.pop_back();
    }
    close(fd);
  }

  // Copies `name` in `dir` (shown as `shown`) to stored path `dst`. Source
  // entries that cannot be copied are reported and counted; an error of
  // the file system stops the import and is returned.
  Status Copy(int dir, const std::string& name, const std::string& shown,
              const std::string& dst, int depth) {
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Failed(shown, std::string("cannot stat: ") + strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) return Skipped(shown, "a symbolic link");
    if (S_ISREG(st.st_mode)) return CopyFile(dir, name, shown, dst);
    if (!S_ISDIR(st.st_mode)) {
      return Skipped(shown, "not a regular file or directory");
    }
    if (depth >= kMaxDepth) {
      return Failed(shown, "more than " + std::to_string(kMaxDepth) +
                               " directories deep");
    }
    std::vector<std::string> names;
    const int fd = OpenDir(dir, name, &names);
    if (fd < 0) return Unopenable(dir, name, shown, errno);
    struct stat opened;
    Status s;
    if (fstat(fd, &opened) != 0) {
      s = Failed(shown, std::string("cannot stat: ") + strerror(errno));
    } else if (!Enter(fd)) {
      s = Skipped(shown, "an enclosing directory again, a loop (bind mount?)");
    } else {
      s = fs_->Mkdir(dst, opened.st_mode & 07777);
      if (s.code() == Code::kAlreadyExists) s = Status::OK();
      for (size_t i = 0; s.ok() && i < names.size(); ++i) {
        s = Copy(fd, names[i], shown + "/" + names[i], Join(dst, names[i]),
                 depth + 1);
      }
      open_dirs_.pop_back();
    }
    close(fd);
    return s;
  }

  uint64_t bytes() const { return bytes_; }
  size_t files() const { return files_; }
  size_t imported() const { return imported_; }
  size_t skipped() const { return skipped_; }
  size_t failed() const { return failed_; }
  void set_progress(Progress* p) { progress_ = p; }

 private:
  // Opens directory `name` in `dir` without following a symlink and lists
  // it (sorted, without "." and ".."). Returns the descriptor, or -1.
  static int OpenDir(int dir, const std::string& name,
                     std::vector<std::string>* names) {
    const int fd = openat(dir, name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    const int list_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR* d = list_fd < 0 ? nullptr : fdopendir(list_fd);
    if (d == nullptr) {
      const int err = errno;
      if (list_fd >= 0) close(list_fd);
      close(fd);
      errno = err;
      return -1;
    }
    while (struct dirent* e = readdir(d)) {
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        names->push_back(e->d_name);
      }
    }
    closedir(d);
    std::sort(names->begin(), names->end());
    return fd;
  }

  // Pushes the directory open at `fd` on open_dirs_, unless it is there
  // already (an enclosing directory mounted again below itself, which
  // would make the walk go round).
  bool Enter(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    const std::pair<dev_t, ino_t> id(st.st_dev, st.st_ino);
    auto it = std::find(open_dirs_.begin(), open_dirs_.end(), id);
    if (it != open_dirs_.end()) return false;
    open_dirs_.push_back(id);
    return true;
  }

  Status CopyFile(int dir, const std::string& name, const std::string& shown,
                  const std::string& dst) {
    // O_NONBLOCK: a FIFO swapped in fails the fstat check below instead of
    // blocking the open.
    const int fd = openat(dir, name.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Unopenable(dir, name, shown, errno);
    struct stat st;
    Status s;
    if (fstat(fd, &st) != 0) {
      s = Failed(shown, std::string("cannot stat: ") + strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
      s = Skipped(shown, "not a regular file");
    } else {
      const size_t failed = failed_;
      s = CopyData(fd, shown, dst, st);
      if (s.ok() && failed_ == failed) ++imported_;
    }
    close(fd);
    progress_->Add(0, 1);
    return s;
  }

  // Copies the open file's data regions only (holes stay holes). A read
  // error drops the partly stored copy and is counted.
  Status CopyData(int fd, const std::string& shown, const std::string& dst,
                  const struct stat& st) {
    std::unique_ptr<File> f;
    Status s = fs_->OpenFile(dst, kWrite | kCreate | kTruncate,
                             st.st_mode & 07777, &f);
    std::vector<char> buf(4u << 20);
    std::string read_error;
    off_t pos = 0;
    while (s.ok() && read_error.empty() && pos < st.st_size) {
      off_t data = lseek(fd, pos, SEEK_DATA);
      if (data < 0 && errno == ENXIO) break;  // only a hole remains
      if (data < 0) data = pos;  // no SEEK_DATA here: copy everything
      off_t hole = lseek(fd, data, SEEK_HOLE);
      if (hole < 0) hole = st.st_size;
      for (off_t o = data; s.ok() && o < hole;) {
        ssize_t n =
            pread(fd, buf.data(), std::min<off_t>(buf.size(), hole - o), o);
        if (n <= 0) {
          read_error = n < 0 ? strerror(errno) : "shorter than it was";
          break;
        }
        s = f->PWrite(buf.data(), static_cast<size_t>(n),
                      static_cast<uint64_t>(o));
        o += n;
        progress_->Add(static_cast<uint64_t>(n), 0);
      }
      pos = hole;
    }
    if (s.ok() && read_error.empty()) {
      s = f->Truncate(static_cast<uint64_t>(st.st_size));
    }
    Status c = f ? f->Close() : Status::OK();
    if (s.ok()) s = c;
    if (s.ok() && !read_error.empty()) {
      s = fs_->Unlink(dst);
      if (s.ok()) s = Failed(shown, "cannot read: " + read_error);
    }
    return s;
  }

  // Why `name` in `dir` did not open (errno `err`): swapped for a symlink,
  // or another error.
  Status Unopenable(int dir, const std::string& name, const std::string& shown,
                    int err) {
    struct stat st;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode)) {
      return Skipped(shown, "a symbolic link");
    }
    return Failed(shown, std::string("cannot open: ") + strerror(err));
  }

  Status Skipped(const std::string& shown, const std::string& why) {
    ++skipped_;
    fprintf(stderr, "sluice import: skipping %s (%s)\n",
            Printable(shown).c_str(), why.c_str());
    return Status::OK();
  }
  Status Failed(const std::string& shown, const std::string& why) {
    ++failed_;
    fprintf(stderr, "sluice import: %s: %s\n", Printable(shown).c_str(),
            why.c_str());
    return Status::OK();
  }

  FileSystem* const fs_;
  Progress* progress_ = nullptr;
  uint64_t bytes_ = 0;
  size_t files_ = 0;
  size_t imported_ = 0;  // regular files
  size_t skipped_ = 0, failed_ = 0;
  // The directories being copied, the top first (st_dev, st_ino).
  std::vector<std::pair<dev_t, ino_t>> open_dirs_;
};

}  // namespace

int Import(int argc, char** argv) {
  Args a = ParseArgs("import", argc, argv, " -w ", " -q ");
  if (a.pos.size() != 2 && a.pos.size() != 3) Usage("import", "need SRC ROOT [PATH]");
  std::string src = a.pos[0];
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  const int writer = a.flags.count("-w") ? atoi(a.flags["-w"].c_str()) : 0;
  if (writer < 0) Usage("import", "-w must be >= 0");
  struct stat top;
  if (fstatat(AT_FDCWD, src.c_str(), &top, AT_SYMLINK_NOFOLLOW) != 0) {
    return Fail("import", Status::IOError("cannot stat " + src + ": " +
                                          strerror(errno)));
  }
  std::unique_ptr<FileSystem> fs;
  Status s = FileSystem::Open(FsOptions(), a.pos[1], writer, &fs);
  if (!s.ok()) return Fail("import", s);
  const std::string base = a.pos.size() == 3 ? a.pos[2] : "/";
  // A directory's contents go to PATH; a file goes into it.
  const std::string dst =
      S_ISDIR(top.st_mode) ? base : Join(base, src.substr(src.rfind('/') + 1));
  Importer importer(fs.get());
  importer.Count(AT_FDCWD, src, 0);
  Progress progress("import", importer.bytes(), importer.files(),
                    a.flags.count("-q"));
  importer.set_progress(&progress);
  s = importer.Copy(AT_FDCWD, src, src, dst, 0);
  Status c = fs->Close();
  if (s.ok()) s = c;
  progress.Finish();
  if (!s.ok()) return Fail("import", s);
  // Whatever was left behind is a failure, even when it was everything
  // (a lone symlink): the caller must not take the import as complete.
  if (importer.skipped() + importer.failed() > 0) {
    fprintf(stderr, "sluice import: %zu file(s) imported; %zu skipped, %zu "
            "failed\n", importer.imported(), importer.skipped(),
            importer.failed());
    return 1;
  }
  return 0;
}

}  // namespace tool
}  // namespace sluice
