// The "vlog" store layout: a Backend that keeps values of at least
// vlog_min_value bytes in a ValueLog and gives the LSM-tree beneath only
// their locations. Every value in the tree carries a one-byte tag:
//   0x00 value          the value itself (small values)
//   0x01 pointer        a ValuePointer (value_log.h) into the log
// Both tags are checked: the tree's block checksums cover the pointer, the
// pointer's checksum covers the value.
//
// Groups: without a write-ahead log (and where the store does not buffer
// updates itself), the tree's part of each batch (keys, tags, pointers) is
// held, and the held updates go to the tree as one batch in key order
// every kGroupUpdates, and before an iterator, a single update or a Flush
// (a Get looks at the held updates first). The
// tree's memtable inserts keys near the one before far faster than random
// ones: 16 KiB file writes at random offsets, three keys each, spent 42 %
// of their time inserting one batch at a time. Nothing is less durable:
// without a log, the memtable reaches the disk only at a barrier anyway.
//
// Space: every update looks up the value it replaces. A pointer it drops is
// kept until a Flush has made the update durable, then handed to the log's
// Reclaim (a crash before that leaves the value in place, still pointed at
// by the tree as it was at the last barrier).
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/backend.h"
#include "store/value_log.h"
#include "util/env.h"

namespace sluice {
namespace {

constexpr char kInline = 0x00;
constexpr char kPointer = 0x01;

// The location in a pointer-tagged value (raw[0] == kPointer).
Status DecodePointer(std::string_view raw, const ValueLog& log,
                     ValuePointer* p) {
  if (raw.size() != 1 + ValuePointer::kEncodedSize) {
    return Status::Corruption("a value with a bad layout tag in " + log.dir());
  }
  *p = ValuePointer::DecodeFrom(raw.data() + 1);
  return Status::OK();
}

// Resolves a tagged value: an inline value is a view into `raw`; a pointer
// is read into the resolver's buffer (see ValueLog::ReadView).
class Resolver {
 public:
  explicit Resolver(ValueLog* log) : log_(log) {}
  ~Resolver() { ValueLog::ReleaseBuffer(&buf_); }
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;
  Status Resolve(std::string_view raw, std::string_view* out) {
    if (raw.empty()) {
      return Status::Corruption("a value without its layout tag in " +
                                log_->dir());
    }
    if (raw[0] == kInline) {
      *out = raw.substr(1);
      return Status::OK();
    }
    if (raw[0] != kPointer) {
      return Status::Corruption("a value with a bad layout tag in " +
                                log_->dir());
    }
    ValuePointer p;
    Status s = DecodePointer(raw, *log_, &p);
    if (!s.ok()) return s;
    return log_->ReadView(p, &buf_, out);
  }

 private:
  ValueLog* log_;
  ValueLog::ReadBuffer buf_;
};

// Readers in flight: a Get between its lookup and its read, an iterator
// for its whole life (it sees the tree as it was when created). While any
// is, no dropped value's space is given back: a reader may hold its
// pointer (Flush keeps the ranges for a later call, Close gives them back
// once the store's iterators are gone).
class ReaderCount {
 public:
  void Enter() { n_.fetch_add(1); }
  void Leave() { n_.fetch_sub(1); }
  bool Any() const { return n_.load() > 0; }

 private:
  std::atomic<int> n_{0};
};

class ReaderPin {
 public:
  explicit ReaderPin(ReaderCount* c) : c_(c) { c_->Enter(); }
  ~ReaderPin() { c_->Leave(); }
  ReaderPin(const ReaderPin&) = delete;
  ReaderPin& operator=(const ReaderPin&) = delete;

