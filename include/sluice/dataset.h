// Checkpoints as applications think of them (libhio's model): a context,
// datasets with integer ids, and named elements inside each id.
//
//   std::unique_ptr<sluice::Context> ctx;
//   sluice::Context::InitSingle("sim", "", &ctx);    // or mpi::InitContext
//   std::unique_ptr<sluice::Dataset> ds;
//   ctx->OpenDataset("restart", 40, sluice::kDatasetWrite, &ds);  // collective
//   std::unique_ptr<sluice::Element> el;
//   ds->OpenElement("density", sluice::ElementKind::kShared, &el);
//   el->Write(rank * n, data, n);
//   el->Close();
//   ds->Close();                  // collective: the atomic commit of id 40
//   ...
//   ctx->OpenDataset("restart", sluice::kDatasetIdHighest, sluice::kDatasetRead, &ds);
//
// Layout. A context NAME lives in DATA_ROOT/NAME (the first of the
// variable data_roots; sluice/config.h): one store per writer
// (writer.<N>, a file system of sluice/fs.h that only its writer writes)
// and the directory commit/ of commit records. In a store, the element E of
// dataset D, id I is the file /D/I/shared/E (a shared element: every rank
// writes its part of one logical element) or /D/I/rank.<R>/E (rank R's own).
// The variable dataset_mode says who writes: basic, every rank its own
// store; file_per_node, one store per node (the ranks sharing memory),
// which the node's lowest rank writes for all of them (rank R's part of a
// shared element is then /D/I/shared.<R>/E).
//
// Atomic commit. Closing a dataset opened for writing is collective: every
// rank makes its data durable (a write barrier), all ranks agree, then
// rank 0 writes the id's commit record durably (a temporary name, fsync,
// rename, fsync of the directory). Only then does the id exist for readers;
// if any rank fails, Close fails on every rank, naming the first failing
// rank, and the id does not appear. Data of an id without a commit record
// (a failed close, a killed job) is removed, and its space given back, when
// the next context over the same root is initialised. A record carries
// the index of the id: each element's size and which writer holds which of
// its ranges, so a reader opens only the stores it reads from.
//
// Collective calls (Context::Init*, OpenDataset, Dataset::Close, UnlinkId,
// Fini) must be made by every rank of the context's communicator in the
// same order. Everything else is local.
//
// Lifetimes: handles may be destroyed in any order. An Element used after
// its Dataset closed, or a Dataset after its Context ended, fails
// (InvalidArgument) rather than touching freed memory.
//
// Thread-safety: a Context may be used from several threads, but its
// collective calls must be issued in the same order on every rank (one
// thread making them is simplest). A Dataset and its Elements may be used
// from several threads; an Element's calls on overlapping ranges from two
// threads at once have no defined order.
#ifndef SLUICE_DATASET_H_
#define SLUICE_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/config.h"
#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

// Ids to open for reading: the highest committed id, or the one committed
// last.
constexpr int64_t kDatasetIdHighest = -1;
constexpr int64_t kDatasetIdNewest = -2;

enum DatasetFlags : int {
  kDatasetRead = 1,
  // Creates the id; an id already committed is AlreadyExists (unlink it
  // first).
  kDatasetWrite = 2,
};

enum class ElementKind : int {
  // One logical element written by many ranks at offsets they share (the
  // file layer's N-1): each rank writes its parts; bytes written by two
  // ranks are Corruption when read.
  kShared = 0,
  // One element per rank, at offsets of its own.
  kUnique = 1,
};

enum class IdState : int {
  kCommitted = 0,
  // Data of the id was found without a commit record, and removed.
  kReclaimed = 1,
};

struct DatasetIdInfo {
  int64_t id = 0;
  IdState state = IdState::kCommitted;
  uint64_t bytes = 0;          // data of every element (committed ids)
  int64_t commit_time_ns = 0;  // CLOCK_REALTIME of the commit (or reclaim)
  int ranks = 0;               // ranks that wrote it
  int writers = 0;             // stores that hold it
};

// Bytes and time of each phase, as libhio's performance variables.
struct PhaseStats {
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t nanos = 0;
};
struct DatasetStats {
  PhaseStats open;    // OpenDataset (the agreement, the id's directories)
  PhaseStats write;   // element writes (bytes)
  PhaseStats sync;    // Close: the data made durable on every rank (this
                      // rank's barrier, then the wait for all to agree)
  PhaseStats commit;  // Close: the index gathered, the commit record
                      // written, the outcome shared
  PhaseStats read;    // element reads (bytes)
  PhaseStats close;   // the whole of Close (waits, sync and commit included)
  std::string root;   // the data root used
  // Reading: the data root the id's bytes came from, and how many reads
  // fell back to a later root's drained copy because the first root's copy
  // was missing or damaged (a lost node, a bad checksum).
  std::string read_root;
  uint64_t fallback_reads = 0;
};

