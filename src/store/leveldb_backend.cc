// The LevelDB adapter. LevelDB cannot turn its log off, so with wal=false
// the store buffers updates (WantsWriteBuffer) and writes them as one batch
// at the barrier, as LSMIO does, and the log's records mostly wait in
// memory for the barrier to write and fsync them (Logs).
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
#include <list>
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

// LevelDB's logs. LevelDB appends every write to its log, replays the log
// after a crash, and lets go of a log it rotates away from (a full
// memtable) by deleting its writer, without Close() or a sync, while its
// barrier syncs only the new log. Here:
//  - The log's records wait in memory (wal=false: an update lives in memory
//    until the barrier, options.h) until a sync, until `deferred_max` bytes
//    wait (0 with wal=true: every record is written at once), or until the
//    store closes; the value log's sync (the store's hook) runs before any
//    of them reaches a file, so no location is on disk before its value.
//    The value log is then synced about once per barrier, not once per
//    batch the store spills into the tree.
//  - A log LevelDB lets go of keeps its file open and its waiting records
//    (Retire) until the next write or sync of records makes it durable
//    first -- so no later log's records reach a file before an earlier log
//    is durable, and a crash keeps a prefix of the updates -- or until
//    LevelDB deletes it, once its memtable is in a synced table and the
//    MANIFEST says so; then it is dropped, what it still holds neither
//    written nor synced. The switch itself does no I/O (it runs under
//    LevelDB's mutex).
//  - A table holds the locations of a memtable's values: before the first
//    table after a switch the hook runs (BeforeTable), and if it fails the
//    table is refused and LevelDB takes no more writes.
//  - The first write, sync, close or hook of this machinery that fails is
//    kept: no write or sync of records begins after it (a record after a
//    lost one would make a replay that is not a prefix), and it is
//    reported to the store (LogFailed), which returns it from every later
//    write and barrier.
using LogFailed = std::function<void(const leveldb::Status&)>;
using BeforeTreeData = std::function<leveldb::Status()>;

class Logs {
 public:
  Logs(LogFailed failed, BeforeTreeData before, size_t deferred_max)
      : failed_(std::move(failed)),
        before_(std::move(before)),
        deferred_max_(deferred_max) {}

  size_t deferred_max() const { return deferred_max_; }

  // Writes `*held` to `f` (the current log), the retired logs made durable
  // first.
  leveldb::Status Write(leveldb::WritableFile* f, std::string* held) {
    return WriteOut(f, held, false);
  }
  // Makes every retired log durable, then `f` (if any) with `*held`.
  leveldb::Status Sync(leveldb::WritableFile* f, std::string* held) {
    return WriteOut(f, held, true);
  }
  // LevelDB let go of a log to which records were appended since its last
  // sync. Called under LevelDB's mutex: no I/O. LevelDB holds at most one
  // memtable waiting for its table, so at most two logs wait here.
  void Retire(const std::string& name, std::unique_ptr<leveldb::WritableFile> f,
              std::string held) {
    std::lock_guard<std::mutex> lock(mu_);
    ++switches_;
    retired_.push_back({name, std::move(f), std::move(held)});
  }
  // LevelDB deletes a log only once what it held is durable elsewhere.
  void Drop(const std::string& name) {
    std::unique_ptr<leveldb::WritableFile> gone;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = retired_.begin(); it != retired_.end(); ++it) {
      if (it->name == name) {
        gone = std::move(it->file);
        retired_.erase(it);
        return;
      }
    }
  }
  // A failure met outside Write and Sync (a close).
  void Report(const leveldb::Status& s) { Failed(s); }
  // Before a table is created: the values of every memtable switched away
  // from are made durable.
  leveldb::Status BeforeTable() {
    uint64_t switches;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failed_status_.ok()) return failed_status_;
      switches = switches_;
      if (switches == covered_) return leveldb::Status::OK();
    }
    leveldb::Status s = Failed(before_());
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok() && switches > covered_) covered_ = switches;
    return s;
  }

 private:
  struct Retired {
    std::string name;
    std::unique_ptr<leveldb::WritableFile> file;
    std::string held;  // records not yet written
  };

  leveldb::Status WriteOut(leveldb::WritableFile* f, std::string* held,
                           bool sync) {
    std::lock_guard<std::mutex> one(io_mu_);
    leveldb::Status s = SyncRetiredLocked(held);
    if (f) {
      if (s.ok()) s = WriteHeld(f, held);
      if (s.ok() && sync) s = f->Sync();
    }
    return Failed(s);
  }
  // Under io_mu_. The value log's sync if records are about to be written
  // (the retired logs' or `*held`), then every retired log written, synced
  // and closed: a later log's records never reach a file, even unsynced,
  // before an earlier log is durable. Fails after a failure.
  leveldb::Status SyncRetiredLocked(const std::string* held) {
    std::list<Retired> retired;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failed_status_.ok()) return failed_status_;
      retired.swap(retired_);
    }
    bool any = held && !held->empty();
    for (const Retired& r : retired) any = any || !r.held.empty();
    leveldb::Status s = any ? before_() : leveldb::Status::OK();
    for (Retired& r : retired) {
      if (s.ok()) s = WriteHeld(r.file.get(), &r.held);
      if (s.ok()) s = r.file->Sync();
      leveldb::Status c = r.file->Close();
      if (s.ok()) s = c;
    }
    return s;
  }
  static leveldb::Status WriteHeld(leveldb::WritableFile* f, std::string* held) {
    if (held->empty()) return leveldb::Status::OK();
    leveldb::Status s = f->Append(*held);
    if (s.ok()) s = f->Flush();
    held->clear();
    return s;
  }
  // Keeps and reports the first failure; returns `s`.
  leveldb::Status Failed(const leveldb::Status& s) {
    if (s.ok()) return s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed_status_.ok()) failed_status_ = s;
    }
    if (failed_) failed_(s);
    return s;
  }

  const LogFailed failed_;
  const BeforeTreeData before_;
  const size_t deferred_max_;
  // Held by every write and sync of records, so that they reach the files
  // in the order they were appended.
  std::mutex io_mu_;
  std::mutex mu_;
  std::list<Retired> retired_;     // GUARDED_BY(mu_): oldest first
  uint64_t switches_ = 0;          // GUARDED_BY(mu_)
  uint64_t covered_ = 0;           // GUARDED_BY(mu_): switches the hook ran after
  leveldb::Status failed_status_;  // GUARDED_BY(mu_)
};

