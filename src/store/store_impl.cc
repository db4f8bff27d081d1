// StoreImpl: the store logic over one Backend: open/create with header and
// lock, synchronous and asynchronous updates, batches, barriers, counters.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <mutex>
#include <vector>

#include "sluice/kv.h"
#include "store/async_queue.h"
#include "store/backend.h"
#include "store/barrier_record.h"
#include "store/header.h"
#include "store/lock.h"
#include "store/stats.h"
#include "store/value_log.h"
#include "store/write_buffer.h"
#include "util/configure.h"
#include "util/env.h"
#include "util/posix.h"

namespace sluice {
namespace {

// A key as it may appear in a message: printable, at most 64 characters.
std::string PrintableKey(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size() && i < 64; ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (key.size() > 64) out += "...";
  return out;
}

// The live iterators of a store. Close invalidates them (RocksDB must not
// be closed under an iterator), and an iterator that outlives its store
// still finds this registry through its shared pointer.
class IteratorRegistry;

class TrackedIterator final : public Iterator {
 public:
  TrackedIterator(std::shared_ptr<IteratorRegistry> registry,
                  std::unique_ptr<Iterator> inner, std::string path);
  ~TrackedIterator() override;

  bool Valid() const override { return inner_ && inner_->Valid(); }
  void SeekToFirst() override {
    if (inner_) inner_->SeekToFirst();
    SkipReserved(true);
  }
  void Seek(std::string_view t) override {
    if (inner_) inner_->Seek(t);
    SkipReserved(true);
  }
  void SeekForPrev(std::string_view t) override {
    if (inner_) inner_->SeekForPrev(t);
    SkipReserved(false);
  }
  void Next() override {
    if (inner_) inner_->Next();
    SkipReserved(true);
  }
  void Prev() override {
    if (inner_) inner_->Prev();
    SkipReserved(false);
  }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  Status status() const override {
    if (!inner_) {
      return Status::InvalidArgument("store " + path_ +
                                     " was closed under this iterator");
    }
    return inner_->status();
  }
  // Called by the registry when the store closes.
  void Invalidate() { inner_.reset(); }

 private:
  // The store's barrier record is not the caller's.
  void SkipReserved(bool forward) {
    while (inner_ && inner_->Valid() && inner_->key() == kBarrierKey) {
      if (forward) {
        inner_->Next();
      } else {
        inner_->Prev();
      }
    }
  }

  std::shared_ptr<IteratorRegistry> registry_;
  std::unique_ptr<Iterator> inner_;
  const std::string path_;
};

class IteratorRegistry {
 public:
  void Add(TrackedIterator* it) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.push_back(it);
  }
  void Remove(TrackedIterator* it) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.erase(std::find(live_.begin(), live_.end(), it));
  }
  void InvalidateAll() {
    std::lock_guard<std::mutex> lock(mu_);
    for (TrackedIterator* it : live_) it->Invalidate();
  }

 private:
  std::mutex mu_;
  std::vector<TrackedIterator*> live_;  // GUARDED_BY(mu_)
};

TrackedIterator::TrackedIterator(std::shared_ptr<IteratorRegistry> registry,
                                 std::unique_ptr<Iterator> inner,
                                 std::string path)
    : registry_(std::move(registry)),
      inner_(std::move(inner)),
      path_(std::move(path)) {
  registry_->Add(this);
}

TrackedIterator::~TrackedIterator() { registry_->Remove(this); }

class StoreImpl final : public Store {
 public:
  StoreImpl(const StoreOptions& options, std::string path, BackendKind kind,
            StoreLayout layout, std::unique_ptr<StoreLock> lock,
            std::unique_ptr<Backend> backend,
            std::unique_ptr<BarrierFile> barrier_file, BarrierRecord barrier)
      : options_(options),
        path_(std::move(path)),
        kind_(kind),
        layout_(layout),
        lock_(std::move(lock)),
        backend_(std::move(backend)),
        barrier_file_(std::move(barrier_file)),
        barrier_(barrier),
        key_locks_needed_(!backend_->HasNativeAppend()),
        async_(options.async_queue_bytes,
               [this](const AsyncQueue::Item& item) { return Apply(item); }) {}

  ~StoreImpl() override { Close(); }

