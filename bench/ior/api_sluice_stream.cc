// SLUICE-STREAM: the stream API (sluice::ofstream / ifstream) over Sluice's
// file layer. All ranks write one logical file, /data, in a file system at
// <path>.sluicefs, each rank through its own store (writer = rank); with -F
// each rank has its own file system. Reads go through the merged view of
// every writer (FileSystem::kReader). -e ends the write with a flush and a
// write barrier. Rank 0 creates the shared file (truncating it) before the
// other ranks mount their stores and open it.
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
    if (write && info.shared) return OpenShared(root, rank);
    Status s = fstream::initialize(root, write ? 0 : FileSystem::kReader,
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
  // One file written by every rank: rank 0 creates it, cutting what an
  // earlier run left in any writer's store, before the others mount their
  // stores (a store mounted for writing cannot be cut by another writer);
  // then they open it without truncation, as IOR's ranks open a shared
  // file rank 0 created, once rank 0's write barrier has made it visible.
  // Rank 0's outcome reaches every rank, so none is left waiting.
  Status OpenShared(const std::string& root, int rank) {
    Status s;
    if (rank == 0) {
      s = fstream::initialize(root, 0, options_);
      if (s.ok()) {
        out_ = std::make_unique<ofstream>("/data", std::ios::binary);
        if (!out_->is_open()) s = out_->rdbuf()->status();
      }
      // What the other ranks' stores see of writer 0's is what it synced.
      if (s.ok()) s = fstream::write_barrier();
    }
    int ok0 = s.ok() ? 1 : 0;
    MPI_Bcast(&ok0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) return s;
    if (!ok0) return Status::IOError("SLUICE-STREAM: rank 0 could not create "
                                     "the shared file");
    s = fstream::initialize(root, rank, options_);
    if (!s.ok()) return s;
    out_ = std::make_unique<ofstream>(
        "/data", std::ios::binary | std::ios::in | std::ios::out);
    if (!out_->is_open()) return out_->rdbuf()->status();
    return Status::OK();
  }

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