// One log LevelDB writes: its records wait in memory (Logs).
class LogFile : public leveldb::WritableFile {
 public:
  LogFile(std::string name, leveldb::WritableFile* f, Logs* logs)
      : name_(std::move(name)), f_(f), logs_(logs) {}
  ~LogFile() override { LetGo(); }
  leveldb::Status Append(const leveldb::Slice& data) override {
    unsynced_ = true;
    held_.append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override {
    LetGo();
    return leveldb::Status::OK();
  }
  // LevelDB flushes after every record.
  leveldb::Status Flush() override {
    if (!f_ || held_.size() < logs_->deferred_max() || held_.empty()) {
      return leveldb::Status::OK();
    }
    return logs_->Write(f_.get(), &held_);
  }
  leveldb::Status Sync() override {
    if (!f_) return leveldb::Status::OK();
    leveldb::Status s = logs_->Sync(f_.get(), &held_);
    if (s.ok()) unsynced_ = false;
    return s;
  }

 private:
  void LetGo() {
    if (!f_) return;
    // A log synced since its last record needs nothing more.
    if (unsynced_) {
      logs_->Retire(name_, std::move(f_), std::move(held_));
    } else {
      logs_->Report(f_->Close());
      f_.reset();
    }
    held_.clear();
    unsynced_ = false;
  }

  const std::string name_;
  std::unique_ptr<leveldb::WritableFile> f_;
  Logs* const logs_;
  std::string held_;       // records not yet given to the file
  bool unsynced_ = false;  // appended to since the last sync
};

// LevelDB's default Env runs compactions on one process-wide thread that
// never ends. A child forked after a store closed would then inherit a
// "started" flag without the thread, and its first compaction would wait
// forever. Each store runs its compactions on a thread of its own instead,
// which Stop() ends when the store closes (see rocksdb_backend.cc).
// Its logs and tables are kept as Logs says.
class StoreThreadEnv : public leveldb::EnvWrapper {
 public:
  StoreThreadEnv(LogFailed failed, BeforeTreeData before, size_t deferred_max)
      : leveldb::EnvWrapper(LevelDBEnvOverEnv()),
        logs_(std::move(failed), std::move(before), deferred_max) {}

  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** out) override {
    *out = nullptr;
    if (IsTable(name)) {
      leveldb::Status h = logs_.BeforeTable();
      if (!h.ok()) return h;
    }
    leveldb::Status s = target()->NewWritableFile(name, out);
    if (s.ok() && IsLog(name)) *out = new LogFile(name, *out, &logs_);
    return s;
  }
  leveldb::Status RemoveFile(const std::string& name) override {
    if (IsLog(name)) logs_.Drop(name);
    return target()->RemoveFile(name);
  }
  leveldb::Status DeleteFile(const std::string& name) override {
    return RemoveFile(name);
  }

  // Makes every log LevelDB let go of so far durable (a barrier).
  leveldb::Status SyncRetiredLogs() { return logs_.Sync(nullptr, nullptr); }

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

  Logs logs_;
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
    cache_.reset(leveldb::NewLRUCache(CacheBytes(options_)));
    leveldb::Options o;
    env_ = std::make_unique<StoreThreadEnv>(
        [this](const leveldb::Status& ls) {
          Keep(FromLevel(ls, "log", dir_));
        },
        [this] { return RunHook(); },
        options_.wal ? 0 : std::max<size_t>(options_.write_buffer_size / 8,
                                            64u << 10));
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
    // batch written with sync=true writes and fsyncs the logs LevelDB let
    // go of, then its log (Logs::Sync), which makes every earlier write
    // durable. A log let go of during that write holds only writes as late
    // as the barrier; it is synced too, so that none is left waiting.
    leveldb::WriteOptions w;
    w.sync = true;
    leveldb::WriteBatch empty;
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_.ok()) return error_;
    }
    Status s = Kept(db_->Write(w, &empty), "flush");
    if (!s.ok()) return s;
    return Kept(env_->SyncRetiredLogs(), "sync of the logs");
  }
  Status Close() override {
    db_.reset();  // LevelDB's destructor waits for its background work
    Status s;
    if (env_) {
      s = FromLevel(env_->SyncRetiredLogs(), "sync of the logs", dir_);
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
  // A write after a failed one is refused (Kept). The values a write
  // points at are made durable before its log record is written (Logs).
  Status BeforeWrite() {
    std::lock_guard<std::mutex> lock(error_mu_);
    return error_;
  }
  leveldb::Status RunHook() {
    DurabilityHook hook;
    {
      std::lock_guard<std::mutex> lock(hook_mu_);
      hook = hook_;
    }
    Status s = hook ? hook() : Status::OK();
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
  // A log that could not be written or synced, or whose values could not
  // be made durable first (Logs), is kept the same way: it fails the
  // barrier or write that met it, and every later one.
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
