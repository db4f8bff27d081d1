// The LevelDB adapter. LevelDB cannot turn its log off, so with wal=false
// the store buffers updates (WantsWriteBuffer) and writes them as one batch
// at the barrier, as LSMIO does, and the log's records stay in memory until
// the barrier writes and fsyncs them (LogFile).
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>

#include "store/backend.h"
#include "store/leveldb_env.h"
#include "store/store_threads.h"

namespace sluice {
namespace {

Status FromLevel(const leveldb::Status& s, const std::string& what,
                 const std::string& dir) {
  if (s.ok()) return Status::OK();
  std::string msg = "leveldb " + what + " in " + dir + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsNotSupportedError()) return Status::NotSupported(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsIOError() && msg.find("lock") != std::string::npos) {
    return Status::Busy(msg);  // LevelDB admits one opener, readers too
  }
  if (msg.find("No space left") != std::string::npos) {
    return Status::NoSpace(msg);
  }
  return Status::IOError(msg);
}

leveldb::Slice ToSlice(std::string_view v) {
  return leveldb::Slice(v.data(), v.size());
}

Status CheckLevelDBOptions(const StoreOptions& options);

Status Unsupported(const char* option) {
  return Status::NotSupported(std::string("option ") + option +
                              " is not supported by the leveldb backend");
}

// LevelDB has no iterator bounds: they are applied here, to the keys.
class LevelDBIterator : public Iterator {
 public:
  LevelDBIterator(leveldb::Iterator* it, std::string_view lower,
                  std::string_view upper, std::string dir)
      : it_(it), lower_(lower), upper_(upper), dir_(std::move(dir)) {}
  bool Valid() const override {
    if (!it_->Valid()) return false;
    std::string_view k = key();
    return (lower_.empty() || k >= lower_) && (upper_.empty() || k < upper_);
  }
  void SeekToFirst() override {
    if (lower_.empty()) {
      it_->SeekToFirst();
    } else {
      it_->Seek(ToSlice(lower_));
    }
  }
  void Seek(std::string_view t) override {
    it_->Seek(ToSlice(!lower_.empty() && t < lower_ ? std::string_view(lower_) : t));
  }
  void SeekForPrev(std::string_view t) override {
    if (!upper_.empty() && t >= upper_) {
      it_->Seek(ToSlice(upper_));  // the last key below the bound
      if (it_->Valid()) {
        it_->Prev();
      } else {
        it_->SeekToLast();
      }
      return;
    }
    it_->Seek(ToSlice(t));
    if (!it_->Valid()) {
      it_->SeekToLast();
    } else if (key() != t) {
      it_->Prev();
    }
  }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override {
    leveldb::Slice k = it_->key();
    return std::string_view(k.data(), k.size());
  }
  std::string_view value() const override {
    leveldb::Slice v = it_->value();
    return std::string_view(v.data(), v.size());
  }
  Status status() const override {
    return FromLevel(it_->status(), "scan", dir_);
  }

 private:
  std::unique_ptr<leveldb::Iterator> it_;
  const std::string lower_, upper_;
  const std::string dir_;
};

// LevelDB's default Env runs compactions on one process-wide thread that
// never ends. A child forked after a store closed would then inherit a
// "started" flag without the thread, and its first compaction would wait
// forever. Each store runs its compactions on a thread of its own instead,
// which Stop() ends when the store closes (see rocksdb_backend.cc).
// LevelDB lets go of a log it rotates away from (a full memtable) by
// deleting its writer, without Close() or a sync, and a barrier syncs only
// the new log: after a power loss the old log's tail would be gone, until
// the compaction of the old memtable has written its table, while the new
// log, with the barrier's record, survived. A log let go of unsynced is
// therefore kept open (RetiredLogs) until the next sync of the new log
// syncs it first -- a barrier's, or a synchronous write's -- or until
// LevelDB deletes it, once its memtable is in a synced table and the
// MANIFEST says so; then it is dropped unsynced. The switch itself, on
// LevelDB's write path, waits for no log sync, and no later log is durable
// before an earlier one: a power loss keeps a prefix of the updates.
using LogSyncFailed = std::function<void(const leveldb::Status&)>;

class RetiredLogs {
 public:
  explicit RetiredLogs(LogSyncFailed failed) : failed_(std::move(failed)) {}

