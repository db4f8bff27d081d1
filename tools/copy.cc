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

#include "common.h"
#include "sluice/fs.h"

namespace sluice {
namespace tool {
namespace {

// Progress of a long copy, printed to stderr at most once a second.
class Progress {
 public:
  Progress(const char* verb, uint64_t total_bytes, size_t total_files, bool quiet)
      : verb_(verb), total_(total_bytes), files_(total_files), quiet_(quiet),
        start_(Now()), last_(start_) {}
  void Add(uint64_t bytes, size_t files) {
    bytes_ += bytes;
    done_files_ += files;
    const double now = Now();
    std::lock_guard<std::mutex> lock(mu_);
    if (!quiet_ && now - last_ >= 1.0) {
      last_ = now;
      Print(now, false);
    }
  }
  void Finish() {
    if (!quiet_ && Now() - start_ >= 1.0) Print(Now(), true);
  }

 private:
  static double Now() {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void Print(double now, bool last) {
    const double mib = bytes_ / 1048576.0, secs = now - start_;
    fprintf(stderr, "%s: %zu/%zu files, %.0f/%.0f MiB (%.0f%%), %.0f MiB/s%s\n",
            verb_, done_files_.load(), files_, mib, total_ / 1048576.0,
            total_ ? 100.0 * bytes_ / total_ : 100.0, secs > 0 ? mib / secs : 0,
            last ? ", done" : "");
  }
  const char* verb_;
  const uint64_t total_;
  const size_t files_;
  const bool quiet_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<size_t> done_files_{0};
  std::mutex mu_;
  double start_, last_;
};

bool AllZero(const char* p, size_t n) {
  static const char zeros[4096] = {};
  for (size_t i = 0; i < n; i += sizeof zeros) {
    if (memcmp(p + i, zeros, std::min(sizeof zeros, n - i)) != 0) return false;
  }
  return true;
}

// Copies one stored file to a plain file, leaving zero blocks as holes.
Status ExportFile(FileSystem* fs, const std::string& path,
                  const std::string& dest, const FileInfo& info,
                  Progress* progress) {
  std::unique_ptr<File> f;
  Status s = fs->OpenFile(path, kRead, 0, &f);
  if (!s.ok()) return s;
  int fd = open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                info.mode & 07777);
  if (fd < 0) return Status::IOError("cannot create " + dest + ": " + strerror(errno));
  std::vector<char> buf(4u << 20);
  uint64_t off = 0;
  size_t got = 0;
  while (s.ok() && (s = f->Read(buf.data(), buf.size(), &got)).ok() && got > 0) {
    for (size_t i = 0; s.ok() && i < got; i += 65536) {
      const size_t n = std::min<size_t>(65536, got - i);
      if (AllZero(buf.data() + i, n)) continue;  // a hole in the copy too
      if (pwrite(fd, buf.data() + i, n, off + i) != static_cast<ssize_t>(n)) {
        s = Status::IOError("cannot write " + dest + ": " + strerror(errno));
      }
    }
    off += got;
    progress->Add(got, 0);
  }
  if (s.ok() && ftruncate(fd, static_cast<off_t>(info.size)) != 0) {
    s = Status::IOError("cannot size " + dest + ": " + strerror(errno));
  }
  struct timespec times[2] = {
      {static_cast<time_t>(info.atime_ns / 1000000000), info.atime_ns % 1000000000},
      {static_cast<time_t>(info.mtime_ns / 1000000000), info.mtime_ns % 1000000000}};
  if (s.ok()) futimens(fd, times);
  if (close(fd) != 0 && s.ok()) s = Status::IOError("cannot close " + dest);
  progress->Add(0, 1);
  return s;
}

}  // namespace

int Export(int argc, char** argv) {
  Args a = ParseArgs("export", argc, argv, " -j ", " -q ");
  if (a.pos.size() != 2 && a.pos.size() != 3) Usage("export", "need ROOT [PATH] DEST");
  const std::string root = a.pos[0], dest = a.pos.back();
  const std::string base = a.pos.size() == 3 ? a.pos[1] : "/";
  const int jobs = a.flags.count("-j") ? atoi(a.flags["-j"].c_str()) : 4;
  if (jobs < 1) Usage("export", "-j must be >= 1");
  std::unique_ptr<FileSystem> fs;
  Status s = OpenReader(root, &fs);
  if (!s.ok()) return Fail("export", s);
  std::string norm;
  s = NormalizePath(base, &norm);
  if (mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) {
    return Fail("export", Status::IOError("cannot create " + dest + ": " +
                                          strerror(errno)));
  }
  struct Job {
    std::string path, dest;
    FileInfo info;
  };
  std::vector<Job> files;
  uint64_t total = 0;
  std::vector<std::pair<std::string, FileInfo>> dirs;
  std::mutex err_mu;
  bool failed = false;
  // What cannot be read or written is reported, and the rest exported.
  auto report = [&](const std::string&, const Status& e) {
    std::lock_guard<std::mutex> lock(err_mu);
    failed = true;
    fprintf(stderr, "sluice export: %s\n", e.ToString().c_str());
  };
  if (s.ok()) {
    s = Walk(
        fs.get(), norm,
        [&](const std::string& p, const FileInfo& info) {
          std::string rel = norm == "/" ? p : p.substr(norm.size());
          std::string out = dest + rel;
          if (info.is_dir) {
            if (mkdir(out.c_str(), 0755) != 0 && errno != EEXIST) {
              report(out, Status::IOError("cannot create " + out + ": " +
                                          strerror(errno)));
            }
            dirs.push_back({out, info});
          } else {
            if (rel.empty()) out = dest + "/" + p.substr(p.rfind('/') + 1);
            files.push_back({p, out, info});
            total += info.size;
          }
          return Status::OK();
        },
        report);
  }
  if (!s.ok()) return Fail("export", s);
  Progress progress("export", total, files.size(), a.flags.count("-q"));
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) {
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < files.size();) {
        Status e = ExportFile(fs.get(), files[i].path, files[i].dest,
                              files[i].info, &progress);
        if (!e.ok()) report(files[i].dest, e);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {  // after contents
    chmod(it->first.c_str(), it->second.mode & 07777);
  }
  progress.Finish();
  return failed ? 1 : 0;
}

namespace {

// Copies one plain file in, data regions only (holes stay holes).
Status ImportFile(const std::string& src, FileSystem* fs, const std::string& path,
                  const struct stat& st, Progress* progress) {
  int fd = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + src + ": " + strerror(errno));
  std::unique_ptr<File> f;
  Status s = fs->OpenFile(path, kWrite | kCreate | kTruncate, st.st_mode & 07777, &f);
  std::vector<char> buf(4u << 20);
  off_t pos = 0;
  while (s.ok() && pos < st.st_size) {
    off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole remains
    if (data < 0) data = pos;  // no SEEK_DATA here: copy everything
    off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) hole = st.st_size;
    for (off_t o = data; s.ok() && o < hole;) {
      ssize_t n = pread(fd, buf.data(), std::min<off_t>(buf.size(), hole - o), o);
      if (n <= 0) {
        s = Status::IOError("cannot read " + src + ": " + strerror(errno));
        break;
      }
      s = f->PWrite(buf.data(), static_cast<size_t>(n), static_cast<uint64_t>(o));
      o += n;
      progress->Add(static_cast<uint64_t>(n), 0);
    }
    pos = hole;
  }
  if (s.ok()) s = f->Truncate(static_cast<uint64_t>(st.st_size));
  Status c = f ? f->Close() : Status::OK();
  close(fd);
  progress->Add(0, 1);
  return s.ok() ? c : s;
}

Status ScanTree(const std::string& src, std::vector<std::pair<std::string, struct stat>>* out,
                uint64_t* total) {
  struct stat st;
  if (lstat(src.c_str(), &st) != 0) {
    return Status::IOError("cannot stat " + src + ": " + strerror(errno));
  }
  out->push_back({src, st});
  if (S_ISREG(st.st_mode)) *total += static_cast<uint64_t>(st.st_size);
  if (!S_ISDIR(st.st_mode)) return Status::OK();
  DIR* d = opendir(src.c_str());
  if (d == nullptr) return Status::IOError("cannot open " + src + ": " + strerror(errno));
  std::vector<std::string> names;
  while (struct dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    Status s = ScanTree(src + "/" + n, out, total);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

int Import(int argc, char** argv) {
  Args a = ParseArgs("import", argc, argv, " -w ", " -q ");
  if (a.pos.size() != 2 && a.pos.size() != 3) Usage("import", "need SRC ROOT [PATH]");
  std::string src = a.pos[0];
  while (src.size() > 1 && src.back() == '/') src.pop_back();
  const int writer = a.flags.count("-w") ? atoi(a.flags["-w"].c_str()) : 0;
  if (writer < 0) Usage("import", "-w must be >= 0");
  std::vector<std::pair<std::string, struct stat>> tree;
  uint64_t total = 0;
  Status s = ScanTree(src, &tree, &total);
  if (!s.ok()) return Fail("import", s);
  std::unique_ptr<FileSystem> fs;
  s = FileSystem::Open(FsOptions(), a.pos[1], writer, &fs);
  if (!s.ok()) return Fail("import", s);
  std::string base = a.pos.size() == 3 ? a.pos[2] : "/";
  Progress progress("import", total, tree.size(), a.flags.count("-q"));
  const bool src_is_dir = S_ISDIR(tree[0].second.st_mode);
  for (const auto& [p, st] : tree) {
    std::string rel = p.substr(src.size());
    std::string dst = src_is_dir ? base + rel
                                 : Join(base, p.substr(p.rfind('/') + 1));
    if (S_ISDIR(st.st_mode)) {
      if (rel.empty() && base == "/") continue;
      s = fs->Mkdir(dst, st.st_mode & 07777);
      if (s.code() == Code::kAlreadyExists) s = Status::OK();
    } else if (S_ISREG(st.st_mode)) {
      s = ImportFile(p, fs.get(), dst, st, &progress);
    } else {
      fprintf(stderr, "sluice import: skipping %s (not a regular file or "
              "directory)\n", p.c_str());
    }
    if (!s.ok()) break;
  }
  Status c = fs->Close();
  if (s.ok()) s = c;
  progress.Finish();
  return s.ok() ? 0 : Fail("import", s);
}

}  // namespace tool
}  // namespace sluice