 private:
  ReaderCount* c_;
};

class VlogIterator final : public Iterator {
 public:
  // `pin` is taken before `inner` was created.
  VlogIterator(std::unique_ptr<ReaderPin> pin, std::unique_ptr<Iterator> inner,
               ValueLog* log)
      : pin_(std::move(pin)), inner_(std::move(inner)), resolver_(log) {}
  // A value that could not be read stops the iterator (status() says why)
  // until it is positioned again.
  bool Valid() const override { return error_.ok() && inner_->Valid(); }
  void SeekToFirst() override { Repositioned(), inner_->SeekToFirst(); }
  void Seek(std::string_view t) override { Repositioned(), inner_->Seek(t); }
  void SeekForPrev(std::string_view t) override {
    Repositioned(), inner_->SeekForPrev(t);
  }
  void Next() override {
    if (error_.ok()) Moved(), inner_->Next();
  }
  void Prev() override {
    if (error_.ok()) Moved(), inner_->Prev();
  }
  std::string_view key() const override { return inner_->key(); }
  // Read when first asked for. One that cannot be read is empty, and
  // makes the iterator invalid: a caller that checks Valid() after value()
  // (or status() after its loop) never takes it for data.
  std::string_view value() const override {
    if (!resolved_) {
      resolved_ = true;
      Status s = resolver_.Resolve(inner_->value(), &value_);
      if (!s.ok()) {
        value_ = {};
        if (error_.ok()) error_ = s;
      }
    }
    return value_;
  }
  Status status() const override {
    Status s = inner_->status();
    return s.ok() ? error_ : s;
  }

 private:
  void Moved() { resolved_ = false; }
  void Repositioned() {
    resolved_ = false;
    error_ = Status::OK();
  }

  std::unique_ptr<ReaderPin> pin_;  // first: released last
  std::unique_ptr<Iterator> inner_;
  mutable Resolver resolver_;
  mutable bool resolved_ = false;
  mutable std::string_view value_;
  mutable Status error_;
};

// An iterator over nothing whose status is an error: the tree could not be
// brought up to date, so what it holds is not what the store was told.
class ErrorIterator final : public Iterator {
 public:
  explicit ErrorIterator(Status s) : s_(std::move(s)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void Seek(std::string_view) override {}
  void SeekForPrev(std::string_view) override {}
  void Next() override {}
  void Prev() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  Status status() const override { return s_; }

 private:
  const Status s_;
};

class VlogBackend final : public Backend {
 public:
  // `group`: hold the tree's updates of batches and write them to the
  // tree together (see pending_).
  VlogBackend(std::unique_ptr<Backend> tree, std::unique_ptr<ValueLog> log,
              size_t min_value, int pin_fd, bool group)
      : tree_(std::move(tree)),
        log_(std::move(log)),
        min_value_(min_value),
        group_(group),
        pin_fd_(pin_fd) {}
  ~VlogBackend() override { Close(); }

