// ADIOS2: the BP5 engine. The ADIOS2 available here (the PyPI wheel) is
// built without MPI, so every rank runs its own serial writer and file
// (<path>.<rank>.bp), even in shared-file mode; the output says so.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <adios2.h>

#include <cstdio>

#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

class Adios2Api : public Api {
 public:
  explicit Adios2Api(bool fsync) : fsync_(fsync) {}
  std::string Note() const override {
    return "ADIOS2 " ADIOS2_VERSION_STR
           " BP5 engine, serial build: one writer and one .bp per rank "
           "(no MPI aggregation)";
  }
  bool PerWriterStorage() const override { return true; }

  Status Open(const OpenInfo& info) override {
    path_ = BpPath(info);
    access_ = info.access;
    try {
      io_ = adios_.DeclareIO("bench" + std::to_string(ios_++));
      io_.SetEngine("BP5");
      io_.SetParameter("Profile", "Off");
      if (info.access == Access::kWrite) {
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
    try {
      var_.SetSelection({{rank_offset}, {len}});
      uint8_t* p = reinterpret_cast<uint8_t*>(buf);
      if (access == Access::kWrite) {
        engine_.Put(var_, p, adios2::Mode::Sync);  // the buffer is reused
      } else {
        engine_.Get(var_, p, adios2::Mode::Sync);
      }
    } catch (const std::exception& e) {
      return Status::IOError("ADIOS2 transfer " + path_ + ": " + e.what());
    }
    return Status::OK();
  }
  // BP5 has no sync call: Close fsyncs the files it wrote.
  Status Fsync() override { return Status::OK(); }
  Status Close() override {
    try {
      if (access_ == Access::kWrite) engine_.EndStep();
      engine_.Close();
      adios_.RemoveIO(io_.Name());
    } catch (const std::exception& e) {
      return Status::IOError("ADIOS2 close " + path_ + ": " + e.what());
    }
    if (access_ == Access::kWrite && fsync_) return SyncDir(path_);
    return Status::OK();
  }
  void Remove(const OpenInfo& info) override { RemovePath(BpPath(info)); }

 private:
  static std::string BpPath(const OpenInfo& info) {
    if (!info.shared) return info.path + ".bp";
    char r[16];
    snprintf(r, sizeof r, ".%08d", info.data_rank);
    return info.path + r + ".bp";
  }
  static Status SyncDir(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    Status s;
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string f = dir + "/" + e->d_name;
      int fd = open(f.c_str(), O_RDONLY);
      if (fd < 0 || fsync(fd) != 0) s = ErrnoStatus("fsync", f, errno);
      if (fd >= 0) close(fd);
    }
    closedir(d);
    return s;
  }

  const bool fsync_;
  adios2::ADIOS adios_;
  adios2::IO io_;
  adios2::Variable<uint8_t> var_;
  adios2::Engine engine_;
  std::string path_;
  Access access_ = Access::kWrite;
  int ios_ = 0;
};

}  // namespace

std::unique_ptr<Api> MakeAdios2Api(const Params& p) {
  return std::make_unique<Adios2Api>(p.fsync);
}

}  // namespace bench
}  // namespace sluice