  Status Put(std::string_view key, std::string_view value,
             WriteMode mode) override {
    return Update(Op::kPut, key, value, mode);
  }
  Status Append(std::string_view key, std::string_view value,
                WriteMode mode) override {
    return Update(Op::kAppend, key, value, mode);
  }
  Status Delete(std::string_view key, WriteMode mode) override {
    return Update(Op::kDelete, key, {}, mode);
  }

  Status Get(std::string_view key, std::string* value) override {
    if (closed_) return Closed();
    if (key == kBarrierKey) return Reserved();
    async_.Drain();  // read your own asynchronous writes
    Stopwatch watch;
    Status s;
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!buffer_.empty()) {
        switch (buffer_.Find(key, value)) {
          case WriteBuffer::Lookup::kValue:
            done = true;
            break;
          case WriteBuffer::Lookup::kDeleted:
            s = Status::NotFound("");
            done = true;
            break;
          case WriteBuffer::Lookup::kMissing:
            break;
        }
      }
    }
    if (!done) s = backend_->Get(key, value);
    if (s.ok()) {
      counters_.Record(Op::kGet, value->size(), watch.ElapsedNanos());
    } else if (s.IsNotFound()) {
      counters_.Record(Op::kGet, 0, watch.ElapsedNanos());
      s = Status::NotFound("key '" + PrintableKey(key) + "' not found in store " +
                           path_);
    }
    return s;
  }

  Status Write(const WriteBatch& batch, WriteMode mode) override {
    if (closed_) return Closed();
    if (options_.read_only) return ReadOnly();
    for (const auto& entry : batch.rep().entries()) {
      if (entry.first == kBarrierKey) return Reserved();
    }
    if (mode == WriteMode::kAsync) {
      async_.Enqueue({Op::kBatch, {}, {},
                      std::make_shared<const WriteBuffer>(batch.rep())});
      return Status::OK();
    }
    async_.Drain();
    // Nothing is applied behind a failed asynchronous update (it stays for
    // the next barrier).
    Status e = async_.PeekError();
    if (!e.ok()) return e;
    return ApplyBatch(batch.rep());
  }

  std::unique_ptr<Iterator> NewIterator(std::string_view lower,
                                        std::string_view upper) override {
    if (closed_) {
      return std::make_unique<TrackedIterator>(iterators_, nullptr, path_);
    }
    async_.Drain();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!in_batch_) WriteBufferLocked();  // a failure shows in later calls
    }
    return std::make_unique<TrackedIterator>(
        iterators_, backend_->NewIterator(lower, upper), path_);
  }

  Status WriteBarrier() override {
    if (closed_) return Closed();
    Stopwatch watch;
    async_.Drain();
    Status s = async_.TakeError();
    Status w = options_.read_only ? Status::OK() : Barrier();
    if (s.ok()) s = w;
    counters_.Record(Op::kBarrier, unflushed_bytes_.exchange(0),
                     watch.ElapsedNanos());
    return s;
  }

  Status StartBatch() override {
    if (closed_) return Closed();
    if (options_.read_only) return ReadOnly();
    async_.Drain();  // earlier asynchronous updates precede the batch
    std::lock_guard<std::mutex> lock(mu_);
    if (in_batch_) {
      return Status::InvalidArgument("store " + path_ +
                                     ": a batch is already started");
    }
    Status s = WriteBufferLocked();  // the buffer then holds only the batch
    if (s.ok()) in_batch_ = true;
    return s;
  }

  Status StopBatch() override {
    if (closed_) return Closed();
    Stopwatch watch;
    async_.Drain();
    // An asynchronous update's error is the batch's too, and stays for the
    // next barrier: the batch does not make it go away.
    Status s = async_.PeekError();
    std::lock_guard<std::mutex> lock(mu_);
    if (!in_batch_) {
      return Status::InvalidArgument("store " + path_ +
                                     ": stop_batch without start_batch");
    }
    const uint64_t bytes = buffer_.bytes();
    Status w = WriteBufferLocked();
    in_batch_ = false;
    if (!w.ok()) {
      buffer_.Clear();
      w = Status(w.code(), "batch not written: " + w.message());
    }
    if (s.ok()) s = w;
    if (s.ok()) counters_.Record(Op::kBatch, bytes, watch.ElapsedNanos());
    return s;
  }

  Status ReclaimSpace(uint64_t* bytes_freed) override {
    *bytes_freed = 0;
    if (closed_) return Closed();
    if (options_.read_only) {
      return Status::InvalidArgument("store " + path_ +
                                     " is open read-only: nothing to reclaim");
    }
    Status s = WriteBarrier();
    if (!s.ok()) return s;
    s = backend_->ReclaimUnreferenced(bytes_freed);
    if (!s.ok()) return Status(s.code(), "store " + path_ + ": " + s.message());
    return s;
  }

  Status Close() override {
    if (closed_.exchange(true)) return Status::OK();
    async_.Stop();
    Status s = async_.TakeError();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (in_batch_) {
        if (s.ok()) {
          s = Status::Incomplete("store " + path_ + ": closed inside a batch; " +
                                 std::to_string(buffer_.entries().size()) +
                                 " batched updates were discarded");
        }
        buffer_.Clear();
        in_batch_ = false;
      }
    }
    if (!options_.read_only) {
      Status f = Barrier();
      if (s.ok()) s = f;
    }
    iterators_->InvalidateAll();
    Status c = backend_->Close();
    if (s.ok()) s = c;
    const char* env = getenv("SLUICE_STATS");
    if (env != nullptr && env[0] != '\0' && env[0] != '0') {
      fprintf(stderr, "sluice-stats store=%s backend=%s layout=%s %s\n",
              path_.c_str(), BackendName(kind_), LayoutName(layout_),
              counters_.Snapshot().ToString().c_str());
    }
    lock_->Release();
    return s;
  }

  StoreStats GetStats() const override { return counters_.Snapshot(); }
  const std::string& path() const override { return path_; }
  BackendKind backend() const override { return kind_; }
  StoreLayout layout() const override { return layout_; }

 private:
  Status Closed() const {
    return Status::InvalidArgument("store " + path_ + " is closed");
  }
  Status ReadOnly() const {
    return Status::InvalidArgument("store " + path_ + " is open read-only");
  }
  Status Reserved() const {
    return Status::InvalidArgument("store " + path_ + ": key '" +
                                   PrintableKey(kBarrierKey) +
                                   "' is reserved for the store's barrier "
                                   "record");
  }

  // Writes the buffer and makes everything durable. When anything changed
  // since the last barrier, the tree is given the next barrier record
  // before it is made durable, and the record file gets it after
  // (barrier_record.h).
  Status Barrier() {
    std::lock_guard<std::mutex> barrier(barrier_mu_);
    const bool changed = changed_.exchange(false);
    BarrierRecord next = barrier_;
    next.number += 1;
    Status s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!in_batch_) s = WriteBufferLocked();
      if (s.ok() && changed) s = backend_->Put(kBarrierKey, next.Encode());
    }
    if (s.ok()) s = backend_->Flush();
    if (s.ok() && changed) s = barrier_file_->Write(next);
    if (s.ok() && changed) {
      barrier_ = next;
    } else if (changed) {
      changed_ = true;
    }
    return s;
  }

  Status Update(Op op, std::string_view key, std::string_view value,
                WriteMode mode) {
    if (closed_) return Closed();
    if (options_.read_only) return ReadOnly();
    if (key == kBarrierKey) return Reserved();
    if (mode == WriteMode::kAsync) {
      async_.Enqueue({op, std::string(key), std::string(value), nullptr});
      return Status::OK();
    }
    async_.Drain();  // order after earlier asynchronous updates
    Status e = async_.PeekError();
    if (!e.ok()) return e;  // nothing is applied behind a failed one
    return Apply(op, key, value);
  }

  Status Apply(const AsyncQueue::Item& item) {
    if (item.op == Op::kBatch) return ApplyBatch(*item.batch);
    return Apply(item.op, item.key, item.value);
  }

  // Applies a batch atomically: into the buffer when buffering (it is then
  // written with the buffer), else as one backend write.
  Status ApplyBatch(const WriteBuffer& batch) {
    Stopwatch watch;
    Status s;
    std::unique_lock<std::mutex> lock(mu_);
    if (in_batch_ || backend_->WantsWriteBuffer()) {
      // Spilled before the batch goes in: a spill that fails leaves the
      // batch out, as its error says (and the updates before it buffered,
      // for a later spill or barrier).
      s = SpillBeforeLocked(batch.bytes());
      if (s.ok()) {
        for (const auto& [key, update] : batch.entries()) {
          buffer_.Apply(key, update);
        }
      }
    } else {
      lock.unlock();
      s = backend_->Write(batch);
    }
    if (s.ok()) {
      changed_ = true;
      counters_.Record(Op::kBatch, batch.bytes(), watch.ElapsedNanos());
      unflushed_bytes_.fetch_add(batch.bytes(), std::memory_order_relaxed);
    }
    return s;
  }

  // Applies one update, buffered or straight to the backend.
  Status Apply(Op op, std::string_view key, std::string_view value) {
    Stopwatch watch;
    Status s;
    std::unique_lock<std::mutex> lock(mu_);
    if (in_batch_ || backend_->WantsWriteBuffer()) {
      s = ApplyBufferedLocked(op, key, value);
    } else {
      lock.unlock();
      s = ApplyDirect(op, key, value);
    }
    if (s.ok()) {
      changed_ = true;
      counters_.Record(op, value.size(), watch.ElapsedNanos());
      unflushed_bytes_.fetch_add(value.size(), std::memory_order_relaxed);
    }
    return s;
  }

  // Outside a batch, spills the buffer when `adding` more bytes would take
  // it to a write buffer's size, so memory stays bounded (at most a write
  // buffer plus the update that follows).
  Status SpillBeforeLocked(size_t adding) {
    if (in_batch_ || buffer_.empty() ||
        buffer_.bytes() + adding < options_.write_buffer_size) {
      return Status::OK();
    }
    return WriteBufferLocked();
  }

  // An update into the buffer. A spill that fails leaves it out (see
  // ApplyBatch).
  Status ApplyBufferedLocked(Op op, std::string_view key,
                             std::string_view value) {
    Status spill = SpillBeforeLocked(key.size() + value.size());
    if (!spill.ok()) return spill;
    switch (op) {
      case Op::kPut:
        buffer_.Put(key, value);
        break;
      case Op::kDelete:
        buffer_.Delete(key);
        break;
      case Op::kAppend:
        switch (buffer_.Find(key, nullptr)) {
          case WriteBuffer::Lookup::kValue:
            buffer_.AppendTo(key, value);
            break;
          case WriteBuffer::Lookup::kDeleted:
            buffer_.Put(key, value);
            break;
          case WriteBuffer::Lookup::kMissing: {
            std::string current;
            Status s = backend_->Get(key, &current);
            if (s.IsNotFound()) {
              current.clear();
            } else if (!s.ok()) {
              return s;
            }
            current.append(value.data(), value.size());
            buffer_.Put(key, current);
            break;
          }
        }
        break;
      default:
        return Status::InvalidArgument("not an update");
    }
    return Status::OK();
  }

  Status ApplyDirect(Op op, std::string_view key, std::string_view value) {
    if (op == Op::kAppend && backend_->HasNativeAppend()) {
      return backend_->Append(key, value);
    }
    // Without a native append, an append reads and rewrites the value; the
    // key's lock keeps concurrent updates of the same key out meanwhile.
    std::unique_lock<std::mutex> key_lock;
    if (key_locks_needed_) {
      key_lock = std::unique_lock<std::mutex>(
          key_locks_[std::hash<std::string_view>()(key) % kKeyLocks]);
    }
    switch (op) {
      case Op::kPut:
        return backend_->Put(key, value);
      case Op::kDelete:
        return backend_->Delete(key);
      case Op::kAppend: {
        std::string current;
        Status s = backend_->Get(key, &current);
        if (s.IsNotFound()) {
          current.clear();
        } else if (!s.ok()) {
          return s;
        }
        current.append(value.data(), value.size());
        return backend_->Put(key, current);
      }
      default:
        return Status::InvalidArgument("not an update");
    }
  }

  Status WriteBufferLocked() {
    if (buffer_.empty()) return Status::OK();
    Status s = backend_->Write(buffer_);
    if (s.ok()) buffer_.Clear();
    return s;
  }

  static constexpr size_t kKeyLocks = 64;

  const StoreOptions options_;
  const std::string path_;
  const BackendKind kind_;
  const StoreLayout layout_;
  std::unique_ptr<StoreLock> lock_;
  std::unique_ptr<Backend> backend_;
  // The writer's barrier record file (null for readers), and the last
  // barrier it holds.
  std::unique_ptr<BarrierFile> barrier_file_;
  std::mutex barrier_mu_;  // serialises barriers
  BarrierRecord barrier_;  // GUARDED_BY(barrier_mu_)
  // An update since the last barrier.
  std::atomic<bool> changed_{false};
  const bool key_locks_needed_;
  std::mutex key_locks_[kKeyLocks];
  Counters counters_;
  std::atomic<uint64_t> unflushed_bytes_{0};
  std::atomic<bool> closed_{false};
  std::shared_ptr<IteratorRegistry> iterators_ =
      std::make_shared<IteratorRegistry>();

  std::mutex mu_;
  WriteBuffer buffer_;  // GUARDED_BY(mu_)
  bool in_batch_ = false;  // GUARDED_BY(mu_)

  AsyncQueue async_;  // last: its thread calls into the members above
};