  Status Get(std::string_view key, std::string* value) override {
    ReaderPin pin(&readers_);  // before a held pointer is seen
    std::string raw;
    Status s;
    // A held update of the key is its value (a tree that fails writes
    // still serves the rest).
    WriteBuffer::Lookup held = WriteBuffer::Lookup::kMissing;
    if (group_ && holding_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lock(pending_mu_);
      held = pending_.Find(key, &raw);
    }
    if (held == WriteBuffer::Lookup::kDeleted) {
      return Status::NotFound(std::string(key));
    }
    if (held == WriteBuffer::Lookup::kMissing) s = tree_->Get(key, &raw);
    if (!s.ok()) return s;
    if (raw.empty() || raw[0] != kPointer) {
      std::string_view v;
      Resolver r(log_.get());
      s = r.Resolve(raw, &v);
      if (s.ok()) value->assign(v.data(), v.size());
      return s;
    }
    // A pointer is read straight into the caller's string, once it is
    // known to point inside the log.
    ValuePointer p;
    s = DecodePointer(raw, *log_, &p);
    if (s.ok()) s = log_->CheckExtent(p);
    if (!s.ok()) return s;
    value->resize(p.length);
    return log_->Read(p, value->data());
  }
  Status Put(std::string_view key, std::string_view value) override {
    std::shared_lock<std::shared_mutex> updating(update_mu_);
    Status w = WritePending();  // a held update of the key goes first
    if (!w.ok()) return w;
    std::vector<ValuePointer> old;
    NoteReplaced(key, &old);
    std::string v;
    Status s = Encode(value, &v);
    if (s.ok()) s = tree_->Put(key, v);
    if (s.ok()) Dropped(&old);
    return s;
  }
  Status Delete(std::string_view key) override {
    std::shared_lock<std::shared_mutex> updating(update_mu_);
    Status w = WritePending();
    if (!w.ok()) return w;
    std::vector<ValuePointer> old;
    NoteReplaced(key, &old);
    Status s = tree_->Delete(key);
    if (s.ok()) Dropped(&old);
    return s;
  }
  Status Append(std::string_view, std::string_view) override {
    return Status::NotSupported("the vlog layout appends by rewriting");
  }
  Status Write(const WriteBuffer& buffer) override {
    std::shared_lock<std::shared_mutex> updating(update_mu_);
    if (group_) return WriteGrouped(buffer);
    WriteBuffer tagged;
    std::string v;
    std::vector<ValuePointer> old;
    for (const auto& [key, value] : buffer.entries()) {
      // A key whose value was short enough to be kept in the tree (under
      // this open's threshold) holds no logged value: no look-up.
      if (value.replaces_at_most >= min_value_) NoteReplaced(key, &old);
      if (!value) {
        tagged.Delete(key);
        continue;
      }
      Status s = Encode(*value, &v);
      if (!s.ok()) return s;
      tagged.Put(key, v);
    }
    Status s = tree_->Write(tagged);
    if (s.ok()) Dropped(&old);
    return s;
  }
  // A held update that cannot be written shows in the iterator's status
  // (and stays held, for the next barrier to report).
  std::unique_ptr<Iterator> NewIterator(std::string_view lower,
                                        std::string_view upper) override {
    Status w = WritePending();
    if (!w.ok()) return std::make_unique<ErrorIterator>(w);
    auto pin = std::make_unique<ReaderPin>(&readers_);
    return std::make_unique<VlogIterator>(
        std::move(pin), tree_->NewIterator(lower, upper), log_.get());
  }
  // The values first: a pointer must never be durable before its value.
  // Then the space of the values dropped before the sync.
  Status Flush() override {
    Status s = WritePending();
    if (!s.ok()) return s;
    std::vector<ValuePointer> dropped;
    {
      std::lock_guard<std::mutex> lock(dead_mu_);
      dropped.swap(dropped_);
    }
    s = log_->Sync();
    if (s.ok()) s = tree_->Flush();
    std::lock_guard<std::mutex> lock(dead_mu_);
    std::vector<ValuePointer>& to = s.ok() ? durable_ : dropped_;
    to.insert(to.end(), dropped.begin(), dropped.end());
    if (s.ok() && !readers_.Any()) log_->Reclaim(&durable_);
    return s;
  }
  // Between the flush and the scan no update runs: the tree then says
  // exactly what is durable, and no value is appended but not yet pointed at.
  Status ReclaimUnreferenced(uint64_t* bytes) override {
    *bytes = 0;
    std::unique_lock<std::shared_mutex> alone(update_mu_);
    Status s = Flush();
    if (!s.ok()) return s;
    if (readers_.Any()) {
      return Status::Busy("value log " + log_->dir() +
                          ": a reader of this store is reading; nothing is "
                          "reclaimed while one is");
    }
    return log_->ReclaimAllBut(
        [&](std::vector<ValuePointer>* live) {
          std::unique_ptr<Iterator> it = tree_->NewIterator({}, {});
          for (it->SeekToFirst(); it->Valid(); it->Next()) {
            const std::string_view raw = it->value();
            if (raw.empty() || raw[0] != kPointer) continue;
            ValuePointer p;
            Status d = DecodePointer(raw, *log_, &p);
            if (!d.ok()) return d;
            live->push_back(p);
          }
          return it->status();
        },
        bytes);
  }
  Status Close() override {
    if (closed_) return Status::OK();
    Status held = WritePending();  // the store's Close made a barrier first
    closed_ = true;
    {
      // What a reader's pin held back at the last Flush.
      std::lock_guard<std::mutex> lock(dead_mu_);
      log_->Reclaim(&durable_);
    }
    Status s = log_->Close();
    Status t = tree_->Close();
    tree_->SetDurabilityHook(nullptr);
    if (pin_fd_ >= 0) Env::Default()->Close(pin_fd_);
    pin_fd_ = -1;
    if (!held.ok()) return held;
    return s.ok() ? t : s;
  }
  // The store's own tree takes no other hook.
  void SetDurabilityHook(DurabilityHook) override {}
  bool HasNativeAppend() const override { return false; }
  bool WantsWriteBuffer() const override { return tree_->WantsWriteBuffer(); }

