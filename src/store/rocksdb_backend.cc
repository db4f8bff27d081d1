// The RocksDB adapter, tuned as LSMIO tunes it for write-once checkpoint
// data (see StoreOptions for each knob).
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/flush_block_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/backend.h"
#include "store/rocksdb_env.h"
#include "store/store_threads.h"

namespace sluice {
namespace {

Status FromRocks(const rocksdb::Status& s, const std::string& what,
                 const std::string& dir) {
  if (s.ok()) return Status::OK();
  std::string msg = "rocksdb " + what + " in " + dir + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNoSpace()) return Status::NoSpace(msg);
  if (s.IsNotSupported()) return Status::NotSupported(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(msg);
  if (s.IsIncomplete()) return Status::Incomplete(msg);
  return Status::IOError(msg);
}

rocksdb::Slice ToSlice(std::string_view v) {
  return rocksdb::Slice(v.data(), v.size());
}

// Append as a merge: concatenation, no separator.
class AppendOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    new_value->clear();
    if (existing) {
      new_value->reserve(existing->size() + value.size());
      new_value->assign(existing->data(), existing->size());
    }
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "sluice.append"; }
};

// RocksDB's info log, kept off the data root: a full root would otherwise
// fail the log's own writes (and RocksDB 7.8 asserts on the next one).
// Errors still reach the caller as a Status; this prints them too.
//
// While held (a snapshot reader's open), lines wait in memory: an open
// that races the writer's housekeeping logs what it could not read (a log
// the writer deleted meanwhile) and is tried again; only the lines of an
// open that fails in the end are printed.
class StderrErrorLogger : public rocksdb::Logger {
 public:
  StderrErrorLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::ERROR_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    vsnprintf(line, sizeof line, format, ap);
    std::lock_guard<std::mutex> lock(mu_);
    if (held_) {
      if (lines_.size() < 64) lines_.emplace_back(line);
      return;
    }
    fprintf(stderr, "sluice: rocksdb: %s\n", line);
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  // Ends holding; prints the held lines if `print`, else drops them.
  void Release(bool print) {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    if (print) {
      for (const std::string& line : lines_) {
        fprintf(stderr, "sluice: rocksdb: %s\n", line.c_str());
      }
    }
    lines_.clear();
  }

 private:
  std::mutex mu_;
  bool held_ = false;               // GUARDED_BY(mu_)
  std::vector<std::string> lines_;  // GUARDED_BY(mu_)
};

// The default Env's background threads (RocksDB's flushes and compactions)
// are process-wide statics that live until exit. A process that forks after
// using a store then hands its child a copy of their condition variables
// with waiters that do not exist there, and the child hangs in exit(), in
// their destructors (glibc's pthread_cond_destroy waits for the waiters).
// Each store therefore runs its background work on threads of its own,
// which Stop() ends when the store closes: a closed store leaves no thread
// behind, and a child forked after that exits, and can open stores, as any
// process can.
class StoreThreadsEnv : public rocksdb::EnvWrapper {
 public:
  // RocksDB's defaults: one thread each for flushes (HIGH) and compactions
  // (LOW), none in the BOTTOM pool (then not used) and the USER pool.
  // `target` gives the file system (and must outlive this Env).
  explicit StoreThreadsEnv(rocksdb::Env* target)
      : rocksdb::EnvWrapper(target),
        pools_{{"sluice:rdb:bot", 0},
               {"sluice:rdb:lo", 1},
               {"sluice:rdb:hi", 1},
               {"sluice:rdb:user", 0}} {}

  static const char* kClassName() { return "SluiceStoreThreadsEnv"; }
  const char* Name() const override { return kClassName(); }

  void Schedule(void (*function)(void*), void* arg, Priority pri, void* tag,
                void (*unsched)(void*)) override {
    // After Stop(): the work is dropped, as UnSchedule does.
    if (!pool(pri).Submit({function, arg, tag, unsched}) && unsched) {
      unsched(arg);
    }
  }
  int UnSchedule(void* tag, Priority pri) override {
    const std::vector<StoreThreads::Job> dropped = pool(pri).Take(tag);
    for (const StoreThreads::Job& j : dropped) {
      if (j.unsched) j.unsched(j.arg);
    }
    return static_cast<int>(dropped.size());
  }
  unsigned int GetThreadPoolQueueLen(Priority pri) const override {
    return static_cast<unsigned int>(pool(pri).Queued());
  }
  void SetBackgroundThreads(int n, Priority pri) override {
    pool(pri).SetLimit(n);
  }
  void IncBackgroundThreadsIfNeeded(int n, Priority pri) override {
    pool(pri).RaiseLimit(n);
  }
  int GetBackgroundThreads(Priority pri) override { return pool(pri).Limit(); }
  void LowerThreadPoolIOPriority(Priority) override {}
  void LowerThreadPoolCPUPriority(Priority) override {}
  rocksdb::Status LowerThreadPoolCPUPriority(Priority,
                                             rocksdb::CpuPriority) override {
    return rocksdb::Status::OK();
  }