// The module of a backend built with this Sluice, with `options` checked
// against what the backend can honour.
Status BackendModuleFor(BackendKind kind, const StoreOptions& options,
                        const std::string& path, const BackendModule** out) {
  bool built = false;
#ifdef SLUICE_HAVE_ROCKSDB
  built = built || kind == BackendKind::kRocksDB;
#endif
#ifdef SLUICE_HAVE_LEVELDB
  built = built || kind == BackendKind::kLevelDB;
#endif
  if (!built) {
    return Status::NotSupported(std::string("backend ") + BackendName(kind) +
                                " is not built into this Sluice (store " +
                                path + ")");
  }
  Status s = LoadBackendModule(BackendName(kind), out);
  if (!s.ok()) return Status(s.code(), "store " + path + ": " + s.message());
  if ((*out)->check_options != nullptr) s = (*out)->check_options(options);
  return s;
}

// The entries a creation makes before the header: the lock, the header's
// temporary, the backends' and the value log's directories.
bool IsCreationLeftover(const std::string& name) {
  return name == kLockFileName || name == std::string(kHeaderFileName) + ".tmp" ||
         name == kBarrierFileName ||
         name == std::string(kBarrierFileName) + ".tmp" ||
         name == BackendName(BackendKind::kRocksDB) ||
         name == BackendName(BackendKind::kLevelDB) || name == "vlog";
}