  // More than kMax waiting (no barrier for that many memtables): the
  // oldest is synced at once, so the open files stay bounded.
  void Add(const std::string& name, std::unique_ptr<leveldb::WritableFile> f) {
    std::unique_ptr<leveldb::WritableFile> oldest;
    {
      std::lock_guard<std::mutex> lock(mu_);
      logs_.emplace_back(name, std::move(f));
      if (logs_.size() > kMax) {
        oldest = std::move(logs_.front().second);
        logs_.erase(logs_.begin());
      }
    }
    if (oldest) {
      std::lock_guard<std::mutex> one(sync_mu_);  // see SyncAll
      Report(SyncAndClose(oldest.get()));
    }
  }
  // LevelDB deletes a log only once what it held is durable elsewhere.
  void Drop(const std::string& name) {
    std::unique_ptr<leveldb::WritableFile> gone;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = logs_.begin(); it != logs_.end(); ++it) {
      if (it->first == name) {
        gone = std::move(it->second);
        logs_.erase(it);
        return;
      }
    }
  }
  // Every log let go of before the call is durable when it returns OK.
  // Callers are serialised: one that found the list empty while another
  // was still syncing what it took would otherwise return too early.
  leveldb::Status SyncAll() {
    std::lock_guard<std::mutex> one(sync_mu_);
    std::vector<std::pair<std::string, std::unique_ptr<leveldb::WritableFile>>>
        logs;
    {
      std::lock_guard<std::mutex> lock(mu_);
      logs.swap(logs_);
    }
    leveldb::Status first;
    for (auto& [name, f] : logs) {
      leveldb::Status s = SyncAndClose(f.get());
      Report(s);
      if (first.ok()) first = s;
    }
    return first;
  }
  void Report(const leveldb::Status& s) {
    if (!s.ok() && failed_) failed_(s);
  }

 private:
  static constexpr size_t kMax = 4;
  static leveldb::Status SyncAndClose(leveldb::WritableFile* f) {
    leveldb::Status s = f->Sync();
    leveldb::Status c = f->Close();
    return s.ok() ? c : s;
  }

  const LogSyncFailed failed_;
  std::mutex sync_mu_;
  std::mutex mu_;
  // GUARDED_BY(mu_): oldest first
  std::vector<std::pair<std::string, std::unique_ptr<leveldb::WritableFile>>>
      logs_;
};

// What must be durable before log bytes reach the file or a table is
// created: the values their locations point at (Backend::SetDurabilityHook).
using BeforeTreeData = std::function<leveldb::Status()>;

// With wal=false an update lives in memory until the barrier (options.h),
// and LevelDB's log is then written only by a barrier: the appended records
// are held here (`deferred`) until a sync, until kDeferredMax of them are
// waiting, or until LevelDB lets the log go. Before any of them reaches the
// file the store's hook makes their values durable -- once per barrier,
// not once per batch LevelDB is given. With wal=true every record is
// written at once, as LevelDB does (the hook then ran before the write).
class LogFile : public leveldb::WritableFile {
 public:
  LogFile(std::string name, leveldb::WritableFile* f, RetiredLogs* retired,
          const BeforeTreeData* before, bool deferred, size_t deferred_max)
      : name_(std::move(name)),
        f_(f),
        retired_(retired),
        before_(before),
        deferred_(deferred),
        deferred_max_(deferred_max) {}
  ~LogFile() override { LetGo(); }
  leveldb::Status Append(const leveldb::Slice& data) override {
    unsynced_ = true;
    if (deferred_) {
      held_.append(data.data(), data.size());
      return leveldb::Status::OK();
    }
    return f_->Append(data);
  }
  leveldb::Status Close() override {
    LetGo();
    return f_ ? f_->Close() : leveldb::Status::OK();
  }
  // LevelDB flushes after every record: held records wait for more.
  leveldb::Status Flush() override {
    if (!f_) return leveldb::Status::OK();
    if (held_.size() >= deferred_max_) return WriteHeld();
    return f_->Flush();
  }
  // The logs let go of before this one first: this one's updates came
  // after theirs.
  leveldb::Status Sync() override {
    if (!f_) return leveldb::Status::OK();
    leveldb::Status s = retired_->SyncAll();
    if (s.ok()) s = WriteHeld();
    if (s.ok()) s = f_->Sync();
    if (s.ok()) unsynced_ = false;
    return s;
  }