  // Runs what is queued, then ends and joins every thread. The DB must be
  // closed first (it waits for its own work; nothing is queued after that).
  void Stop() {
    for (StoreThreads& p : pools_) p.Stop();
  }

 private:
  StoreThreads& pool(Priority pri) {
    return pools_[pri >= BOTTOM && pri < TOTAL ? pri : LOW];
  }
  const StoreThreads& pool(Priority pri) const {
    return pools_[pri >= BOTTOM && pri < TOTAL ? pri : LOW];
  }

  static_assert(BOTTOM == 0 && LOW == 1 && HIGH == 2 && USER == 3 &&
                    TOTAL == 4,
                "pools_ is initialised in RocksDB's order of priorities");
  StoreThreads pools_[TOTAL];  // by Priority: BOTTOM, LOW, HIGH, USER
};

// Cuts data blocks by size, as RocksDB's default does, but also gives every
// large value (>= kLargeValue) a block of its own. Checksums are per block:
// a damaged byte in a large value (checkpoint data) then spoils only that
// value's block, never the small keys around it (a file layer's directory
// entries and inodes), so the damage stays attributable.
class IsolateLargeValuesPolicy : public rocksdb::FlushBlockPolicy {
 public:
  static constexpr size_t kLargeValue = 4096;
  explicit IsolateLargeValuesPolicy(size_t block_size)
      : block_size_(block_size) {}
  bool Update(const rocksdb::Slice& key, const rocksdb::Slice& value) override {
    const bool large = value.size() >= kLargeValue;
    const size_t entry = key.size() + value.size();
    const bool flush =
        bytes_ > 0 && (large || last_large_ || bytes_ + entry > block_size_);
    if (flush) bytes_ = 0;
    bytes_ += entry;
    last_large_ = large;
    return flush;
  }

 private:
  const size_t block_size_;
  size_t bytes_ = 0;
  bool last_large_ = false;
};

class IsolateLargeValuesFactory : public rocksdb::FlushBlockPolicyFactory {
 public:
  const char* Name() const override { return "SluiceIsolateLargeValues"; }
  rocksdb::FlushBlockPolicy* NewFlushBlockPolicy(
      const rocksdb::BlockBasedTableOptions& t,
      const rocksdb::BlockBuilder&) const override {
    return new IsolateLargeValuesPolicy(t.block_size);
  }
};

// The store's durability hook (Backend::SetDurabilityHook), run before
// every flush RocksDB starts and, with the WAL on, before every write. A
// flush cannot be refused from its listener, so once the hook has failed
// there the file system refuses to create table files: the flush fails
// (RocksDB then stops taking writes), and no table makes durable a
// location whose value may not be.
class DurabilityGuard {
 public:
  void Set(Backend::DurabilityHook hook) {
    std::lock_guard<std::mutex> lock(mu_);
    hook_ = std::move(hook);
  }
  Status Run() {
    Backend::DurabilityHook hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failed_.ok()) return failed_;
      hook = hook_;
    }
    return hook ? hook() : Status::OK();
  }
  void BeforeFlush() {
    Status s = Run();
    if (s.ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.ok()) {
      failed_ = Status(s.code(), "the values could not be made durable "
                                 "before a flush of the tree: " + s.message());
    }
  }
  Status failed() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
  }

 private:
  std::mutex mu_;
  Backend::DurabilityHook hook_;  // GUARDED_BY(mu_)
  Status failed_;                 // GUARDED_BY(mu_)
};

class GuardListener : public rocksdb::EventListener {
 public:
  explicit GuardListener(std::shared_ptr<DurabilityGuard> guard)
      : guard_(std::move(guard)) {}
  const char* Name() const override { return "SluiceDurabilityGuard"; }
  void OnFlushBegin(rocksdb::DB*, const rocksdb::FlushJobInfo&) override {
    guard_->BeforeFlush();
  }