// Where the drain of a committed id to the next data root stands.
enum class DrainPhase : int {
  kNone = 0,      // not drained: one data root, stage_mode disable, or an
                  // id this process never committed or drained
  kQueued = 1,    // waiting for a drain thread (or for the context's end)
  kDraining = 2,  // bytes_done of bytes_total are durable on the next root
  kDurable = 3,   // complete, verified and committed on root `root`
  kFailed = 4,    // stopped by `error`; the copy on the first root is kept
  kSkipped = 5,   // stage_mode auto: a newer id came before its drain began
};

struct DrainState {
  DrainPhase phase = DrainPhase::kNone;
  int root = -1;          // index in data_roots of the drain's destination
  std::string root_path;  // that root
  // This process's share (its store's parts), durable on the destination.
  uint64_t bytes_done = 0;
  uint64_t bytes_total = 0;
  // Of bytes_done, those an earlier drain (a killed job's) had made
  // durable: found in its journal, not copied again.
  uint64_t bytes_resumed = 0;
  Status error;
};

class Element;
class Request;
class Dataset;
struct ContextImpl;

class SLUICE_EXPORT Context {
 public:
  // A context of one process (no MPI): rank 0 of 1. `config_file` may be
  // empty. `name` is a directory name under the data root: letters,
  // digits, '.', '_', '-', not starting with '.', at most 128 bytes.
  static Status InitSingle(const std::string& name,
                           const std::string& config_file,
                           std::unique_ptr<Context>* out);
  // The same with variables already set by the API (Config::Set), which
  // beat the environment and the file (the file: config_file among them,
  // if set).
  static Status InitSingle(const std::string& name, const Config& settings,
                           std::unique_ptr<Context>* out);

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int rank() const;
  int size() const;
  const std::string& name() const;
  // DATA_ROOT/NAME.
  const std::string& root() const;
  // The configuration; not to be read while another thread calls
  // SetConfig (GetConfig may be).
  const Config& config() const;
  // A variable's value as the context uses it (for dataset `dataset`, if
  // not empty), safe beside SetConfig. Local.
  ConfigValue GetConfig(const std::string& name,
                        const std::string& dataset = "") const;
  // Sets a variable by the API, for what the context does afterwards. The
  // variables its store was opened with (every store option, extent_bytes,
  // data_roots, config_file_prefix) are fixed: setting one is an error
  // naming where to set it instead. Local.
  Status SetConfig(const std::string& name, const std::string& value);

  // Opens id `id` (>= 0, or kDatasetIdHighest / kDatasetIdNewest to read)
  // of dataset `name` (same rules as a context's name). Collective.
  Status OpenDataset(const std::string& name, int64_t id, int flags,
                     std::unique_ptr<Dataset>* out);
  // The committed (and reclaimed) ids of dataset `name`, ascending. Local.
  Status ListIds(const std::string& name, std::vector<DatasetIdInfo>* out);
  // The datasets that have at least one committed id. Local.
  Status ListDatasets(std::vector<std::string>* out);
  // Removes id `id` of dataset `name`: its commit record first (the id is
  // gone once that is durable), then every rank's data. Collective.
  Status UnlinkId(const std::string& name, int64_t id);

  // Where the drain of id `id` of dataset `name` stands, as far as this
  // process knows (its own share, and whether the whole id is durable on
  // the next root). Local.
  Status GetDrainState(const std::string& name, int64_t id,
                       DrainState* out);
  // Waits until every rank's share of id `id` is drained (or has failed or
  // was skipped) and returns the id's state: kDurable once the whole id is
  // committed on the next root; the first failure otherwise, as the error.
  // An id that is not queued anywhere returns at once. Collective.
  Status DrainWait(const std::string& name, int64_t id, DrainState* out);

  // Statistics of every dataset id this context closed, summed.
  DatasetStats TotalStats() const;
  // Statistics of id `id` of dataset `name` as this rank saw it, if this
  // context opened and closed it (NotFound otherwise).
  Status IdStats(const std::string& name, int64_t id, DatasetStats* out) const;

  // Whether to write a checkpoint of dataset `name` now (libhio's
  // hio_dataset_should_checkpoint). Yes when this context has not written
  // one yet; when the job's end is near (variable job_end_time, less than
  // job_end_margin away, by default twice the last checkpoint's cost);
  // when SIGUSR1 arrived since the last answer (the batch system's
  // warning; the handler is installed by the first call); and, with the
  // variable mtbf set, when the time since the last commit reaches Daly's
  // optimum interval for the measured cost C of the last checkpoint (open
  // to commit) and the MTBF M: sqrt(2CM) (1 + sqrt(C/2M)/3 + C/18M) - C
  // while C < 2M, else M. Without mtbf, only the first three. Collective:
  // every rank gets yes when any rank says yes, so they stay in step.
  Status ShouldCheckpoint(const std::string& name, bool* now);

