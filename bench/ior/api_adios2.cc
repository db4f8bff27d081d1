// ADIOS2: the BP5 engine. The ADIOS2 available here (the PyPI wheel) is
// built without MPI, so every rank runs its own serial writer and file
// (<path>.<rank>.bp), even in shared-file mode; the output says so.
//
// ADIOS2-BB: the same writers with the BP4 engine (BP5 accepts
// BurstBufferPath and ignores it) and BurstBufferPath = the fast root: BP4
// writes <fast root>/<path>.bb.bp (<path> is absolute, under the slow root)
// and a drainer thread per writer copies it to <path>.bb.bp on the slow
// root, then deletes the fast copy. (BP4 lowercases every parameter's
// value, BurstBufferPath too: the parser refuses a fast root with
// capitals.) What ADIOS2 2.12's source does (engine/bp4/BP4Writer.cpp,
// toolkit/burstbuffer/FileDrainer*.cpp): the engine's DoClose only tells
// the drainer that no
// more work comes (Finish); but Engine::Close of the C++ (and C) binding
// then removes the engine from its IO, and destroying the BP4Writer joins
// the drainer thread (~FileDrainerSingleThread). So Close returns once the
// drain has ended: the application waits for it. The drainer writes through
// an unbuffered std::ofstream and closes it without fsync, and reports its
// errors only on stderr. So WaitDurable checks the drain (no data left on
// the fast root, the output on the slow root as large as the data) and
// fsyncs every file of the output directory, the directory and its parent.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <adios2.h>

#include <cstdio>

#include "ior/adios2_xfer.h"
#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

class Adios2Api : public Api {
 public:
  // `burst_buffer`: "" for BP5 straight to the file; else the fast root of
  // ADIOS2-BB.
  Adios2Api(bool fsync, std::string burst_buffer)
      : fsync_(fsync), bb_(std::move(burst_buffer)) {}
  std::string Note() const override {
    if (!bb_.empty()) {
      return "ADIOS2 " ADIOS2_VERSION_STR
             " BP4 engine, BurstBufferPath=" + bb_ +
             ", serial build: one writer and one .bp per rank; its drainer "
             "thread copies each to the slow root and Close waits for it; "
             "the drained files are then fsynced by sluice-bench";
    }
    return "ADIOS2 " ADIOS2_VERSION_STR
           " BP5 engine, serial build: one writer and one .bp per rank "
           "(no MPI aggregation)";
  }
  bool PerWriterStorage() const override { return true; }
  bool Tiered() const override { return !bb_.empty(); }

  Status Open(const OpenInfo& info) override {
    path_ = BpPath(info);
    access_ = info.access;
    bytes_ = info.rank_bytes;
    try {
      io_ = adios_.DeclareIO("bench" + std::to_string(ios_++));
      io_.SetEngine(bb_.empty() ? "BP5" : "BP4");
      io_.SetParameter("Profile", "Off");
      if (info.access == Access::kWrite) {
        if (!bb_.empty()) io_.SetParameter("BurstBufferPath", bb_);
        var_ = io_.DefineVariable<uint8_t>("data", {info.rank_bytes}, {0},
                                           {info.rank_bytes});
        engine_ = io_.Open(path_, adios2::Mode::Write);
        engine_.BeginStep();
      } else {
        engine_ = io_.Open(path_, adios2::Mode::ReadRandomAccess);
        var_ = io_.InquireVariable<uint8_t>("data");
        if (!var_) return Status::Corruption("no variable 'data' in " + path_);
      }
    } catch (const std::exception& e) {
      return Status::IOError("ADIOS2 open " + path_ + ": " + e.what());
    }
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t,
              uint64_t rank_offset) override {
    return Adios2Xfer(engine_, var_, access, buf, len, rank_offset,
                      "ADIOS2 transfer " + path_);
  }
  // BP5 has no sync call: Close fsyncs the files it wrote. ADIOS2-BB:
  // WaitDurable fsyncs the drained files.
  Status Fsync() override { return Status::OK(); }
  Status Close() override {
    try {
      if (access_ == Access::kWrite) engine_.EndStep();
      engine_.Close();  // ADIOS2-BB: joins the drainer thread
      adios_.RemoveIO(io_.Name());
    } catch (const std::exception& e) {
      return Status::IOError("ADIOS2 close " + path_ + ": " + e.what());
    }
    if (access_ == Access::kWrite && fsync_ && bb_.empty()) {
      return SyncDir(path_);
    }
    return Status::OK();
  }
  Status WaitDurable() override {
    Status s = CheckDrained();
    if (s.ok()) s = SyncDir(path_);
    if (s.ok()) s = SyncOne(path_);
    if (s.ok()) s = SyncOne(Parent(path_));
    return s;
  }
  void Remove(const OpenInfo& info) override {
    RemovePath(BpPath(info));
    if (bb_.empty()) return;
    // BP4 made <fast root>/<path>.bp and its parents: remove what is left
    // of them (the drain deleted the files), parents only when empty.
    std::string dir = FastCopy(BpPath(info));
    RemovePath(dir);
    for (dir = Parent(dir); dir.size() > bb_.size(); dir = Parent(dir)) {
      if (rmdir(dir.c_str()) != 0) break;
    }
  }