 private:
  leveldb::Status WriteHeld() {
    if (held_.empty()) return leveldb::Status::OK();
    leveldb::Status s = (*before_)();
    if (s.ok()) s = f_->Append(held_);
    if (s.ok()) s = f_->Flush();
    held_.clear();  // a failed write is kept by the store (Kept)
    return s;
  }
  // What LevelDB let go of is written now (its order among the logs is
  // then kept by the syncs alone); a failure fails the next barrier.
  void LetGo() {
    if (!f_) return;
    if (!held_.empty()) retired_->Report(WriteHeld());
    if (unsynced_) retired_->Add(name_, std::move(f_));
    unsynced_ = false;
  }

  const std::string name_;
  std::unique_ptr<leveldb::WritableFile> f_;
  RetiredLogs* const retired_;
  const BeforeTreeData* const before_;
  const bool deferred_;
  const size_t deferred_max_;
  std::string held_;       // records not yet given to the file
  bool unsynced_ = false;  // appended to since the last sync
};

class StoreThreadEnv : public leveldb::EnvWrapper {
 public:
  // `before` runs before log records reach a file and before a table is
  // created; `deferred`: see LogFile.
  StoreThreadEnv(LogSyncFailed failed, BeforeTreeData before, bool deferred,
                 size_t deferred_max)
      : leveldb::EnvWrapper(LevelDBEnvOverEnv()),
        retired_(std::move(failed)),
        before_(std::move(before)),
        deferred_(deferred),
        deferred_max_(deferred_max) {}

  // A table holds the locations of a memtable's values (a compaction that
  // writes it has no hook of its own): they are made durable first, and if
  // they cannot be, LevelDB gets the error (it then takes no more writes).
  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** out) override {
    *out = nullptr;
    if (IsTable(name)) {
      leveldb::Status h = before_();
      if (!h.ok()) return h;
    }
    leveldb::Status s = target()->NewWritableFile(name, out);
    if (s.ok() && IsLog(name)) {
      *out = new LogFile(name, *out, &retired_, &before_, deferred_,
                         deferred_max_);
    }
    return s;
  }
  leveldb::Status RemoveFile(const std::string& name) override {
    if (IsLog(name)) retired_.Drop(name);
    return target()->RemoveFile(name);
  }
  leveldb::Status DeleteFile(const std::string& name) override {
    return RemoveFile(name);
  }

  // Makes every log LevelDB let go of so far durable (a barrier).
  leveldb::Status SyncRetiredLogs() { return retired_.SyncAll(); }

  void Schedule(void (*function)(void*), void* arg) override {
    // After Stop() the job is not taken: the DB is gone, nothing to do.
    threads_.Submit({function, arg, nullptr, nullptr});
  }

  // Runs what is queued, then ends the thread. The DB must be gone first
  // (its destructor waits for its own compaction).
  void Stop() { threads_.Stop(); }

 private:
  static bool EndsWith(const std::string& name, const char* tail) {
    const size_t n = strlen(tail);
    return name.size() > n && name.compare(name.size() - n, n, tail) == 0;
  }
  static bool IsLog(const std::string& name) { return EndsWith(name, ".log"); }
  static bool IsTable(const std::string& name) {
    return EndsWith(name, ".ldb") || EndsWith(name, ".sst");
  }

  RetiredLogs retired_;
  const BeforeTreeData before_;
  const bool deferred_;
  const size_t deferred_max_;
  StoreThreads threads_{"sluice:ldb", 1};
};

class LevelDBBackend : public Backend {
 public:
  LevelDBBackend(const StoreOptions& options, std::string dir)
      : options_(options), dir_(std::move(dir)) {
    read_.verify_checksums = true;
    read_.fill_cache = options.block_cache_bytes > 0;
  }
  ~LevelDBBackend() override { Close(); }

