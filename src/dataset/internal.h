// The dataset layer's state behind the handles of sluice/dataset.h.
#ifndef SLUICE_DATASET_INTERNAL_H_
#define SLUICE_DATASET_INTERNAL_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "dataset/drain_queue.h"
#include "dataset/group.h"
#include "dataset/node_writer.h"
#include "dataset/part_sink.h"
#include "dataset/record.h"
#include "fs/fs_store.h"
#include "fs/reader.h"
#include "sluice/config.h"
#include "sluice/dataset.h"
#include "sluice/fs.h"
#include "tier/drain.h"
#include "util/posix.h"

namespace sluice {
namespace dataset {

// Runs the non-blocking requests of a context, in the order issued, on one
// thread started at the first request.
class Worker {
 public:
  ~Worker() { Stop(); }
  // False, and the job not taken, once Stop has run.
  bool Run(std::function<void()> job);
  void Stop();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // GUARDED_BY(mu_)
  bool stopping_ = false;                   // GUARDED_BY(mu_)
  std::thread thread_;
};

// Phase counters, updated from any thread.
struct PhaseCounter {
  std::atomic<uint64_t> calls{0}, bytes{0}, nanos{0};
  void Add(uint64_t b, uint64_t ns) {
    calls.fetch_add(1, std::memory_order_relaxed);
    bytes.fetch_add(b, std::memory_order_relaxed);
    nanos.fetch_add(ns, std::memory_order_relaxed);
  }
  PhaseStats Get() const {
    return {calls.load(), bytes.load(), nanos.load()};
  }
};

// Whether a store's error means its data root failed under it (full,
// failing): then the parts of an id may move to the next root.
inline bool RootFailed(const Status& s) {
  return s.code() == Code::kNoSpace || s.code() == Code::kIOError;
}

// "dataset NAME id ID", for messages.
std::string IdText(const std::string& name, int64_t id);
// A strided request's blocks: not overlapping, no overflow, ending below
// offset 2^62.
Status CheckStrided(uint64_t offset, size_t count, size_t block,
                    uint64_t stride);

// rm -r of `path` inside a file system.
Status RemoveFsTree(FileSystem* f, const std::string& path);
bool Truthy(const std::string& value);  // Config::ParseBool's true

uint64_t NowNs();  // CLOCK_MONOTONIC
int64_t WallNs();  // CLOCK_REALTIME

}  // namespace dataset

struct ContextImpl {
  std::unique_ptr<dataset::Group> group;
  std::string name;
  // data_roots, in order, and the one this context's stores are in: the
  // first that every rank could write to at init (tiers.cc).
  std::vector<std::string> roots;
  int root_index = 0;
  std::string data_root;   // roots[root_index]
  std::string root;        // data_root/name
  std::string commit_dir;  // root/commit
  // ROOT/name of data root k.
  std::string RootDir(int k) const {
    return posix::JoinPath(roots[static_cast<size_t>(k)], name);
  }
  // The root committed ids drain to: the one after data_root (-1: none).
  int DrainRoot() const {
    return root_index + 1 < static_cast<int>(roots.size()) ? root_index + 1
                                                           : -1;
  }
  // This rank's stores on later roots, where the parts of an id go when
  // the context's root fails under them (fallback.cc).
  std::map<int, std::unique_ptr<FileSystem>> root_fs;  // GUARDED_BY(mu)
  // Stores whose root failed under an id (its parts moved on): what they
  // could not write at the context's end is no committed id's, so their
  // close is reported, not the end's error.
  std::set<FileSystem*> failed_fs;  // GUARDED_BY(mu)
  // This rank's store on root k: fs for the context's root (OwnStore);
  // else opened (made, with `create`) on first use. NotFound without
  // `create` when there is none.
  Status StoreAt(int k, bool create, FileSystem** out);
  // The drains in flight of this process's stores.
  std::unique_ptr<dataset::DrainQueue> drains;
  Config config;
  FsOptions fs_options;
  // This rank's store, no other writer's, and a sink over it. Opened at
  // init, except on a rank of a file_per_node context that is not its
  // node's leader and has no store yet: then by its first basic-mode
  // write (OwnStore).
  std::unique_ptr<FileSystem> fs;
  std::unique_ptr<dataset::PartSink> store_sink;
  // file_per_node: on a node's leader with other ranks on its node, the
  // server writing their parts into fs; on those ranks, its address (or
  // "!" and why the leader could not serve), and their sink over it once
  // connected (NodeSink).
  std::unique_ptr<dataset::NodeServer> node_server;
  std::string node_address;
  std::unique_ptr<dataset::PartSink> node_sink;  // GUARDED_BY(mu)
  // dataset::OpenContextReadOnly: no store of its own (fs is null); ids
  // are only read.
  bool read_only = false;
  dataset::Worker worker;
  std::mutex mu;
  int open_datasets = 0;               // GUARDED_BY(mu)
  std::vector<std::string> stat_lines;  // GUARDED_BY(mu): stats=1
  DatasetStats total;                  // GUARDED_BY(mu)
  // Every id closed, as this rank saw it.
  std::map<std::pair<std::string, int64_t>, DatasetStats> id_stats;  // GUARDED_BY(mu)
  // Per dataset: the last committed checkpoint's cost and when it ended.
  struct LastCheckpoint {
    double cost_s = 0;
    uint64_t commit_ns = 0;  // CLOCK_MONOTONIC
  };
  std::map<std::string, LastCheckpoint> last_checkpoint;  // GUARDED_BY(mu)
  bool finished = false;               // GUARDED_BY(mu)

