// SLUICE-DATASET: checkpoints through the dataset API (sluice/dataset.h).
// One context for the whole run (data root <path>.sluiceds), opened when
// the API is made, so no repetition pays a store open. Each write
// repetition is one dataset id: one shared element all ranks write at the
// logical file's offsets, or with -F one unique element per rank; Close
// commits it (every rank's barrier, the agreement, the commit record), so
// -e adds nothing. Reads open the id just written. At the end rank 0
// prints the mean open-to-commit overhead: the dataset open, and, once
// every rank's data is durable, the index gathered and the commit record
// written.
//
// With --fast-root/--slow-root the context's data roots are
// <fast root>/<name>.sluiceds,<slow root>/<name>.sluiceds (the -o name) and
// stage_mode is immediate: a committed id lands on the fast root and is
// drained to the slow one; WaitDurable(), below, is when it is there.
#include <stdlib.h>
#include <time.h>

#include <cstdio>

#include "ior/api.h"
#include "sluice/config.h"
#include "sluice/mpi.h"

namespace sluice {
namespace bench {
namespace {

// Returns once id `id` of `dataset` is durable on the slow root (the next
// data root): every rank's share drained, verified and the id committed
// there. Collective.
Status WaitDurable(sluice::Context* ctx, const std::string& dataset,
                   int64_t id) {
  DrainState st;
  Status s = ctx->DrainWait(dataset, id, &st);
  if (!s.ok()) return s;
  if (st.phase != DrainPhase::kDurable) {
    return Status::Incomplete("id " + std::to_string(id) +
                              " is not durable on the slow root (drain "
                              "phase " +
                              std::to_string(static_cast<int>(st.phase)) +
                              ")");
  }
  return Status::OK();
}

class SluiceDatasetApi : public Api {
 public:
  explicit SluiceDatasetApi(const Params& p) : tiered_(p.tiers()) {
    for (const auto& [k, v] : p.store_options) {
      setenv(Config::EnvironmentName(k).c_str(), v.c_str(), 1);
    }
    // SLUICE_ROOT, set for SLUICE-POSIX's interposer (which read it at its
    // start), is another name for the first data root: it would disagree.
    unsetenv("SLUICE_ROOT");
    // data_roots is fixed once the context is open: set by the environment.
    if (tiered_) {
      const std::string name = p.path.substr(p.path.rfind('/') + 1);
      const std::string roots = p.fast_root + "/" + name + ".sluiceds," +
                                p.slow_root + "/" + name + ".sluiceds";
      setenv("SLUICE_DATA_ROOTS", roots.c_str(), 1);
      setenv("SLUICE_STAGE_MODE", "immediate", 1);
    } else {
      setenv("SLUICE_DATA_ROOTS", (p.path + ".sluiceds").c_str(), 1);
    }
    init_ = mpi::InitContext(MPI_COMM_WORLD, "bench", "", &ctx_);
    note_ = "SLUICE-DATASET: one dataset id per repetition, committed at "
            "close; context " +
            (ctx_ ? ctx_->root() : std::string("(not opened)"));
  }
  ~SluiceDatasetApi() override {
    if (!ctx_) return;
    const DatasetStats t = ctx_->TotalStats();
    if (ctx_->rank() == 0 && commits_ > 0) {
      printf("SLUICE-DATASET: open-to-commit overhead of a dataset id (open, "
             "index gathered, commit record written; not the data's sync and "
             "the wait for every rank's), mean of %d "
             "ids on %d ranks: %.2f ms (open %.2f ms, commit %.2f ms); data "
             "sync %.2f ms\n",
             commits_, ctx_->size(),
             (write_open_ns_ + t.commit.nanos) / 1e6 / commits_,
             write_open_ns_ / 1e6 / commits_, t.commit.nanos / 1e6 / commits_,
             t.sync.nanos / 1e6 / commits_);
    }
    ctx_->Fini();
  }
  std::string Note() const override { return note_; }
  bool PerWriterStorage() const override { return true; }
  bool Tiered() const override { return tiered_; }
  Status WaitDurable() override {
    Status s = bench::WaitDurable(ctx_.get(), "ckpt", last_id_);
    if (s.ok()) return s;
    return Status(s.code(),
                  "SLUICE-DATASET with --fast-root/--slow-root: waiting for "
                  "id " + std::to_string(last_id_) + " of dataset ckpt to be "
                  "durable on the slow root: " + s.message());
  }

  Status Open(const OpenInfo& info) override {
    if (!init_.ok()) return init_;
    write_ = info.access == Access::kWrite;
    unique_ = !info.shared;
    const uint64_t t0 = Nanos();
    Status s = ctx_->OpenDataset("ckpt", write_ ? next_id_ : last_id_,
                                 write_ ? kDatasetWrite : kDatasetRead, &ds_);
    if (s.ok() && write_) last_id_ = next_id_++;
    if (s.ok()) {
      s = ds_->OpenElement("data",
                           unique_ ? ElementKind::kUnique : ElementKind::kShared,
                           &el_, unique_ && !write_ ? info.data_rank : -1);
    }
    if (write_) write_open_ns_ += Nanos() - t0;
    return s;
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t rank_offset) override {
    const uint64_t at = unique_ ? rank_offset : offset;
    if (access == Access::kWrite) return el_->Write(at, buf, len);
    size_t got = 0;
    Status s = el_->Read(at, buf, len, &got);
    if (s.ok() && got != len) {
      s = Status::IOError("SLUICE-DATASET: short read at " +
                          std::to_string(at));
    }
    return s;
  }
  // The commit at Close makes the data durable.
  Status Fsync() override { return Status::OK(); }
  Status Close() override {
    Status s = el_->Close();
    el_.reset();
    Status c = ds_->Close();
    ds_.reset();
    if (write_ && c.ok()) ++commits_;
    return s.ok() ? c : s;
  }
  // Called on every rank (PerWriterStorage), once a repetition: the ids.
  void Remove(const OpenInfo&) override {
    for (int64_t id = removed_; id < next_id_; ++id) ctx_->UnlinkId("ckpt", id);
    removed_ = next_id_;
  }

 private:
  static uint64_t Nanos() {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec);
  }

  const bool tiered_;
  Status init_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Dataset> ds_;
  std::unique_ptr<Element> el_;
  std::string note_;
  bool write_ = false, unique_ = false;
  int64_t next_id_ = 0, last_id_ = 0, removed_ = 0;
  int commits_ = 0;
  uint64_t write_open_ns_ = 0;
};

}  // namespace

std::unique_ptr<Api> MakeSluiceDatasetApi(const Params& p) {
  return std::make_unique<SluiceDatasetApi>(p);
}

}  // namespace bench
}  // namespace sluice
