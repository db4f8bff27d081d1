// SLUICE-KV: the K/V API, one key per transfer, one store per writer
// (<path>.<rank>.sluice in shared mode). Keys are the big-endian logical
// offset, so a store's keys sort in file order. -e makes the write phase end
// with a write barrier; without it, Close still flushes.
#include <cstring>

#include "ior/api.h"
#include "sluice/kv.h"

namespace sluice {
namespace bench {
namespace {

class SluiceKvApi : public Api {
 public:
  explicit SluiceKvApi(const Params& p) {
    for (const auto& [k, v] : p.store_options) options_.Set(k, v);
    const BackendKind kind = options_.backend == BackendKind::kDefault
                                 ? BackendKind::kRocksDB
                                 : options_.backend;
    options_desc_ = "SLUICE-KV: backend " + std::string(BackendName(kind)) +
                    ", one store per writer";
    for (const auto& [k, v] : p.store_options) options_desc_ += ", " + k + "=" + v;
  }
  std::string Note() const override { return options_desc_; }
  bool PerWriterStorage() const override { return true; }

  Status Open(const OpenInfo& info) override {
    path_ = StorePath(info);
    StoreOptions o = options_;
    o.read_only = info.access == Access::kRead;
    return Store::Open(o, path_, &store_);
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t) override {
    char key[8];
    for (int i = 0; i < 8; ++i) key[i] = static_cast<char>(offset >> (56 - 8 * i));
    if (access == Access::kWrite) {
      return store_->Put(std::string_view(key, 8), std::string_view(buf, len));
    }
    Status s = store_->Get(std::string_view(key, 8), &value_);
    if (s.ok() && value_.size() != len) {
      return Status::Corruption("value at offset " + std::to_string(offset) +
                                " of " + path_ + " has " +
                                std::to_string(value_.size()) + " bytes, not " +
                                std::to_string(len));
    }
    if (s.ok()) memcpy(buf, value_.data(), len);
    return s;
  }
  Status Fsync() override { return store_->WriteBarrier(); }
  Status Close() override {
    Status s = store_->Close();
    store_.reset();
    return s;
  }
  void Remove(const OpenInfo& info) override { RemovePath(StorePath(info)); }

 private:
  static std::string StorePath(const OpenInfo& info) {
    if (!info.shared) return info.path + ".sluice";
    char r[16];
    snprintf(r, sizeof r, ".%08d", info.data_rank);
    return info.path + r + ".sluice";
  }

  StoreOptions options_;
  std::string options_desc_;
  std::string path_;
  std::unique_ptr<Store> store_;
  std::string value_;
};

}  // namespace

std::unique_ptr<Api> MakeSluiceKvApi(const Params& p) {
  return std::make_unique<SluiceKvApi>(p);
}

}  // namespace bench
}  // namespace sluice