  Status Open() {
    Status s = CheckLevelDBOptions(options_);
    if (!s.ok()) return s;
    // A capacity-0 LRU cache caches nothing; nullptr would mean 8 MiB.
    cache_.reset(leveldb::NewLRUCache(options_.block_cache_bytes));
    leveldb::Options o;
    env_ = std::make_unique<StoreThreadEnv>(
        [this](const leveldb::Status& ls) {
          Keep(FromLevel(ls, "write or sync of a rotated log", dir_));
        },
        [this] { return RunHook(); }, !options_.wal,
        std::max<size_t>(options_.write_buffer_size / 8, 64u << 10));
    o.env = env_.get();
    o.create_if_missing = !options_.read_only;
    o.paranoid_checks = true;
    o.compression = options_.compression ? leveldb::kSnappyCompression
                                         : leveldb::kNoCompression;
    o.write_buffer_size = options_.write_buffer_size;
    o.max_file_size = options_.write_buffer_size;
    o.block_size = options_.block_size;
    o.block_cache = cache_.get();
    if (options_.bloom_bits > 0) {
      filter_.reset(leveldb::NewBloomFilterPolicy(options_.bloom_bits));
      o.filter_policy = filter_.get();
    }
    leveldb::DB* db = nullptr;
    leveldb::Status ls = leveldb::DB::Open(o, dir_, &db);
    if (ls.IsCorruption()) {
      // A write cut short by a full disk (or a crash) leaves a torn record
      // at the end of LevelDB's log, and with paranoid checks LevelDB then
      // refuses to open at all. Without them it replays what precedes the
      // damage; whether that still covers the store's last barrier is
      // checked above it (the barrier record), so nothing a barrier made
      // durable is silently lost.
      fprintf(stderr, "sluice: leveldb %s: %s; opening without paranoid "
                      "checks, past the damaged log tail\n",
              dir_.c_str(), ls.ToString().c_str());
      o.paranoid_checks = false;
      db = nullptr;
      ls = leveldb::DB::Open(o, dir_, &db);
      // That open replayed the log into a table; the store is then
      // opened again with every check on.
      if (ls.ok() && !options_.read_only) {
        delete db;
        db = nullptr;
        o.paranoid_checks = true;
        ls = leveldb::DB::Open(o, dir_, &db);
      }
    }
    db_.reset(db);
    return FromLevel(ls, "open", dir_);
  }