// Decides whether `path` is an existing store, a place for a new one, or an
// error; creates the directory when needed.
Status Locate(const StoreOptions& options, const std::string& path,
              bool* create) {
  posix::PathKind kind;
  Status s = posix::Probe(path, &kind);
  if (!s.ok()) return s;
  switch (kind) {
    case posix::PathKind::kFile:
    case posix::PathKind::kOther:
      return Status::NotAStore(path + " is not a Sluice store: it is not a "
                               "directory");
    case posix::PathKind::kMissing:
      if (!options.create_if_missing || options.read_only) {
        return Status::NotFound("store " + path + " does not exist");
      }
      s = posix::CreateDirs(path);
      if (!s.ok()) {
        return Status(s.code() == Code::kNoSpace ? Code::kNoSpace
                                                 : Code::kIOError,
                      "cannot create store " + path + ": " + s.message());
      }
      *create = true;
      return Status::OK();
    case posix::PathKind::kDirectory:
      break;
  }
  posix::PathKind header;
  s = posix::Probe(posix::JoinPath(path, kHeaderFileName), &header);
  if (!s.ok()) return s;
  if (header != posix::PathKind::kMissing) {
    *create = false;
    return Status::OK();
  }
  // No header: an empty directory, or what a creation that did not finish
  // left (the header is written before a store is first opened, so nothing
  // in it was ever acknowledged); anything else is not ours.
  std::vector<std::string> names;
  s = posix::ListDir(path, &names);
  if (!s.ok()) return s;
  // A creation takes the lock first: without it, these are not its files.
  const bool locked =
      std::find(names.begin(), names.end(), kLockFileName) != names.end();
  for (const std::string& name : names) {
    if (!IsCreationLeftover(name) || !locked) {
      return Status::NotAStore(path + " is not a Sluice store: the directory "
                               "is not empty and has no " + kHeaderFileName +
                               " header");
    }
  }
  if (!options.create_if_missing || options.read_only) {
    return Status::NotFound("store " + path + " does not exist (" +
                            (names.empty() ? "empty directory"
                                           : "its creation did not finish") +
                            ")");
  }
  *create = true;
  return Status::OK();
}