 private:
  Status Encode(std::string_view value, std::string* out) {
    out->clear();
    if (value.size() < min_value_) {
      out->reserve(1 + value.size());
      out->push_back(kInline);
      out->append(value.data(), value.size());
      return Status::OK();
    }
    ValuePointer p;
    Status s = log_->Append(value, &p);
    if (!s.ok()) return s;
    out->resize(1 + ValuePointer::kEncodedSize);
    (*out)[0] = kPointer;
    p.EncodeTo(&(*out)[1]);
    return Status::OK();
  }

  // A batch's updates into pending_. Its values go to the log now, before
  // the lock is taken; only the tree's part waits. A full group is written
  // to the tree before the batch goes in, and after a group failed to
  // reach the tree every batch first tries it again: a failure refuses the
  // batch, as its error says, and keeps the held updates held (the
  // refused batch's values stay in the log unreferenced, as those of an
  // append that fails midway do, until ReclaimSpace).
  //
  // Not closed: a single Put of a key racing a batch of the same key may
  // note the same replaced value as the batch did, and its own value is
  // then never given back (the group overwrites it) until ReclaimSpace:
  // space, not data, as without groups, in a wider window.
  Status WriteGrouped(const WriteBuffer& buffer) {
    std::vector<std::pair<std::string_view, std::optional<std::string>>> tagged;
    tagged.reserve(buffer.entries().size());
    for (const auto& [key, value] : buffer.entries()) {
      if (!value) {
        tagged.emplace_back(key, std::nullopt);
        continue;
      }
      std::string v;
      Status s = Encode(*value, &v);
      if (!s.ok()) return s;
      tagged.emplace_back(key, std::move(v));
    }
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (!group_error_.ok() || pending_.entries().size() >= kGroupUpdates) {
      Status s = WritePendingLocked();
      if (!s.ok()) return s;
    }
    std::vector<ValuePointer> old;
    for (const auto& [key, value] : buffer.entries()) {
      std::string held;
      switch (pending_.Find(key, &held)) {
        case WriteBuffer::Lookup::kValue:  // replaces the held update's value
          if (!held.empty() && held[0] == kPointer) {
            ValuePointer p;
            if (DecodePointer(held, *log_, &p).ok()) old.push_back(p);
          }
          break;
        case WriteBuffer::Lookup::kDeleted:
          break;
        case WriteBuffer::Lookup::kMissing:
          if (value.replaces_at_most >= min_value_) NoteReplaced(key, &old);
          break;
      }
    }
    for (auto& [key, v] : tagged) {
      if (v) {
        pending_.PutSwap(key, &*v);
      } else {
        pending_.Delete(key);
      }
    }
    pending_old_.insert(pending_old_.end(), old.begin(), old.end());
    holding_.store(true, std::memory_order_release);
    return Status::OK();
  }
  Status WritePending() {
    if (!group_) return Status::OK();
    std::lock_guard<std::mutex> lock(pending_mu_);
    return WritePendingLocked();
  }
  // The held updates as one batch of the tree, in key order (a skiplist
  // inserts keys near the last one far faster than random ones); the
  // values they replaced are then dropped.
  Status WritePendingLocked() {
    if (pending_.empty()) return Status::OK();
    group_error_ = tree_->Write(pending_);
    if (!group_error_.ok()) return group_error_;
    pending_.Clear();
    holding_.store(false, std::memory_order_release);
    Dropped(&pending_old_);
    return Status::OK();
  }