 private:
  std::shared_ptr<DurabilityGuard> guard_;
};

class GuardedFileSystem : public rocksdb::FileSystemWrapper {
 public:
  GuardedFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target,
                    std::shared_ptr<DurabilityGuard> guard)
      : rocksdb::FileSystemWrapper(target), guard_(std::move(guard)) {}
  static const char* kClassName() { return "SluiceGuardedFileSystem"; }
  const char* Name() const override { return kClassName(); }
  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* out,
      rocksdb::IODebugContext* dbg) override {
    const std::string_view n(name);
    if (n.size() > 4 && n.substr(n.size() - 4) == ".sst") {
      Status failed = guard_->failed();
      if (!failed.ok()) return rocksdb::IOStatus::IOError(failed.ToString());
    }
    return target()->NewWritableFile(name, options, out, dbg);
  }

 private:
  std::shared_ptr<DurabilityGuard> guard_;
};

class RocksDBIterator : public Iterator {
 public:
  // `lower`/`upper` must outlive `it` (ReadOptions points at them): the
  // caller creates the iterator through Make.
  static std::unique_ptr<Iterator> Make(rocksdb::DB* db,
                                        rocksdb::ReadOptions r,
                                        std::string_view lower,
                                        std::string_view upper,
                                        std::string dir) {
    std::unique_ptr<RocksDBIterator> it(new RocksDBIterator(
        std::string(lower), std::string(upper), std::move(dir)));
    if (!it->lower_.empty()) {
      it->lower_slice_ = rocksdb::Slice(it->lower_);
      r.iterate_lower_bound = &it->lower_slice_;
    }
    if (!it->upper_.empty()) {
      it->upper_slice_ = rocksdb::Slice(it->upper_);
      r.iterate_upper_bound = &it->upper_slice_;
    }
    it->it_.reset(db->NewIterator(r));
    return it;
  }
  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void Seek(std::string_view t) override { it_->Seek(ToSlice(t)); }
  void SeekForPrev(std::string_view t) override { it_->SeekForPrev(ToSlice(t)); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override {
    rocksdb::Slice k = it_->key();
    return std::string_view(k.data(), k.size());
  }
  std::string_view value() const override {
    rocksdb::Slice v = it_->value();
    return std::string_view(v.data(), v.size());
  }
  Status status() const override {
    return FromRocks(it_->status(), "scan", dir_);
  }

 private:
  RocksDBIterator(std::string lower, std::string upper, std::string dir)
      : lower_(std::move(lower)), upper_(std::move(upper)),
        dir_(std::move(dir)) {}

  const std::string lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  const std::string dir_;
  std::unique_ptr<rocksdb::Iterator> it_;  // last: destroyed first
};

class RocksDBBackend : public Backend {
 public:
  RocksDBBackend(const StoreOptions& options, std::string dir)
      : options_(options), dir_(std::move(dir)) {
    write_.disableWAL = !options.wal;
    write_.sync = options.sync_writes;
    read_.verify_checksums = true;
    read_.fill_cache = options.block_cache_bytes > 0;
  }
  ~RocksDBBackend() override { Close(); }