// Under the writer's lock, a store about to be created: another creator
// may have finished meanwhile (*create becomes false), else what an
// unfinished creation left is removed.
Status PrepareCreation(const std::string& path, bool* create) {
  posix::PathKind header;
  Status s = posix::Probe(posix::JoinPath(path, kHeaderFileName), &header);
  if (!s.ok()) return s;
  if (header != posix::PathKind::kMissing) {
    *create = false;
    return Status::OK();
  }
  // A record of a barrier means the store was created and written: its
  // header was lost since, and nothing may be removed.
  BarrierRecord record;
  if (BarrierFile::Read(path, &record).ok() && record.number > 0) {
    return Status::Corruption("store " + path + " has no " + kHeaderFileName +
                              " header, but its barrier record says barrier " +
                              std::to_string(record.number) +
                              " was made durable: the header was lost");
  }
  std::vector<std::string> names;
  s = posix::ListDir(path, &names);
  bool removed = false;
  for (size_t i = 0; s.ok() && i < names.size(); ++i) {
    if (names[i] == kLockFileName) continue;
    if (!IsCreationLeftover(names[i])) {
      return Status::NotAStore(path + " is not a Sluice store: " + names[i] +
                               " appeared in it while it was being created");
    }
    s = posix::RemoveTree(posix::JoinPath(path, names[i]));
    removed = true;
  }
  if (s.ok() && removed) s = posix::SyncDir(path);
  if (!s.ok()) {
    return Status(s.code(), "cannot clear the unfinished creation of store " +
                                path + ": " + s.message());
  }
  return s;
}