  Status Get(std::string_view key, std::string* value) override {
    leveldb::Status s = db_->Get(read_, ToSlice(key), value);
    if (s.IsNotFound()) return Status::NotFound("key not found");
    return FromLevel(s, "get", dir_);
  }
  Status Put(std::string_view key, std::string_view value) override {
    Status h = BeforeWrite();
    if (!h.ok()) return h;
    return Kept(db_->Put(Sync(), ToSlice(key), ToSlice(value)), "put");
  }
  Status Delete(std::string_view key) override {
    Status h = BeforeWrite();
    if (!h.ok()) return h;
    return Kept(db_->Delete(Sync(), ToSlice(key)), "delete");
  }
  Status Append(std::string_view, std::string_view) override {
    return Status::NotSupported("leveldb has no native append");
  }
  Status Write(const WriteBuffer& buffer) override {
    leveldb::WriteBatch batch;
    for (const auto& [key, value] : buffer.entries()) {
      if (value) {
        batch.Put(key, *value);
      } else {
        batch.Delete(key);
      }
    }
    Status h = BeforeWrite();
    if (!h.ok()) return h;
    return Kept(db_->Write(Sync(), &batch), "write");
  }
  void SetDurabilityHook(DurabilityHook hook) override {
    std::lock_guard<std::mutex> lock(hook_mu_);
    hook_ = std::move(hook);
  }
  std::unique_ptr<Iterator> NewIterator(std::string_view lower,
                                        std::string_view upper) override {
    return std::make_unique<LevelDBIterator>(db_->NewIterator(read_), lower,
                                             upper, dir_);
  }
  Status Flush() override {
    if (options_.read_only) return Status::OK();
    // LevelDB has no memtable flush short of a full compaction; an empty
    // batch written with sync=true fsyncs the logs LevelDB let go of, then
    // its log (LogFile::Sync), which makes every earlier write durable. A
    // log let go of during that write holds only writes as late as the
    // barrier; it is synced too, so that none is left waiting.
    leveldb::WriteOptions w;
    w.sync = true;
    leveldb::WriteBatch empty;
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_.ok()) return error_;
    }
    Status s = Kept(db_->Write(w, &empty), "flush");
    if (!s.ok()) return s;
    return Kept(env_->SyncRetiredLogs(), "sync of a rotated log");
  }
  Status Close() override {
    db_.reset();  // LevelDB's destructor waits for its background work
    Status s;
    if (env_) {
      s = FromLevel(env_->SyncRetiredLogs(), "sync of a rotated log", dir_);
      env_->Stop();
    }
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(error_mu_);
      s = error_;
    }
    cache_.reset();
    filter_.reset();
    return s;
  }
  bool HasNativeAppend() const override { return false; }
  bool WantsWriteBuffer() const override { return !options_.wal; }

 private:
  // LevelDB logs every write, and replays its log after a crash: with
  // wal=true, what a write needs must be durable before it. With wal=false
  // the log's records wait in memory, and the hook runs before they are
  // written (LogFile).
  Status BeforeWrite() {
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_.ok()) return error_;
    }
    return options_.wal ? Hook() : Status::OK();
  }
  Status Hook() {
    DurabilityHook hook;
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      hook = hook_;
    }
    return hook ? hook() : Status::OK();
  }
  leveldb::Status RunHook() {
    Status s = Hook();
    if (s.ok()) return leveldb::Status::OK();
    return leveldb::Status::IOError(
        "the values could not be made durable before their locations",
        s.ToString());
  }
  // A write LevelDB could not finish leaves its log in a state it does not
  // know: the log writer has counted the bytes as written, so the records
  // after it would not line up, and a restart would stop reading the log
  // there — losing later writes a barrier had acknowledged. The first
  // failed write is therefore kept and returned by every later write and
  // barrier, until the store is reopened.
  // A rotated log that could not be synced (RetiredLogs) is kept the same
  // way: it fails the barrier or write that synced it, and every later one.
  Status Kept(const leveldb::Status& ls, const char* what) {
    Status s = FromLevel(ls, what, dir_);
    if (!s.ok()) Keep(s);
    std::lock_guard<std::mutex> lock(error_mu_);
    return error_;
  }
  void Keep(const Status& s) {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (error_.ok()) error_ = s;
  }
  leveldb::WriteOptions Sync() const {
    leveldb::WriteOptions w;
    w.sync = options_.sync_writes;
    return w;
  }

  const StoreOptions options_;
  const std::string dir_;
  leveldb::ReadOptions read_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;  // outlives db_
  std::unique_ptr<StoreThreadEnv> env_;  // outlives db_
  std::mutex error_mu_;
  Status error_;  // GUARDED_BY(error_mu_): the first failed write
  std::unique_ptr<leveldb::DB> db_;
  std::mutex hook_mu_;
  DurabilityHook hook_;  // GUARDED_BY(hook_mu_)
};

Status CheckLevelDBOptions(const StoreOptions& options) {
  if (options.mmap_writes) return Unsupported("mmap_writes");
  if (options.direct_io_flush) return Unsupported("direct_io_flush");
  if (options.direct_io_reads) return Unsupported("direct_io_reads");
  if (options.blob_files) return Unsupported("blob_files");
  if (options.flush_threads != 1) return Unsupported("flush_threads != 1");
  return Status::OK();
}

Status OpenLevelDBBackend(const StoreOptions& options, const std::string& dir,
                          std::unique_ptr<Backend>* out) {
  auto backend = std::make_unique<LevelDBBackend>(options, dir);
  Status s = backend->Open();
  if (s.ok()) *out = std::move(backend);
  return s;
}

const BackendModule kModule = {SLUICE_BUILD_VERSION, CheckLevelDBOptions,
                               OpenLevelDBBackend};

}  // namespace
}  // namespace sluice

// The module's one export (backend.h: kBackendModuleSymbol).
extern "C" __attribute__((visibility("default")))
const sluice::BackendModule* sluice_backend_module_v1() {
  return &sluice::kModule;
}
