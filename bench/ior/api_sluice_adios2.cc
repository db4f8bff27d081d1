// SLUICE-ADIOS2: ADIOS2's C++ API, as -a ADIOS2 calls it, with the engine
// set to Sluice's plugin (libsluice_adios2) instead of BP5: one global
// array "data" of uint8, the logical file's bytes, each transfer a Put or
// Get of its range; one step per repetition, committed (durable) at
// EndStep. The plugin runs over MPI_COMM_WORLD (the wheel's ADIOS2 has
// no MPI), so every rank writes into one output, as with SLUICE-DATASET.
// The stores: <-o>.sluiceadios2/bench (data_roots, ContextName), dataset
// "ckpt"; the store options (-O name=value) go to the engine as its
// parameters. The stores stay after the run (the engine's context lives
// until MPI_Finalize, so they cannot be removed under it): the last step. The plugin is found through ADIOS2_PLUGIN_PATH, else
// installed beside libsluice (bin/../lib), else in the build tree.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <adios2.h>

#include <cstdio>
#include <vector>

#include "ior/adios2_xfer.h"
#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

std::string PluginDir() {
  if (const char* e = getenv("ADIOS2_PLUGIN_PATH")) return e;
  std::vector<std::string> tries;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string bin(self);
    bin = bin.substr(0, bin.rfind('/'));
    tries.push_back(bin + "/../" SLUICE_BENCH_LIBDIR);
  }
  tries.push_back(SLUICE_BENCH_ADIOS2_PLUGIN_BUILT);
  for (const auto& t : tries) {
    if (access((t + "/libsluice_adios2.so").c_str(), R_OK) == 0) return t;
  }
  return "";
}

class SluiceAdios2Api : public Api {
 public:
  explicit SluiceAdios2Api(const Params& p)
      : root_(p.path + ".sluiceadios2"), options_(p.store_options) {
    const std::string dir = PluginDir();
    if (dir.empty()) {
      init_ = Status::NotFound(
          "SLUICE-ADIOS2: libsluice_adios2.so not found (set "
          "ADIOS2_PLUGIN_PATH to its directory)");
    } else {
      setenv("ADIOS2_PLUGIN_PATH", dir.c_str(), 1);
      // The engine's context starts here, untimed, as SLUICE-DATASET's
      // does in its constructor: an open for reading (no step yet) and a
      // close leave it open for the repetitions (collective).
      try {
        adios2::IO io = adios_.DeclareIO("start");
        Configure(io);
        adios2::Engine e = io.Open(p.path, adios2::Mode::Read);
        e.Close();
        adios_.RemoveIO("start");
      } catch (const std::exception& e) {
        init_ = Status::IOError(std::string("SLUICE-ADIOS2: starting: ") + e.what());
      }
    }
  }
  std::string Note() const override {
    return "SLUICE-ADIOS2: ADIOS2 " ADIOS2_VERSION_STR
           " with the Plugin engine libsluice_adios2 (" +
           std::string(getenv("ADIOS2_PLUGIN_PATH") ? getenv("ADIOS2_PLUGIN_PATH") : "?") +
           "), over MPI_COMM_WORLD; one step a repetition, committed at "
           "EndStep; its context started before the first repetition (as "
           "SLUICE-DATASET's); stores in " + root_ + "/bench (emptied after each "
           "repetition by an open for writing without a step; kept after the "
           "run)";
  }

  Status Open(const OpenInfo& info) override {
    if (!init_.ok()) return init_;
    write_ = info.access == Access::kWrite;
    shared_ = info.shared;
    base_ = shared_ ? 0 : static_cast<uint64_t>(info.data_rank) * info.rank_bytes;
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const uint64_t shape = shared_ ? info.file_size
                                   : info.rank_bytes * static_cast<uint64_t>(size);
    try {
      io_ = adios_.DeclareIO("bench" + std::to_string(ios_++));
      Configure(io_);
      if (write_) {
        var_ = io_.DefineVariable<uint8_t>("data", {shape}, {0}, {1});
        engine_ = io_.Open(info.path, adios2::Mode::Write);
        engine_.BeginStep();
      } else {
        engine_ = io_.Open(info.path, adios2::Mode::Read);
        if (engine_.BeginStep() != adios2::StepStatus::OK) {
          return Status::NotFound("SLUICE-ADIOS2: no step in " + root_);
        }
        var_ = io_.InquireVariable<uint8_t>("data");
        if (!var_) return Status::Corruption("SLUICE-ADIOS2: no variable 'data'");
      }
    } catch (const std::exception& e) {
      return Status::IOError(std::string("SLUICE-ADIOS2 open: ") + e.what());
    }
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t rank_offset) override {
    return Adios2Xfer(engine_, var_, access, buf, len,
                      shared_ ? offset : base_ + rank_offset,
                      "SLUICE-ADIOS2 transfer");
  }
  // EndStep commits: the data is durable when Close returns.
  Status Fsync() override { return Status::OK(); }
  Status Close() override {
    try {
      engine_.EndStep();
      engine_.Close();
      adios_.RemoveIO(io_.Name());
    } catch (const std::exception& e) {
      return Status::IOError(std::string("SLUICE-ADIOS2 close: ") + e.what());
    }
    return Status::OK();
  }
  // As an application empties an output: an open for writing (which
  // removes the steps there) and a close without a step. Collective, so
  // every rank calls it (PerWriterStorage). The stores stay: the engine
  // keeps its context open until MPI_Finalize.
  void Remove(const OpenInfo& info) override {
    if (!init_.ok()) return;
    try {
      adios2::IO io = adios_.DeclareIO("remove" + std::to_string(ios_++));
      Configure(io);
      adios2::Engine e = io.Open(info.path, adios2::Mode::Write);
      e.Close();
      adios_.RemoveIO(io.Name());
    } catch (const std::exception& e) {
      fprintf(stderr, "SLUICE-ADIOS2: emptying %s: %s\n", root_.c_str(), e.what());
    }
  }
  bool PerWriterStorage() const override { return true; }

 private:
  void Configure(adios2::IO& io) const {
    io.SetEngine("Plugin");
    io.SetParameter("PluginName", "sluice");
    io.SetParameter("PluginLibrary", "sluice_adios2");
    io.SetParameter("data_roots", root_);
    io.SetParameter("ContextName", "bench");
    io.SetParameter("DatasetName", "ckpt");
    for (const auto& [k, v] : options_) io.SetParameter(k, v);
  }

  Status init_;
  const std::string root_;
  const std::vector<std::pair<std::string, std::string>> options_;
  adios2::ADIOS adios_;
  adios2::IO io_;
  adios2::Variable<uint8_t> var_;
  adios2::Engine engine_;
  bool write_ = false, shared_ = true;
  uint64_t base_ = 0;
  int ios_ = 0;
};

}  // namespace

std::unique_ptr<Api> MakeSluiceAdios2Api(const Params& p) {
  return std::make_unique<SluiceAdios2Api>(p);
}

}  // namespace bench
}  // namespace sluice