BarrierRecord RecordOf(const StoreHeader& header, uint64_t number) {
  BarrierRecord r;
  r.number = number;
  r.layout = static_cast<uint32_t>(header.layout);
  r.created_nanos = header.created_nanos;
  return r;
}

// A record that belongs to another store, or says another layout, means
// the header or the record is not this store's.
Status CheckRecordMatches(const std::string& what, const StoreHeader& header,
                          const BarrierRecord& r) {
  if (r.created_nanos != header.created_nanos) {
    return Status::Corruption(what + " belongs to a store created at another "
                              "time than this store's header says");
  }
  if (r.layout != static_cast<uint32_t>(header.layout)) {
    return Status::Corruption(what + " says layout id " +
                              std::to_string(r.layout) + ", the header " +
                              LayoutName(header.layout));
  }
  return Status::OK();
}

Status ReadRecordFile(const std::string& path, const StoreHeader& header,
                      BarrierRecord* out) {
  Status s = BarrierFile::Read(path, out);
  if (s.IsNotFound()) {
    return Status::Corruption("store " + path + ": its barrier record " +
                              kBarrierFileName + " is missing, so what its "
                              "barriers made durable cannot be checked");
  }
  if (!s.ok()) return Status(s.code(), "store " + path + ": " + s.message());
  return CheckRecordMatches("store " + path + ": its barrier record", header,
                            *out);
}

// The tree must come back with at least the recorded barrier: less means
// its own metadata lost what a barrier had made durable. On success
// *recorded is the newest barrier the store holds.
Status CheckTreeRecord(const std::string& path, const StoreHeader& header,
                       Backend* backend, bool has_record,
                       BarrierRecord* recorded) {
  std::string raw;
  Status s = backend->Get(kBarrierKey, &raw);
  if (s.IsNotFound()) {
    if (recorded->number == 0) return Status::OK();
    return Status::Corruption(
        "store " + path + ": barrier " + std::to_string(recorded->number) +
        " was made durable, but the backend (" + BackendName(header.backend) +
        ") came back with no barrier at all: its metadata was truncated or "
        "deleted, and data of completed barriers is missing");
  }
  if (!s.ok() && s.code() != Code::kCorruption) return s;
  const std::string what = "store " + path + ": the barrier record in its " +
                           BackendName(header.backend) + " tree";
  BarrierRecord tree;
  if (s.ok()) s = BarrierRecord::Decode(raw, what, &tree);
  if (!s.ok()) {
    return Status::Corruption(s.message() + " (read as layout " +
                              LayoutName(header.layout) +
                              ": the header's layout may be wrong)");
  }
  s = CheckRecordMatches(what, header, tree);
  if (!s.ok()) return s;
  if (has_record && tree.number < recorded->number) {
    return Status::Corruption(
        "store " + path + ": barrier " + std::to_string(recorded->number) +
        " was made durable, but the backend (" + BackendName(header.backend) +
        ") came back at barrier " + std::to_string(tree.number) +
        ": its metadata was truncated or deleted, and data of completed "
        "barriers is missing");
  }
  if (tree.number > recorded->number) *recorded = tree;
  return Status::OK();
}