  // Drains what stage_mode says to drain by now (end_of_job: every
  // committed id not yet drained) and waits for drains in flight (with a
  // line of progress on stderr every few seconds when SLUICE_PROGRESS=1);
  // a drain that failed is Fini's error. Then closes the stores (after
  // printing one line per dataset id with stats=1). Collective. Datasets still open are an error: they were not
  // committed, and must not be used afterwards. Idempotent. The destructor
  // does the same without the collective agreement (it may run after
  // MPI_Finalize).
  Status Fini();

  // For InitSingle and mpi::InitContext.
  explicit Context(std::shared_ptr<ContextImpl> impl);
  ContextImpl* impl() { return impl_.get(); }

 private:
  Status Finish(bool wait_drains);  // Fini's local part
  std::shared_ptr<ContextImpl> impl_;
};

struct DatasetImpl;

class SLUICE_EXPORT Dataset {
 public:
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::string& name() const;
  // The id opened (HIGHEST and NEWEST resolved).
  int64_t id() const;
  bool writable() const;

  // Opens element `name` (letters, digits, '.', '_', '-'; at most 128
  // bytes). Writing creates it. `rank` (kUnique, reading only) picks
  // whose element: -1 for this rank's own. Local.
  Status OpenElement(const std::string& name, ElementKind kind,
                     std::unique_ptr<Element>* out, int rank = -1);
  // Names of the elements in the id (reading only): shared ones, and the
  // unique ones of rank `rank` (-1: this rank).
  Status ListElements(std::vector<std::string>* shared,
                      std::vector<std::string>* unique, int rank = -1) const;

  // Writing: waits for this rank's requests, closes its elements, makes
  // its data durable, and commits the id if every rank did (see above).
  // Reading: releases the stores. Collective. Idempotent (the first
  // outcome again).
  Status Close();
  // Close, writing, by a rank that failed in a way the dataset could not
  // see (its own bookkeeping, say): with `local` not OK the id is not
  // committed, and every rank's Close fails naming the first failing rank.
  // Reading, or with `local` OK: the same as Close().
  Status Close(const Status& local);

  DatasetStats stats() const;

  explicit Dataset(std::shared_ptr<DatasetImpl> impl);
  DatasetImpl* impl() { return impl_.get(); }

 private:
  std::shared_ptr<DatasetImpl> impl_;
};

struct ElementImpl;

class SLUICE_EXPORT Element {
 public:
  ~Element();
  Element(const Element&) = delete;
  Element& operator=(const Element&) = delete;

  const std::string& name() const;
  ElementKind kind() const;

  // Writes n bytes at `offset`. The data is the dataset's once the
  // dataset's Close commits it.
  Status Write(uint64_t offset, const void* buf, size_t n);
  // Writes `count` blocks of `block` bytes, taken one after the other from
  // buf, to offsets offset, offset + stride, offset + 2 * stride, ...
  // (stride >= block): a rank's share of an interleaved shared element.
  Status WriteStrided(uint64_t offset, const void* buf, size_t count,
                      size_t block, uint64_t stride);
  // Reads n bytes at `offset` into buf; *got < n only past the element's
  // end. Holes read as zeros. Bytes written by two ranks are Corruption.
  Status Read(uint64_t offset, void* buf, size_t n, size_t* got);
  // The converse of WriteStrided: *got is the bytes read (count * block
  // when every block is inside the element).
  Status ReadStrided(uint64_t offset, void* buf, size_t count, size_t block,
                     uint64_t stride, size_t* got);

  // Non-blocking forms: the request runs in the background, on the user's
  // buffer (not copied), which must stay as it is until Request::Wait or a
  // Test that says done. Requests of one element run in the order issued.
  Status WriteNb(uint64_t offset, const void* buf, size_t n,
                 std::unique_ptr<Request>* req);
  Status WriteStridedNb(uint64_t offset, const void* buf, size_t count,
                        size_t block, uint64_t stride,
                        std::unique_ptr<Request>* req);
  Status ReadNb(uint64_t offset, void* buf, size_t n,
                std::unique_ptr<Request>* req);
  Status ReadStridedNb(uint64_t offset, void* buf, size_t count, size_t block,
                       uint64_t stride, std::unique_ptr<Request>* req);

  // The element's size: writing, this rank's part so far; reading, the
  // committed size.
  uint64_t size() const;

  // Waits for the element's requests; writing, makes its data part of the
  // id (durable at the dataset's Close). Idempotent.
  Status Close();

  explicit Element(std::shared_ptr<ElementImpl> impl);

 private:
  std::shared_ptr<ElementImpl> impl_;
};

struct RequestImpl;

class SLUICE_EXPORT Request {
 public:
  ~Request();  // waits
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  // Waits until the request is done; its outcome, and for reads *got (may
  // be null) the bytes read.
  Status Wait(size_t* got = nullptr);
  // Done yet? When *done, the outcome as Wait's.
  Status Test(bool* done, size_t* got = nullptr);

  explicit Request(std::shared_ptr<RequestImpl> impl);

 private:
  std::shared_ptr<RequestImpl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_DATASET_H_