  // Appends to *out the pointer `key` holds now, if it holds one.
  void NoteReplaced(std::string_view key, std::vector<ValuePointer>* out) {
    std::string raw;
    if (!tree_->Get(key, &raw).ok() || raw.empty() || raw[0] != kPointer) {
      return;
    }
    ValuePointer p;
    if (DecodePointer(raw, *log_, &p).ok()) out->push_back(p);
  }
  // The values in *old are no longer pointed at (once durable).
  void Dropped(std::vector<ValuePointer>* old) {
    if (old->empty()) return;
    std::lock_guard<std::mutex> lock(dead_mu_);
    dropped_.insert(dropped_.end(), old->begin(), old->end());
    old->clear();
  }

  // Updates held before a group is written to the tree: about 200 file
  // extents' worth.
  static constexpr size_t kGroupUpdates = 512;

  std::unique_ptr<Backend> tree_;
  std::unique_ptr<ValueLog> log_;
  const size_t min_value_;
  const bool group_;
  // With group_: the tree's updates of batches written since the last
  // group (tagged values, as the tree takes them), and the values they
  // replaced. An iterator, a single Put or Delete and a Flush write them
  // first; group_error_ is the last group's write, which the next batch
  // retries first.
  std::mutex pending_mu_;
  WriteBuffer pending_;                     // GUARDED_BY(pending_mu_)
  std::vector<ValuePointer> pending_old_;   // GUARDED_BY(pending_mu_)
  Status group_error_;                      // GUARDED_BY(pending_mu_)
  // pending_ holds something: a Get looks there first (it never writes
  // the tree, so a tree that fails writes still serves reads).
  std::atomic<bool> holding_{false};
  bool closed_ = false;
  // A read-only opener's pin (ValueLog::PinForReading), or -1.
  int pin_fd_ = -1;
  // Updates share it; ReclaimUnreferenced takes it alone.
  std::shared_mutex update_mu_;
  ReaderCount readers_;
  std::mutex dead_mu_;
  // Values dropped since the last Flush; values dropped durably that a
  // reader's pin kept Reclaim from giving back.
  std::vector<ValuePointer> dropped_;  // GUARDED_BY(dead_mu_)
  std::vector<ValuePointer> durable_;  // GUARDED_BY(dead_mu_)
};

}  // namespace

Status OpenVlogBackend(const StoreOptions& options, const std::string& dir,
                       std::unique_ptr<Backend> tree, int pin_fd,
                       std::unique_ptr<Backend>* out) {
  ValueLog::Options lo;
  lo.read_only = options.read_only;
  lo.direct_io = options.vlog_direct_io;
  lo.direct_reads = options.vlog_direct_reads;
  lo.write_buffers = options.vlog_write_buffers;
  // The write buffer's memory is the log's: buffers of half of it, one
  // filling while the others are written (vlog_write_buffers of them).
  lo.buffer_bytes = options.write_buffer_size / 2;
  lo.file_bytes = options.vlog_file_bytes;
  std::unique_ptr<ValueLog> log;
  Status s = ValueLog::Open(lo, dir, &log);
  if (!s.ok()) {
    if (pin_fd >= 0) Env::Default()->Close(pin_fd);
    return s;
  }
  // A location must never be durable before its value: whenever the tree
  // may make what it was given durable on its own (a flush it starts, a
  // write its log takes), the log first syncs every value appended so far.
  ValueLog* raw = log.get();
  if (!options.read_only) tree->SetDurabilityHook([raw] { return raw->Sync(); });
  // Batches' tree updates are held and written in groups where nothing
  // but a barrier makes them durable anyway (no write-ahead log) and the
  // store does not buffer them already (LevelDB without a log).
  const bool group = !options.read_only && !options.wal &&
                     !tree->WantsWriteBuffer();
  *out = std::make_unique<VlogBackend>(std::move(tree), std::move(log),
                                       options.vlog_min_value, pin_fd, group);
  return Status::OK();
}

}  // namespace sluice