// The block cache a tree gets: block_cache_bytes, or for "auto" the size
// of its table files now (layout vlog: keys and value-log locations), so
// that a reader looking extents up out of key order reads each block once
// rather than once per look-up. Layout lsm's tables hold the data: none.
size_t BlockCacheFor(const StoreOptions& options, StoreLayout layout,
                     const std::string& tree_dir) {
  if (options.block_cache_bytes != StoreOptions::kBlockCacheAuto) {
    return options.block_cache_bytes;
  }
  if (layout == StoreLayout::kLsm) return 0;
  constexpr size_t kMin = 1u << 20, kMax = 64u << 20;
  size_t tables = 0;
  std::vector<std::string> names;
  if (posix::ListDir(tree_dir, &names).ok()) {  // none yet: the minimum
    for (const std::string& n : names) {
      const size_t dot = n.rfind('.');
      if (dot == std::string::npos) continue;
      const std::string ext = n.substr(dot);
      if (ext != ".sst" && ext != ".ldb") continue;
      struct stat st;
      // A table a writer removed meanwhile (snapshot readers) counts 0.
      if (stat(posix::JoinPath(tree_dir, n).c_str(), &st) == 0) {
        tables += static_cast<size_t>(st.st_size);
      }
    }
  }
  return std::min(std::max(tables, kMin), kMax);
}

}  // namespace

Store::~Store() = default;