 private:
  // <path>[.<rank>].bp, or .bb.bp for ADIOS2-BB (so that the two, kept
  // with -k, do not overwrite each other).
  std::string BpPath(const OpenInfo& info) const {
    const char* ext = bb_.empty() ? ".bp" : ".bb.bp";
    if (!info.shared) return info.path + ext;
    char r[16];
    snprintf(r, sizeof r, ".%08d", info.data_rank);
    return info.path + r + ext;
  }
  // Where BP4 puts the fast copy of `bp`: BurstBufferPath + "/" + the
  // name given to Open (here absolute, under the slow root).
  std::string FastCopy(const std::string& bp) const {
    return bb_ + (bp.empty() || bp[0] != '/' ? "/" : "") + bp;
  }
  // "/a/b/c" -> "/a/b"; "/a" -> "/"; "c" -> ".".
  static std::string Parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  // The drain ended (Close joined it, which deleted the fast copy's data)
  // and left the slow root at least the bytes written. ADIOS2 reports a
  // failed drain only on stderr: this and -W/-R are what catch it.
  Status CheckDrained() const {
    const std::string fast = FastCopy(path_);
    uint64_t fast_data = 0, slow_data = 0;
    int fast_files = 0, slow_files = 0;
    DataBytes(fast, &fast_data, &fast_files);
    Status s = DataBytes(path_, &slow_data, &slow_files);
    if (fast_files > 0) {
      return Status::Incomplete(
          "ADIOS2-BB: " + fast + " still holds " + std::to_string(fast_files) +
          " data file(s) after Close: the drain did not end (or this ADIOS2's "
          "Close no longer waits for it), so when " + path_ +
          " is complete cannot be told");
    }
    if (!s.ok()) return s;
    if (slow_files == 0 || slow_data < bytes_) {
      return Status::Incomplete(
          "ADIOS2-BB: the drain to " + path_ +
          " is incomplete: its data files hold " + std::to_string(slow_data) +
          " bytes, fewer than the " + std::to_string(bytes_) +
          " written (ADIOS2's drainer reports its errors on stderr only)");
    }
    return Status::OK();
  }
  // Sums the sizes of the BP data files (data.N) in `dir`.
  static Status DataBytes(const std::string& dir, uint64_t* bytes, int* files) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    while (struct dirent* e = readdir(d)) {
      if (std::string(e->d_name).rfind("data.", 0) != 0) continue;
      struct stat st;
      if (stat((dir + "/" + e->d_name).c_str(), &st) == 0) {
        *bytes += static_cast<uint64_t>(st.st_size);
        ++*files;
      }
    }
    closedir(d);
    return Status::OK();
  }
  static Status SyncOne(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    Status s;
    if (fsync(fd) != 0) s = ErrnoStatus("fsync", path, errno);
    close(fd);
    return s;
  }
  static Status SyncDir(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    Status s;
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      Status f = SyncOne(dir + "/" + e->d_name);
      if (s.ok()) s = f;
    }
    closedir(d);
    return s;
  }

  const bool fsync_;
  const std::string bb_;
  adios2::ADIOS adios_;
  adios2::IO io_;
  adios2::Variable<uint8_t> var_;
  adios2::Engine engine_;
  std::string path_;
  Access access_ = Access::kWrite;
  uint64_t bytes_ = 0;
  int ios_ = 0;
};

}  // namespace

std::unique_ptr<Api> MakeAdios2Api(const Params& p) {
  return std::make_unique<Adios2Api>(p.fsync, "");
}

std::unique_ptr<Api> MakeAdios2BbApi(const Params& p) {
  return std::make_unique<Adios2Api>(p.fsync, p.fast_root);
}

}  // namespace bench
}  // namespace sluice
