// SLUICE-STREAM: the stream API (sluice::ofstream / ifstream) over Sluice's
// file layer. All ranks write one logical file, /data, in a file system at
// <path>.sluicefs, each rank through its own store (writer = rank); with -F
// each rank has its own file system. Reads go through the merged view of
// every writer (FileSystem::kReader). -e ends the write with a flush and a
// write barrier.
#include "ior/api.h"
#include "sluice/stream.h"

namespace sluice {
namespace bench {
namespace {

class SluiceStreamApi : public Api {
 public:
  explicit SluiceStreamApi(const Params& p) {
    for (const auto& [k, v] : p.store_options) options_.store.Set(k, v);
    note_ = "SLUICE-STREAM: sluice::ofstream/ifstream, backend " +
            std::string(BackendName(options_.store.backend ==
                                            BackendKind::kDefault
                                        ? BackendKind::kRocksDB
                                        : options_.store.backend)) +
            ", one store per writer, merged on read";
  }
  std::string Note() const override { return note_; }

  Status Open(const OpenInfo& info) override {
    const std::string root = info.path + ".sluicefs";
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const bool write = info.access == Access::kWrite;
    Status s = fstream::initialize(root, write ? (info.shared ? rank : 0)
                                               : FileSystem::kReader,
                                   options_);
    if (!s.ok()) return s;
    if (write) {
      out_ = std::make_unique<ofstream>("/data", std::ios::binary);
      if (!out_->is_open()) return out_->rdbuf()->status();
    } else {
      in_ = std::make_unique<ifstream>("/data", std::ios::binary);
      if (!in_->is_open()) return in_->rdbuf()->status();
    }
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t) override {
    if (access == Access::kWrite) {
      if (static_cast<uint64_t>(out_->tellp()) != offset) out_->seekp(offset);
      out_->write(buf, static_cast<std::streamsize>(len));
      if (!out_->good()) return Error(out_->rdbuf(), "write", offset);
    } else {
      if (static_cast<uint64_t>(in_->tellg()) != offset) in_->seekg(offset);
      in_->read(buf, static_cast<std::streamsize>(len));
      if (in_->gcount() != static_cast<std::streamsize>(len)) {
        return Error(in_->rdbuf(), "read", offset);
      }
    }
    return Status::OK();
  }
  Status Fsync() override {
    out_->flush();
    if (!out_->good()) return Error(out_->rdbuf(), "flush", 0);
    return fstream::write_barrier();
  }
  Status Close() override {
    Status s;
    if (out_) {
      out_->close();
      if (out_->fail()) s = Error(out_->rdbuf(), "close", 0);
      out_.reset();
    }
    if (in_) {
      in_->close();
      in_.reset();
    }
    Status c = fstream::cleanup();
    return s.ok() ? c : s;
  }
  void Remove(const OpenInfo& info) override {
    RemovePath(info.path + ".sluicefs");
  }

 private:
  static Status Error(const filebuf* b, const char* what, uint64_t offset) {
    if (!b->status().ok()) return b->status();
    return Status::IOError(std::string("SLUICE-STREAM ") + what +
                           " failed at offset " + std::to_string(offset));
  }

  FsOptions options_;
  std::string note_;
  std::unique_ptr<ofstream> out_;
  std::unique_ptr<ifstream> in_;
};

}  // namespace

std::unique_ptr<Api> MakeSluiceStreamApi(const Params& p) {
  return std::make_unique<SluiceStreamApi>(p);
}

}  // namespace bench
}  // namespace sluice
