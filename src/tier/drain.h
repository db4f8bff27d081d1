// The drain: copying a committed dataset id from the context directory of
// one data root (SRC = ROOT/NAME) to that of the next (DST), into the
// containers of container.h, verified and committed there; and reading an
// id so drained, in place.
//
// A drainer works on writers: the stores that hold the id's parts
// (writer.<W> in SRC). Each writer's parts are copied by one process at a
// time (a lock on its journal, flock(2)); that process is the writer's own
// in a job (its store is open there), or any process that can open the
// store read-only (`sluice drain`). For every flush of bytes (a few chunks
// of a part) the drainer writes them into their container, fdatasyncs it,
// reads them back from the destination (after dropping them from the page
// cache) and compares their checksums with those it computed while reading
// the source, and only then appends a journal entry and fdatasyncs the
// journal: a drain killed at any moment resumes after its last entry. A
// writer finished is marked done; whoever marks the last writer done
// publishes the id: the index written into the drain directory, journals
// and markers removed, the directory renamed to data/DATASET.ID, the index
// written to commit/DATASET.ID.index (temporary name, fsync, rename,
// directory fsync). Every step is idempotent, so a drainer that finds the
// work half published finishes it.
#ifndef SLUICE_TIER_DRAIN_H_
#define SLUICE_TIER_DRAIN_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/fs_store.h"
#include "sluice/options.h"
#include "sluice/status.h"
#include "tier/container.h"

namespace sluice {
namespace tier {

// Where a drainer finds the stores of SRC.
class StoreSource {
 public:
  virtual ~StoreSource() = default;
  // Writer `writer`'s store; NotFound when it is not reachable here (a
  // node-local root of another node).
  virtual Status Get(int writer, fs::FsStore** out) = 0;
};

// Opens the stores under `ctx_dir` read-only (snapshot reads), each on
// first use.
std::unique_ptr<StoreSource> NewReadOnlySource(const std::string& ctx_dir,
                                               const StoreOptions& options);

struct DrainOptions {
  Aggregation aggregation = Aggregation::kNN;
  int group = 0;
  // Bytes per second this call writes at most; 0: no cap.
  uint64_t bandwidth = 0;
  // Bytes of a part between two journal entries (a multiple of kChunkBytes).
  uint64_t flush_bytes = 8ull * kChunkBytes;
  // Progress, added to as bytes become durable on DST (resumed ones
  // included); may be null.
  std::atomic<uint64_t>* bytes_done = nullptr;
  // The bytes to drain, added to as each writer's drain begins; may be null.
  std::atomic<uint64_t>* bytes_total = nullptr;
  // Set by another thread to stop early (Incomplete).
  const std::atomic<bool>* stop = nullptr;
};

struct DrainResult {
  bool durable = false;   // the index is on DST
  bool published = false; // this call published it
  uint64_t total = 0;     // bytes of the writers drained here
  uint64_t written = 0;   // bytes this call wrote to containers
  uint64_t resumed = 0;   // bytes a journal said were durable already
  std::vector<int> drained;  // writers done (here or before)
  std::vector<int> busy;     // writers another process is draining
  std::vector<int> absent;   // writers whose store is not reachable here
  Aggregation aggregation = Aggregation::kNN;  // as the drain began it
};

// Drains id `id` of dataset `dataset` from SRC `src_dir` (its record in
// src_dir/commit) to DST `dst_dir`: the writers in `writers` (empty: every
// writer of the id `source` reaches). An id already on DST is durable at
// once. The aggregation and group are those of the first drainer of the
// id (kept in the drain directory), not necessarily `options`'s.
Status DrainId(const std::string& src_dir, const std::string& dst_dir,
               const std::string& dataset, int64_t id,
               const std::vector<int>& writers, StoreSource* source,
               const DrainOptions& options, DrainResult* out);

// Whether id `id` of `dataset` is on DST (its index exists); publishes it
// first when every writer is done but a drainer stopped while publishing.
// With `record` (the id's commit record on SRC), an index of another
// commit of the id (removed and written again since) does not count.
Status Published(const std::string& dst_dir, const std::string& dataset,
                 int64_t id, bool* durable,
                 const std::string* record = nullptr);

// What the journals in DST's drain directory say of id `id`: bytes durable
// there per writer (and whether done). Missing directory: empty map.
struct WriterProgress {
  uint64_t bytes = 0;
  uint64_t total = 0;
  bool done = false;
};
Status DrainProgress(const std::string& src_dir, const std::string& dst_dir,
                     const std::string& dataset, int64_t id,
                     std::map<int, WriterProgress>* out);

// Keeps the `keep` newest ids of `dataset` drained to DST (keep > 0),
// removing the older ones (RemoveDrained): each is removed only once
// `keep` newer ones are complete there.
Status KeepLastDrained(const std::string& dst_dir, const std::string& dataset,
                       int keep);

// Removes id `id` from DST: its index first, then its containers and any
// drain directory. A missing id is fine.
Status RemoveDrained(const std::string& dst_dir, const std::string& dataset,
                     int64_t id);

// An id on DST, read in place: the index read once, containers opened as
// reads reach them.
class DrainedId {
 public:
  // NotFound when DST has no index of the id.
  static Status Open(const std::string& dst_dir, const std::string& dataset,
                     int64_t id, std::unique_ptr<DrainedId>* out);
  ~DrainedId();
  const dataset::CommitRecord& record() const { return index_.record; }
  const DrainIndex& index() const { return index_; }
  // Bytes [offset, offset + n) of element `e` (an index into the record's
  // elements), clipped to its size; holes read as zeros; bytes two parts
  // hold are Corruption, as is a chunk whose checksum differs.
  Status Read(size_t e, uint64_t offset, char* buf, size_t n, size_t* got);

 private:
  DrainedId() = default;
  Status Fd(int container, int* fd);
  std::string dir_;  // data/DATASET.ID
  DrainIndex index_;
  std::mutex mu_;
  std::map<int, int> fds_;  // GUARDED_BY(mu_)
};

// DST/data/DATASET.ID and DST/drain/DATASET.ID.
std::string DataDir(const std::string& dst_dir, const std::string& dataset,
                    int64_t id);
std::string StagingDir(const std::string& dst_dir, const std::string& dataset,
                       int64_t id);

}  // namespace tier
}  // namespace sluice

#endif  // SLUICE_TIER_DRAIN_H_