  Status Open() {
    rocksdb::Options o;
    fs_env_ = rocksdb::NewCompositeEnv(std::make_shared<GuardedFileSystem>(
        RocksDBFileSystemOverEnv(rocksdb::FileSystem::Default()), guard_));
    env_ = std::make_unique<StoreThreadsEnv>(fs_env_.get());
    o.env = env_.get();
    o.listeners.push_back(std::make_shared<GuardListener>(guard_));
    o.create_if_missing = !options_.read_only;
    o.paranoid_checks = true;
    o.compression = options_.compression ? rocksdb::kLZ4Compression
                                         : rocksdb::kNoCompression;
    o.write_buffer_size = options_.write_buffer_size;
    o.max_write_buffer_number = options_.max_write_buffers;
    o.min_write_buffer_number_to_merge = 1;
    o.disable_auto_compactions = !options_.auto_compaction;
    if (!options_.auto_compaction) {
      // With compaction off, level-0 only grows: never stall on its size.
      o.level0_slowdown_writes_trigger = 1 << 30;
      o.level0_stop_writes_trigger = 1 << 30;
      o.soft_pending_compaction_bytes_limit = 0;
      o.hard_pending_compaction_bytes_limit = 0;
    }
    o.allow_mmap_reads = options_.mmap_reads;
    o.allow_mmap_writes = options_.mmap_writes;
    o.use_direct_io_for_flush_and_compaction = options_.direct_io_flush;
    o.use_direct_reads = options_.direct_io_reads;
    o.max_background_flushes = options_.flush_threads;
    env_->SetBackgroundThreads(options_.flush_threads,
                               rocksdb::Env::Priority::HIGH);
    o.enable_blob_files = options_.blob_files;
    o.min_blob_size = options_.min_blob_size;
    o.blob_file_size = options_.blob_file_size;
    o.max_open_files = -1;
    // Checkpoints are read back in order: keep the kernel's readahead
    // (RocksDB would fadvise(RANDOM) every table file). Measured: stream
    // reads 564 -> 861 MiB/s together with readahead_size below.
    o.advise_random_on_open = false;
    auto logger = std::make_shared<StderrErrorLogger>();
    o.info_log = logger;
    // The store flushes for itself at close (a barrier); a flush RocksDB
    // made on its own while shutting down would skip the listeners, and so
    // the durability hook.
    o.avoid_flush_during_shutdown = true;
    o.merge_operator = std::make_shared<AppendOperator>();

    rocksdb::BlockBasedTableOptions t;
    t.block_size = options_.block_size;
    t.flush_block_policy_factory = std::make_shared<IsolateLargeValuesFactory>();
    if (options_.bloom_bits > 0) {
      t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options_.bloom_bits));
    }
    if (options_.block_cache_bytes == 0) {
      t.no_block_cache = true;
    } else {
      t.block_cache = rocksdb::NewLRUCache(CacheBytes(options_));
    }
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));

    const bool snapshot = options_.read_only && options_.snapshot_reads;
    if (snapshot) logger->Hold();
    rocksdb::DB* db = nullptr;
    rocksdb::Status s =
        options_.read_only ? rocksdb::DB::OpenForReadOnly(o, dir_, &db)
                           : rocksdb::DB::Open(o, dir_, &db);
    // A snapshot reader may race the writer's own housekeeping: a MANIFEST
    // replaced or a table file deleted between reading the file list and
    // opening the file. The next attempt reads the new list.
    for (int retry = 0; !s.ok() && snapshot && retry < 20 &&
                        (s.IsIOError() || s.IsPathNotFound() ||
                         s.IsNotFound() || s.IsCorruption());
         ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      db = nullptr;
      s = rocksdb::DB::OpenForReadOnly(o, dir_, &db);
    }
    if (snapshot) logger->Release(!s.ok());
    db_.reset(db);
    return FromRocks(s, "open", dir_);
  }

  Status Get(std::string_view key, std::string* value) override {
    rocksdb::PinnableSlice v;
    rocksdb::Status s =
        db_->Get(read_, db_->DefaultColumnFamily(), ToSlice(key), &v);
    if (s.IsNotFound()) return Status::NotFound("key not found");
    if (s.ok()) value->assign(v.data(), v.size());
    return FromRocks(s, "get", dir_);
  }
  Status Put(std::string_view key, std::string_view value) override {
    Status h = BeforeLoggedWrite();
    if (!h.ok()) return h;
    return AfterWrite(FromRocks(db_->Put(write_, ToSlice(key), ToSlice(value)),
                                "put", dir_));
  }
  Status Delete(std::string_view key) override {
    Status h = BeforeLoggedWrite();
    if (!h.ok()) return h;
    return AfterWrite(
        FromRocks(db_->Delete(write_, ToSlice(key)), "delete", dir_));
  }
  Status Append(std::string_view key, std::string_view value) override {
    Status h = BeforeLoggedWrite();
    if (!h.ok()) return h;
    return AfterWrite(FromRocks(
        db_->Merge(write_, ToSlice(key), ToSlice(value)), "append", dir_));
  }
  Status Write(const WriteBuffer& buffer) override {
    rocksdb::WriteBatch batch;
    for (const auto& [key, value] : buffer.entries()) {
      rocksdb::Status s = value ? batch.Put(key, *value) : batch.Delete(key);
      if (!s.ok()) return FromRocks(s, "batch", dir_);
    }
    Status h = BeforeLoggedWrite();
    if (!h.ok()) return h;
    return AfterWrite(FromRocks(db_->Write(write_, &batch), "write", dir_));
  }
  void SetDurabilityHook(DurabilityHook hook) override {
    guard_->Set(std::move(hook));
  }
  std::unique_ptr<Iterator> NewIterator(std::string_view lower,
                                        std::string_view upper) override {
    // No readahead_size: RocksDB's prefetch buffer copies every block once
    // more; the kernel's readahead does the job without the copy.
    return RocksDBIterator::Make(db_.get(), read_, lower, upper, dir_);
  }
  // After a failed flush or logged write (a full disk), RocksDB 7.8 must
  // not be asked to flush again: its table writer, and its log writer's
  // sync, assert on the retry. The error stays, as the store's data cannot
  // become durable any more.
  Status Flush() override {
    if (options_.read_only) return Status::OK();
    std::lock_guard<std::mutex> lock(error_mu_);
    if (!error_.ok()) return error_;
    if (options_.wal) {
      error_ = FromRocks(db_->FlushWAL(/*sync=*/true), "flush log", dir_);
      return error_;
    }
    rocksdb::FlushOptions f;
    f.wait = true;
    error_ = FromRocks(db_->Flush(f), "flush", dir_);
    return error_;
  }
  Status Close() override {
    if (!db_) return Status::OK();
    Status tidy = TidyTables();
    rocksdb::Status s = db_->Close();
    db_.reset();
    env_->Stop();
    Status c = FromRocks(s, "close", dir_);
    return tidy.ok() ? c : tidy;
  }
  bool HasNativeAppend() const override { return true; }
  bool WantsWriteBuffer() const override { return false; }

 private:
  // With compaction off, every flush adds a level-0 table that overlaps all
  // the others, and a store that many short processes write (a shell's
  // tools through the interposer: one table per process) would grow without
  // end: each open then opens every table, each iterator merges them all.
  // A writer that closes a store of many tables and little data (all tables
  // together no larger than one write buffer: the merge costs about one more
  // flush) merges them into one. Checkpoint data in the tree (layout lsm)
  // is larger than that and is never rewritten here.
  Status TidyTables() {
    if (options_.read_only || options_.auto_compaction ||
        options_.tidy_tables == 0 || !error_.ok()) {
      return Status::OK();
    }
    rocksdb::ColumnFamilyMetaData meta;
    db_->GetColumnFamilyMetaData(&meta);
    if (meta.levels.empty() ||
        meta.levels[0].files.size() < static_cast<size_t>(options_.tidy_tables) ||
        meta.size > options_.write_buffer_size) {
      return Status::OK();
    }
    rocksdb::CompactRangeOptions c;
    c.bottommost_level_compaction =
        rocksdb::BottommostLevelCompaction::kForceOptimized;
    return FromRocks(db_->CompactRange(c, nullptr, nullptr), "merge tables",
                     dir_);
  }

  // A logged write is replayed after a crash: what it needs must be
  // durable first. After a failed logged write nothing more is written
  // (see Flush).
  Status BeforeLoggedWrite() {
    if (!options_.wal) return Status::OK();
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_.ok()) return error_;
    }
    return guard_->Run();
  }
  Status AfterWrite(Status s) {
    if (options_.wal && !s.ok() && s.code() != Code::kInvalidArgument) {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (error_.ok()) error_ = s;
    }
    return s;
  }

  const StoreOptions options_;
  const std::string dir_;
  rocksdb::WriteOptions write_;
  rocksdb::ReadOptions read_;
  std::shared_ptr<DurabilityGuard> guard_ = std::make_shared<DurabilityGuard>();
  std::unique_ptr<rocksdb::Env> fs_env_;  // outlives env_
  std::unique_ptr<StoreThreadsEnv> env_;  // outlives db_
  std::unique_ptr<rocksdb::DB> db_;
  std::mutex error_mu_;
  // The first failed flush or logged write (see Flush).
  Status error_;  // GUARDED_BY(error_mu_)
};

Status OpenRocksDBBackend(const StoreOptions& options, const std::string& dir,
                          std::unique_ptr<Backend>* out) {
  auto backend = std::make_unique<RocksDBBackend>(options, dir);
  Status s = backend->Open();
  if (s.ok()) *out = std::move(backend);
  return s;
}

const BackendModule kModule = {SLUICE_BUILD_VERSION, nullptr,
                               OpenRocksDBBackend};

}  // namespace
}  // namespace sluice

// The module's one export (backend.h: kBackendModuleSymbol).
extern "C" __attribute__((visibility("default")))
const sluice::BackendModule* sluice_backend_module_v1() {
  return &sluice::kModule;
}