Status Store::Open(const StoreOptions& given, const std::string& path,
                   std::unique_ptr<Store>* store) {
  store->reset();
  if (path.empty()) return Status::InvalidArgument("empty store path");
  StoreOptions options;
  Status s = ConfigureStoreOptions(given, &options);
  if (s.ok()) s = options.Validate();
  // The backend's module, loaded once its kind is known: a backend that
  // cannot be loaded, or options it cannot honour, are refused before the
  // disk is touched when the options name it, and before a new store is
  // begun otherwise.
  const BackendModule* module = nullptr;
  if (s.ok() && options.backend != BackendKind::kDefault) {
    s = BackendModuleFor(options.backend, options, path, &module);
  }
  bool create = false;
  if (s.ok()) s = Locate(options, path, &create);
  auto lock = std::make_unique<StoreLock>();
  // A snapshot reader takes no lock, on a store whose backend can be read
  // while it is written (decided once the header is read, below).
  const bool snapshot = options.read_only && options.snapshot_reads;
  if (s.ok() && !snapshot) s = lock->Acquire(path, !options.read_only);
  if (s.ok() && create) s = PrepareCreation(path, &create);
  StoreHeader header;
  if (s.ok() && create) {
    header.backend = options.backend == BackendKind::kDefault
                         ? BackendKind::kRocksDB
                         : options.backend;
    header.layout = options.layout == StoreLayout::kDefault ? StoreLayout::kVlog
                                                            : options.layout;
    // In nanoseconds: the barrier record carries it, and tells a record
    // file copied from another store by it.
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    header.created_nanos = static_cast<uint64_t>(now.tv_sec) * 1000000000u +
                           static_cast<uint64_t>(now.tv_nsec);
    if (module == nullptr) {
      s = BackendModuleFor(header.backend, options, path, &module);
    }
    if (s.ok()) {
      s = posix::CreateDirs(posix::JoinPath(path, BackendName(header.backend)));
    }
    if (s.ok()) s = BarrierFile::Create(path, RecordOf(header, 0));
    if (s.ok()) s = WriteStoreHeader(path, header);
  } else if (s.ok()) {
    s = ReadStoreHeader(path, &header);
    if (s.ok() && options.backend != BackendKind::kDefault &&
        options.backend != header.backend) {
      s = Status::InvalidArgument(
          "store " + path + " was created with backend " +
          BackendName(header.backend) + "; it cannot be opened with backend=" +
          BackendName(options.backend));
    }
    if (s.ok() && options.layout != StoreLayout::kDefault &&
        options.layout != header.layout) {
      s = Status::InvalidArgument(
          "store " + path + " was created with layout " +
          LayoutName(header.layout) + "; it cannot be opened with layout=" +
          LayoutName(options.layout));
    }
  }
  if (s.ok() && snapshot && header.backend != BackendKind::kRocksDB) {
    s = lock->Acquire(path, false);  // LevelDB cannot be read while written
  }
  // What the last barrier covered, read before the tree is opened: a
  // snapshot reader's tree is then at least as new as the record.
  BarrierRecord recorded = RecordOf(header, 0);
  const bool has_record = header.version >= kBarrierRecordVersion;
  if (s.ok() && !create && has_record) s = ReadRecordFile(path, header, &recorded);
  if (s.ok() && !create && header.layout == StoreLayout::kLsm) {
    posix::PathKind vlog;
    s = posix::Probe(posix::JoinPath(path, "vlog"), &vlog);
    if (s.ok() && vlog != posix::PathKind::kMissing) {
      s = Status::Corruption("store " + path + ": its header says layout lsm, "
                             "but it has a value log (vlog/): the header is "
                             "wrong");
    }
  }
  const std::string backend_dir =
      posix::JoinPath(path, BackendName(header.backend));
  if (s.ok() && !create) {
    posix::PathKind kind;
    s = posix::Probe(backend_dir, &kind);
    if (s.ok() && kind != posix::PathKind::kDirectory) {
      s = Status::Corruption("store " + path + ": its backend directory " +
                             backend_dir + " is missing");
    }
  }
  // A creation killed after its header but before the backend made its
  // own files: nothing was ever written. A writer lets the backend create
  // them; a reader finds no store yet.
  if (s.ok() && !create && options.read_only && recorded.number == 0) {
    posix::PathKind current;
    s = posix::Probe(posix::JoinPath(backend_dir, "CURRENT"), &current);
    if (s.ok() && current == posix::PathKind::kMissing) {
      s = Status::NotFound("store " + path + " holds nothing yet (its creation "
                           "did not finish)");
    }
  }
  if (s.ok() && module == nullptr) {  // an existing store's, by its header
    s = BackendModuleFor(header.backend, options, path, &module);
  }
  std::unique_ptr<Backend> backend;
  const std::string vlog_dir = posix::JoinPath(path, "vlog");
  // A reader pins the value log before it sees the tree: the writer gives
  // back no value that this reader's view of the tree may still point at.
  int pin_fd = -1;
  if (s.ok() && options.read_only && header.layout == StoreLayout::kVlog) {
    pin_fd = ValueLog::PinForReading(vlog_dir);
  }
  if (s.ok()) {
    StoreOptions tree_options = options;
    tree_options.block_cache_bytes =
        BlockCacheFor(options, header.layout, backend_dir);
    s = module->open(tree_options, backend_dir, &backend);
  }
  if (s.ok() && header.layout == StoreLayout::kVlog) {
    std::unique_ptr<Backend> tree = std::move(backend);
    s = OpenVlogBackend(options, vlog_dir, std::move(tree), pin_fd, &backend);
    pin_fd = -1;
  }
  if (pin_fd >= 0) Env::Default()->Close(pin_fd);
  if (s.ok()) s = CheckTreeRecord(path, header, backend.get(), has_record, &recorded);
  std::unique_ptr<BarrierFile> barrier_file;
  if (s.ok() && !options.read_only) {
    if (!has_record) {  // an older store gets its record now
      s = BarrierFile::Create(path, recorded);
      header.version = kStoreFormatVersion;
      if (s.ok()) s = WriteStoreHeader(path, header);
    }
    barrier_file = std::make_unique<BarrierFile>();
    if (s.ok()) s = barrier_file->OpenForWriting(path);
  }
  if (s.ok()) {
    store->reset(new StoreImpl(options, path, header.backend, header.layout,
                               std::move(lock), std::move(backend),
                               std::move(barrier_file), recorded));
  } else if (backend) {
    backend->Close();
  }
  return s;
}

}  // namespace sluice