  // The store of writer `w` of this context.
  std::string StorePath(int w) const { return FileSystem::StorePath(root, w); }
  // Opens this rank's store if it is not open. Called by collective calls
  // only (OpenDataset), as fs is read without mu elsewhere.
  Status OwnStore();
  // Whether this rank's store takes its parts in dataset mode `mode` (a
  // RecordMode): basic, or the node's leader in file_per_node.
  bool HoldsParts(int mode) const;
  // Where this rank writes its parts in dataset mode `mode`. The sink
  // lives as long as the context.
  Status Sink(int mode, dataset::PartSink** out);
  bool Finished() {
    std::lock_guard<std::mutex> lock(mu);
    return finished;
  }
  // A variable's value, under mu (SetConfig may change it meanwhile).
  ConfigValue Get(const std::string& name, const std::string& dataset = "") {
    std::lock_guard<std::mutex> lock(mu);
    return config.Get(name, dataset);
  }
  // Ids open for writing in this context: a second open of one is refused
  // (the same answer on every rank, as they open ids together).
  std::set<std::pair<std::string, int64_t>> writing;  // GUARDED_BY(mu)
  // Rank 0 reads the commit directory: the committed ids of `dataset`
  // (every dataset when empty) as name -> record file names.
  Status ListRecords(const std::string& dataset,
                     std::vector<DatasetIdInfo>* ids,
                     std::vector<std::string>* datasets);
};

struct ElementImpl;

struct DatasetImpl {
  // Shared: a dataset handle the application keeps past the context's end
  // finds its store closed, not freed.
  std::shared_ptr<ContextImpl> ctx;
  std::string name;
  int64_t id = 0;
  bool write = false;
  int mode = dataset::kModeBasic;  // writing: where the parts go
  dataset::PartSink* sink = nullptr;  // writing: the context's, for them
  // Writing: the data root this rank's parts are on (the context's, until
  // it fails under them: FallBack), the sink over that root's store when
  // it is not the context's, and the lock that keeps writes out while the
  // parts move (writes and closes share it; a move holds it alone).
  std::atomic<int> root_k{0};
  std::unique_ptr<dataset::PartSink> moved_sink;
  std::shared_mutex switch_mu;
  // Reading: the root whose stores hold the parts.
  int store_root = 0;
  std::string dir;  // /NAME/ID in a store
  dataset::CommitRecord record;  // reading: the committed index
  // Reading: the id's copy drained to data root `drained_root`, when the
  // id is read from there (it is not complete on the context's root) or
  // a read fell back to it; opened on first need (DrainedCopy).
  int drained_root = -1;         // where the id was found drained
  bool from_drained = false;     // every read goes to the drained copy
  std::shared_ptr<tier::DrainedId> drained;  // GUARDED_BY(stores_mu)
  std::atomic<uint64_t> fallback_reads{0};
  Status DrainedCopy(std::shared_ptr<tier::DrainedId>* out);
  int64_t open_ns = 0;
  uint64_t open_mono_ns = 0;  // CLOCK_MONOTONIC at the start of the open

  std::mutex mu;
  std::vector<std::shared_ptr<ElementImpl>> elements;  // GUARDED_BY(mu)
  // Reading: the stores opened so far, by writer. A mutex of their own:
  // an element's read takes it while holding the element's mutex, and
  // OpenElement takes mu, then an element's.
  mutable std::mutex stores_mu;
  std::map<int, std::shared_ptr<fs::FsStore>> stores;  // GUARDED_BY(stores_mu)
  bool closed = false;                                 // GUARDED_BY(mu)
  Status close_status;                                 // GUARDED_BY(mu)

  dataset::PhaseCounter open, write_c, sync, commit, read, close;

  // Reading: writer `w`'s store, opened read-only on first use.
  Status Store(int w, std::shared_ptr<fs::FsStore>* out);
  // Writing, after `why` (a failed write, flush or create on root `from`,
  // seen under a shared switch_mu since released): moves every part of
  // this rank to the next data root and writes there from now on (basic
  // mode); OK at once if another thread moved them already. An error
  // naming the root when they cannot move (the last root; file_per_node,
  // whose parts are in the node leader's process).
  Status FallBack(const Status& why, int from);
  // Moves this rank's parts to root `target` (switch_mu held alone).
  Status MoveParts(int target);
  // Dataset::Close: every rank's parts on one root, the highest any rank
  // fell back to (collective); *root is it.
  Status OneRoot(int* root);
  DatasetStats Stats() const;
  // Closes every element (waiting for its requests); writing, fills
  // *index with this rank's share of the commit record.
  Status CloseElements(std::vector<dataset::ElementRecord>* index);
};

struct RequestImpl {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Status status;
  size_t got = 0;
  void Finish(const Status& s, size_t g) {
    std::lock_guard<std::mutex> lock(mu);
    status = s;
    got = g;
    done = true;
    cv.notify_all();
  }
  Status Wait(size_t* g) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return done; });
    if (g) *g = got;
    return status;
  }
};

struct ElementImpl {
  // Shared: an element handle may outlive its dataset's (the dataset drops
  // its elements when it ends, so the two do not keep each other).
  std::shared_ptr<DatasetImpl> ds;
  std::string name;
  ElementKind kind = ElementKind::kShared;
  int rank = 0;       // whose element (unique), or this rank (shared)
  std::string path;   // in the store
  bool write = false;

  std::mutex mu;
  std::condition_variable idle;  // inflight fell to 0
  bool closed = false;   // GUARDED_BY(mu)
  bool closing = false;  // GUARDED_BY(mu): Close began; no new work
  int inflight = 0;      // GUARDED_BY(mu): writes between check and record
  // The first failed write or close: every later Close returns it, and the
  // dataset's Close fails with it, so an id never commits without data a
  // write of it could not store.
  Status error;          // GUARDED_BY(mu)
  std::vector<std::shared_ptr<RequestImpl>> pending;  // GUARDED_BY(mu)
  // Writing.
  std::unique_ptr<dataset::PartFile> file;
  std::map<uint64_t, uint64_t> ranges;  // GUARDED_BY(mu): begin -> end
  uint64_t end = 0;                     // GUARDED_BY(mu)
  dataset::PartRecord part;             // at close
  // Reading.
  const dataset::ElementRecord* rec = nullptr;  // in ds->record
  uint64_t rec_size = 0;
  // By the parts (indexes in rec->parts) a read meets.
  std::map<std::vector<size_t>, std::unique_ptr<fs::PartsFile>> readers;  // GUARDED_BY(mu)

  Status Write(uint64_t offset, const char* buf, size_t n);
  Status Read(uint64_t offset, char* buf, size_t n, size_t* got);
  Status ReadStores(uint64_t offset, char* buf, size_t len);  // mu held
  // `count` blocks of `block` bytes at offset + i * stride (CheckStrided
  // passed), buf contiguous; *done / *got count the bytes moved.
  Status WriteStrided(uint64_t offset, const char* buf, size_t count,
                      size_t block, uint64_t stride, size_t* done);
  Status ReadStrided(uint64_t offset, char* buf, size_t count, size_t block,
                     uint64_t stride, size_t* got);
  Status Close();
  Status Submit(std::function<Status(size_t*)> op,
                std::unique_ptr<Request>* req);
};

}  // namespace sluice

#endif  // SLUICE_DATASET_INTERNAL_H_
