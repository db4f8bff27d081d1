#include "fs/reader.h"

#include <dirent.h>

#include <algorithm>
#include <condition_variable>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace sluice {
namespace fs {

std::string WriterStorePath(const std::string& root, int writer) {
  char name[32];
  snprintf(name, sizeof name, "/writer.%08d", writer);
  return root + name;
}

Status CheckOpenFlags(const std::string& path, int flags) {
  if ((flags & kDirectory) && (flags & kCreate)) {
    return Status::InvalidArgument(path + ": O_DIRECTORY with O_CREAT (a "
                                   "directory is made with mkdir)");
  }
  return Status::OK();
}

namespace {

// A new iterator for the cursor when the file changed since it took its
// own. The generation is read before the iterator: a write in between
// renews it again at the next read, never leaves it stale.
void RenewIfStale(FsStore* store, uint64_t ino, const std::string& prefix,
                  Cursor* c) {
  const uint64_t generation = store->generation(ino);
  if (!c->it || c->generation != generation) {
    c->generation = generation;
    c->it = PrefixIterator(store->store(), prefix);
    c->on_extent = false;
  }
}

// Positions the cursor on the extent holding `offset`, or the first after
// it. Returns false when there is none.
bool PositionAt(FsStore* store, uint64_t ino, uint64_t offset, Cursor* c,
                const std::string& prefix) {
  RenewIfStale(store, ino, prefix, c);
  if (c->on_extent && c->ext_off <= offset &&
      offset < c->ext_off + c->data.size()) {
    return true;  // still on it
  }
  if (c->on_extent && offset == c->ext_off + c->data.size()) {
    c->it->Next();  // a sequential read goes on with the next extent
    c->on_extent = false;
    if (!c->it->Valid() || !HasPrefix(c->it->key(), prefix)) return false;
    if (KeyOffset(c->it->key()) >= offset) return true;
  }
  c->on_extent = false;
  c->it->SeekForPrev(ExtentKey(ino, offset));
  if (c->it->Valid() && HasPrefix(c->it->key(), prefix)) {
    // On the extent starting at or before offset: is offset inside it?
    // Its length is in its header; past it, move on.
    std::string_view v = c->it->value();
    if (v.size() >= kExtentHeader &&
        KeyOffset(c->it->key()) + (v.size() - kExtentHeader) > offset) {
      return true;
    }
    c->it->Next();
  } else {
    c->it->Seek(ExtentKey(ino, offset));
  }
  return c->it->Valid() && HasPrefix(c->it->key(), prefix);
}

// The value of the extent at `start` that `it` is on. A value the store
// could not read (in layout vlog: a flipped byte, a log file cut short, an
// I/O error) is the iterator's error, said as the store said it: the value
// itself is then empty, and decoding it would call the extent truncated.
Status ExtentValue(const Iterator& it, uint64_t start, const std::string& what,
                   std::string_view* v) {
  *v = it.value();
  if (!it.status().ok()) {
    return Status(it.status().code(), what + ": extent at offset " +
                                          std::to_string(start) + ": " +
                                          it.status().message());
  }
  return Status::OK();
}

// Decodes and verifies the extent the cursor's iterator is on, at `start`,
// and makes it the cursor's current extent.
Status TakeExtent(uint64_t ino, uint64_t start, const std::string& what,
                  Cursor* c) {
  std::string_view v, data;
  uint64_t sum;
  Status s = ExtentValue(*c->it, start, what, &v);
  if (s.ok()) s = DecodeExtent(v, ino, start, what, &data, &sum);
  if (!s.ok()) return s;
  c->on_extent = true;
  c->ext_off = start;
  c->data = data;
  c->sum = sum;
  if (c->on_extent_entered) c->on_extent_entered(start, data.size(), sum);
  return Status::OK();
}

}  // namespace

Status ReadRange(FsStore* store, uint64_t ino, const std::string& what,
                 uint64_t offset, size_t n, char* buf, Cursor* c,
                 std::vector<std::pair<uint64_t, uint64_t>>* covered) {
  const std::string prefix = ExtentPrefix(ino);
  const uint64_t end = offset + n;
  uint64_t filled = offset;  // bytes before this are copied or zeroed
  bool more = PositionAt(store, ino, offset, c, prefix);
  while (more) {
    const uint64_t start = c->on_extent ? c->ext_off : KeyOffset(c->it->key());
    if (start >= end) break;
    if (!c->on_extent) {
      Status s = TakeExtent(ino, start, what, c);
      if (!s.ok()) return s;
    }
    const uint64_t ext_end = start + c->data.size();
    const uint64_t from = std::max(start, offset), to = std::min(ext_end, end);
    if (from < to) {
      if (from > filled && !covered) {
        memset(buf + (filled - offset), 0, from - filled);
      }
      memcpy(buf + (from - offset), c->data.data() + (from - start), to - from);
      if (covered) covered->emplace_back(from, to);
      filled = to;
    }
    if (ext_end >= end) break;  // stay on this extent for the next read
    c->it->Next();
    c->on_extent = false;
    more = c->it->Valid() && HasPrefix(c->it->key(), prefix);
  }
  if (!c->it->status().ok()) {
    return Status(c->it->status().code(),
                  what + ": " + c->it->status().message());
  }
  if (filled < end && !covered) memset(buf + (filled - offset), 0, end - filled);
  return Status::OK();
}

// Puts the cursor on the extent starting at `start` (known from the index):
// the next one after the current, or an exact seek; never a backward seek,
// so no other file's table block is read.
Status EnterExtent(FsStore* store, uint64_t ino, uint64_t start,
                   const std::string& what, Cursor* c) {
  const std::string prefix = ExtentPrefix(ino);
  RenewIfStale(store, ino, prefix, c);
  if (c->on_extent && c->ext_off == start) return Status::OK();
  auto at_start = [&] {
    return c->it->Valid() && HasPrefix(c->it->key(), prefix) &&
           KeyOffset(c->it->key()) == start;
  };
  bool there = false;
  if (c->on_extent && start > c->ext_off) {  // usually the next extent
    c->it->Next();
    there = at_start();
  }
  c->on_extent = false;
  if (!there) {
    c->it->Seek(ExtentKey(ino, start));
    there = at_start();
  }
  if (!there) {
    if (!c->it->status().ok()) {
      return Status(c->it->status().code(),
                    what + ": " + c->it->status().message());
    }
    return Status::Corruption(what + ": the extent at offset " +
                              std::to_string(start) +
                              " is in the index but missing");
  }
  return TakeExtent(ino, start, what, c);
}

Status VerifyFile(FsStore* store, const Inode& inode, const std::string& path) {
  const std::string eprefix = ExtentPrefix(inode.ino);
  const std::string xprefix = IndexPrefix(inode.ino);
  std::unique_ptr<Iterator> e = PrefixIterator(store->store(), eprefix);
  std::unique_ptr<Iterator> x = PrefixIterator(store->store(), xprefix);
  FileChecksum sum(inode.size);
  uint64_t prev_end = 0;
  const std::string what = path + " (store " + store->path() + ")";
  // The first possible keys, not the bare prefixes: a bare prefix can equal
  // the index separator of the block before, and seeking to it would read
  // that block (another file's).
  e->Seek(ExtentKey(inode.ino, 0));
  x->Seek(IndexKey(inode.ino, 0));
  for (; e->Valid() && HasPrefix(e->key(), eprefix); e->Next(), x->Next()) {
    const uint64_t off = KeyOffset(e->key());
    std::string_view v, data;
    uint64_t data_sum;
    Status s = ExtentValue(*e, off, what, &v);
    if (s.ok()) s = DecodeExtent(v, inode.ino, off, what, &data, &data_sum);
    if (!s.ok()) return s;
    uint64_t len = 0, index_sum = 0;
    if (!x->Valid() || !HasPrefix(x->key(), xprefix) || KeyOffset(x->key()) != off ||
        !DecodeIndex(x->value(), &len, &index_sum).ok() || len != data.size() ||
        index_sum != data_sum) {
      return Status::Corruption(what + ": extent at offset " +
                                std::to_string(off) +
                                " does not match its index entry");
    }
    if (off < prev_end) {
      return Status::Corruption(what + ": extents overlap at offset " +
                                std::to_string(off));
    }
    prev_end = off + data.size();
    sum.Add(off, data.size(), data_sum);
  }
  if (!e->status().ok()) {
    return Status(e->status().code(), what + ": " + e->status().message());
  }
  if (x->Valid() && HasPrefix(x->key(), xprefix)) {
    return Status::Corruption(what + ": index entry at offset " +
                              std::to_string(KeyOffset(x->key())) +
                              " has no extent");
  }
  if (inode.flags & kChecksumStale) {
    return Status::Incomplete(what + ": no file checksum (its writer did not "
                              "close or sync it); its extents are intact");
  }
  if (sum.Value() != inode.checksum) {
    return Status::Corruption(what + ": file checksum mismatch: its extents "
                              "differ from what its writer closed");
  }
  if (inode.flags & kUnclosed) {
    return Status::Incomplete(what + ": its writer synced it but did not "
                              "close it (still writing, or died); what the "
                              "sync stored is intact");
  }
  return Status::OK();
}

namespace {

// One writer's copy of a file.
struct Part {
  FsStore* store;
  std::shared_ptr<FsStore> keep;  // a writer's view of another's store
  Inode inode;
  Cursor cursor;
  std::unique_ptr<FileChecksum> running;  // sequential whole-file check
  uint64_t summed_to = 0;
  // The extents (offset, length) from the index, loaded at the first read:
  // a read then touches only the extents it needs, in the stores that
  // hold them.
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  bool loaded = false;
  // Read-ahead (sequential reads): a second cursor, which the file's
  // background thread puts on the extent after the current one (read and
  // verified like any other) while the caller copies from the current one.
  // The fields below `ahead` are guarded by ReaderFile::ra_mu_; `ahead`
  // itself belongs to the thread while the state is kQueued or kLoading.
  enum AheadState { kIdle, kQueued, kLoading, kDone };
  Cursor ahead;
  AheadState ahead_state = kIdle;
  uint64_t ahead_start = 0;
  Status ahead_status;

  Status Load(const std::string& what) {
    const std::string prefix = IndexPrefix(inode.ino);
    std::unique_ptr<Iterator> it = PrefixIterator(store->store(), prefix);
    for (it->Seek(IndexKey(inode.ino, 0));
         it->Valid() && HasPrefix(it->key(), prefix); it->Next()) {
      uint64_t len, sum;
      Status s = DecodeIndex(it->value(), &len, &sum);
      if (!s.ok()) return Status(s.code(), what + ": " + s.message());
      extents.emplace_back(KeyOffset(it->key()), len);
    }
    loaded = it->status().ok();
    if (!loaded) {
      return Status(it->status().code(), what + ": " + it->status().message());
    }
    return Status::OK();
  }
};

// A piece of a read: bytes [begin, end) of the extent at `start` of part
// `part`.
struct Span {
  uint64_t start, begin, end;
  size_t part;
};

class ReaderFile : public PartsFile {
 public:
  ReaderFile(std::string path, std::vector<std::unique_ptr<Part>> parts)
      : path_(std::move(path)), parts_(std::move(parts)) {
    for (auto& p : parts_) {
      inodes_.push_back(p->inode);
      size_ = std::max(size_, p->inode.size);
      p->running = std::make_unique<FileChecksum>(p->inode.size);
      Part* part = p.get();
      p->cursor.on_extent_entered = [this, part](uint64_t off, uint64_t len,
                                                 uint64_t sum) {
        if (sequential_ && off >= part->summed_to) {
          part->running->Add(off, len, sum);
          part->summed_to = off + len;
        }
      };
    }
  }

  ~ReaderFile() override { StopReadAhead(); }

  Status PRead(void* buf, size_t n, uint64_t offset, size_t* got) override {
    std::lock_guard<std::mutex> lock(mu_);
    Timed timed(this);
    return PReadLocked(static_cast<char*>(buf), n, offset, got);
  }
  Status Read(void* buf, size_t n, size_t* got) override {
    std::lock_guard<std::mutex> lock(mu_);
    Timed timed(this);
    Status s = PReadLocked(static_cast<char*>(buf), n, offset_, got);
    if (s.ok()) offset_ += *got;
    return s;
  }
  Status ReadCovered(char* buf, size_t n, uint64_t offset, size_t* got,
                     std::vector<Covered>* covered) override {
    std::lock_guard<std::mutex> lock(mu_);
    spans_.clear();
    Status s = PReadLocked(buf, n, offset, got);
    if (!s.ok() || *got == 0) return s;
    for (const Span& sp : spans_) {
      covered->push_back({sp.begin, sp.end, parts_[sp.part]->store->writer()});
    }
    std::sort(covered->begin(), covered->end(),
              [](const Covered& a, const Covered& b) { return a.begin < b.begin; });
    return s;
  }
  uint64_t size() const override { return size_; }
  const std::vector<Inode>& inodes() const override { return inodes_; }
  Status Write(const void*, size_t) override { return ReadOnly(); }
  Status PWrite(const void*, size_t, uint64_t) override { return ReadOnly(); }
  Status Truncate(uint64_t) override { return ReadOnly(); }
  Status Sync() override { return Status::OK(); }
  Status Seek(int64_t offset, int whence, uint64_t* pos) override {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t base = whence == SEEK_CUR   ? static_cast<int64_t>(offset_)
                   : whence == SEEK_END ? static_cast<int64_t>(size_)
                                        : 0;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) {
      return Status::InvalidArgument(path_ + ": bad whence");
    }
    if (base + offset < 0) return Status::InvalidArgument(path_ + ": bad seek");
    offset_ = static_cast<uint64_t>(base + offset);
    *pos = offset_;
    return Status::OK();
  }
  Status Stat(FileInfo* info) override;
  const std::string& path() const override { return path_; }
  Status Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    StopReadAhead();
    for (auto& p : parts_) {
      p->cursor.it.reset();
      p->ahead.it.reset();
      p->ahead.on_extent = false;
    }
    return Status::OK();
  }

 private:
  Status ReadOnly() const {
    return Status::InvalidArgument(path_ + ": open read-only");
  }

  Status PReadLocked(char* buf, size_t n, uint64_t offset, size_t* got) {
    *got = 0;
    if (offset != seq_next_) sequential_ = false;
    if (offset >= size_ || n == 0) return Status::OK();
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    const uint64_t end = offset + n;
    // Which extents of which writers hold the range, from the indexes.
    spans_.clear();
    for (size_t i = 0; i < parts_.size(); ++i) {
      Part& p = *parts_[i];
      if (!p.loaded) {
        Status s = p.Load(path_);
        if (!s.ok()) return s;
      }
      auto it = std::upper_bound(
          p.extents.begin(), p.extents.end(),
          std::pair<uint64_t, uint64_t>(offset, ~uint64_t{0}));
      if (it != p.extents.begin()) --it;
      for (; it != p.extents.end() && it->first < end; ++it) {
        const uint64_t b = std::max(it->first, offset);
        const uint64_t e = std::min(it->first + it->second, end);
        if (b < e) spans_.push_back({it->first, b, e, i});
      }
    }
    if (parts_.size() > 1) {
      std::sort(spans_.begin(), spans_.end(),
                [](const Span& a, const Span& b) { return a.begin < b.begin; });
      for (size_t i = 1; i < spans_.size(); ++i) {
        if (spans_[i].begin < spans_[i - 1].end) {
          return Status::Corruption(
              path_ + ": writers " +
              std::to_string(parts_[spans_[i - 1].part]->store->writer()) +
              " and " + std::to_string(parts_[spans_[i].part]->store->writer()) +
              " both wrote bytes [" + std::to_string(spans_[i].begin) + ", " +
              std::to_string(std::min(spans_[i].end, spans_[i - 1].end)) +
              "); writers of one file must not overlap");
        }
      }
    }
    uint64_t filled = offset;
    for (const Span& sp : spans_) {
      Part& p = *parts_[sp.part];
      Status s = Enter(&p, sp.start);
      if (!s.ok()) return s;
      if (sp.end - sp.start > p.cursor.data.size()) {
        return Status::Corruption(path_ + ": the extent at offset " +
                                  std::to_string(sp.start) +
                                  " is shorter than its index entry says");
      }
      if (sp.begin > filled) memset(buf + (filled - offset), 0, sp.begin - filled);
      memcpy(buf + (sp.begin - offset), p.cursor.data.data() + (sp.begin - sp.start),
             sp.end - sp.begin);
      filled = sp.end;
    }
    if (filled < end) memset(buf + (filled - offset), 0, end - filled);
    *got = n;
    seq_next_ = end;
    if (sequential_ && seq_next_ == size_ && !checked_) {
      checked_ = true;
      return CheckWhole();
    }
    return Status::OK();
  }

  // Where a sequential reader's time goes: in its reads, or between them
  // (in the caller). Reading ahead on a thread pays when the caller works
  // between reads (it then runs beside the read-ahead, on another core);
  // when the caller only moves the bytes on (cat), the value log's own
  // read-ahead keeps the device busy, and a thread of ours would only
  // compete for the cores with the caller and the value log's readers.
  using Clock = std::chrono::steady_clock;
  struct Timed {
    explicit Timed(ReaderFile* f) : f(f), start(Clock::now()) {
      if (f->last_exit_ != Clock::time_point()) f->outside_ += start - f->last_exit_;
    }
    ~Timed() {
      f->last_exit_ = Clock::now();
      f->inside_ += f->last_exit_ - start;
    }
    ReaderFile* f;
    Clock::time_point start;
  };
  bool CallerBusy() const { return outside_ > inside_; }

  // Puts part p's cursor on its extent at `start`: the one read ahead when
  // it is that one, else read here. When reading sequentially, then starts
  // reading the extent after it.
  Status Enter(Part* p, uint64_t start) {
    Cursor& c = p->cursor;
    if (c.on_extent && c.ext_off == start) return Status::OK();
    bool took = false;
    {
      std::unique_lock<std::mutex> lock(ra_mu_);
      if (p->ahead_state != Part::kIdle) {
        ra_cv_.wait(lock, [&] { return p->ahead_state == Part::kDone; });
        p->ahead_state = Part::kIdle;
        // A failed read-ahead is retried below, which reports its error.
        took = p->ahead_status.ok() && p->ahead.on_extent &&
               p->ahead.ext_off == start;
      }
    }
    if (took) {
      Cursor& a = p->ahead;
      std::swap(c.it, a.it);
      std::swap(c.generation, a.generation);
      std::swap(c.ext_off, a.ext_off);
      std::swap(c.data, a.data);
      std::swap(c.sum, a.sum);
      std::swap(c.on_extent, a.on_extent);  // `a` keeps where `c` was
      if (c.on_extent_entered) c.on_extent_entered(start, c.data.size(), c.sum);
    } else {
      Status s = EnterExtent(p->store, p->inode.ino, start, path_, &c);
      if (!s.ok()) return s;
    }
    if (sequential_ && CallerBusy()) ReadAhead(p, start);
    return Status::OK();
  }

  // Queues the read of the extent after the one at `start`, if any.
  void ReadAhead(Part* p, uint64_t start) {
    auto next = std::upper_bound(
        p->extents.begin(), p->extents.end(),
        std::pair<uint64_t, uint64_t>(start, ~uint64_t{0}));
    if (next == p->extents.end()) return;
    std::lock_guard<std::mutex> lock(ra_mu_);
    if (ra_stop_ || p->ahead_state != Part::kIdle) return;
    p->ahead_start = next->first;
    p->ahead_state = Part::kQueued;
    if (!ra_thread_.joinable()) ra_thread_ = std::thread([this] { ReadAheadLoop(); });
    ra_cv_.notify_all();
  }

  void ReadAheadLoop() {
    std::unique_lock<std::mutex> lock(ra_mu_);
    for (;;) {
      Part* job = nullptr;
      ra_cv_.wait(lock, [&] {
        for (auto& p : parts_) {
          if (p->ahead_state == Part::kQueued) job = p.get();
        }
        return ra_stop_ || job != nullptr;
      });
      if (ra_stop_) return;
      job->ahead_state = Part::kLoading;
      const uint64_t start = job->ahead_start;
      lock.unlock();
      Status s = EnterExtent(job->store, job->inode.ino, start, path_, &job->ahead);
      lock.lock();
      job->ahead_status = s;
      job->ahead_state = Part::kDone;
      ra_cv_.notify_all();
    }
  }

  // Waits for the read under way, if any, and ends the thread.
  void StopReadAhead() {
    {
      std::lock_guard<std::mutex> lock(ra_mu_);
      ra_stop_ = true;
      ra_cv_.notify_all();
    }
    if (ra_thread_.joinable()) ra_thread_.join();
    for (auto& p : parts_) p->ahead_state = Part::kIdle;
  }

  // After a sequential read of the whole file: the extents read must be
  // those each writer's checksum covers.
  Status CheckWhole() {
    for (auto& p : parts_) {
      if (p->inode.flags & kChecksumStale) continue;
      if (p->running->Value() != p->inode.checksum) {
        return Status::Corruption(path_ + " (store " + p->store->path() +
                                  "): file checksum mismatch after reading "
                                  "it whole");
      }
    }
    return Status::OK();
  }

  const std::string path_;
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<Inode> inodes_;
  std::mutex mu_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  uint64_t seq_next_ = 0;
  bool sequential_ = true;
  Clock::time_point last_exit_;
  Clock::duration inside_{0}, outside_{0};
  bool checked_ = false;
  std::vector<Span> spans_;
  std::mutex ra_mu_;
  std::condition_variable ra_cv_;
  bool ra_stop_ = false;  // GUARDED_BY(ra_mu_)
  std::thread ra_thread_;
};

}  // namespace

FileInfo MergeInfo(const std::vector<Inode>& parts) {
  FileInfo f;
  const Inode& first = parts[0];
  f.ino = first.ino;
  f.is_dir = first.type == FileType::kDirectory;
  f.mode = first.mode;
  f.checksum_valid = true;
  f.complete = true;
  std::vector<PartChecksum> sums;
  for (const Inode& i : parts) {
    f.size = std::max(f.size, i.size);
    f.allocated += i.allocated;
    f.atime_ns = std::max(f.atime_ns, i.atime_ns);
    f.mtime_ns = std::max(f.mtime_ns, i.mtime_ns);
    f.ctime_ns = std::max(f.ctime_ns, i.ctime_ns);
    f.checksum_valid = f.checksum_valid && !(i.flags & kChecksumStale);
    f.complete = f.complete && !(i.flags & (kChecksumStale | kUnclosed));
    sums.push_back({i.size, i.checksum});
  }
  if (!f.is_dir) f.checksum = MergedChecksum(std::move(sums));
  return f;
}

std::unique_ptr<PartsFile> NewPartsFile(const std::string& path,
                                        std::vector<PeerPart> parts) {
  std::vector<std::unique_ptr<Part>> ps;
  for (PeerPart& pp : parts) {
    auto p = std::make_unique<Part>();
    p->store = pp.store.get();
    p->keep = std::move(pp.store);
    p->inode = pp.inode;
    ps.push_back(std::move(p));
  }
  return std::make_unique<ReaderFile>(path, std::move(ps));
}

namespace {

Status ReaderFile::Stat(FileInfo* info) {
  *info = MergeInfo(inodes_);
  return Status::OK();
}

class ReaderFs : public FileSystem {
 public:
  ReaderFs(std::string root, std::vector<std::unique_ptr<FsStore>> stores)
      : root_(std::move(root)), stores_(std::move(stores)) {}
  ~ReaderFs() override { Close(); }

  Status OpenFile(const std::string& raw, int flags, uint32_t,
                  std::unique_ptr<File>* file) override {
    Status s = CheckOpenFlags(raw, flags);
    if (!s.ok()) return s;
    if ((flags & 3) != kRead || (flags & (kCreate | kTruncate | kAppend))) {
      return Status::InvalidArgument(raw + ": the file system at " + root_ +
                                     " is open read-only");
    }
    std::string path;
    std::vector<Inode> inodes;
    std::vector<FsStore*> owners;
    s = Find(raw, &path, &inodes, &owners);
    if (!s.ok()) return s;
    if (inodes[0].type == FileType::kDirectory) {
      return Status::IsADirectory(path + ": is a directory");
    }
    if (flags & kDirectory) {
      return Status::NotADirectory(path + ": not a directory");
    }
    std::vector<std::unique_ptr<Part>> parts;
    for (size_t i = 0; i < inodes.size(); ++i) {
      auto p = std::make_unique<Part>();
      p->store = owners[i];
      p->inode = inodes[i];
      parts.push_back(std::move(p));
    }
    file->reset(new ReaderFile(path, std::move(parts)));
    return Status::OK();
  }

  Status Stat(const std::string& raw, FileInfo* info) override {
    std::string path;
    std::vector<Inode> inodes;
    std::vector<FsStore*> owners;
    Status s = Find(raw, &path, &inodes, &owners);
    if (s.ok()) *info = MergeInfo(inodes);
    return s;
  }

  // Merges every writer's listing. A listing that fails in one store
  // (bad entries left out, see FsStore::ListDir) still gives what it
  // could, with the others': the error is returned with it all.
  Status ReadDir(const std::string& raw, std::vector<DirEntry>* out) override {
    std::string path;
    std::vector<Inode> inodes;
    std::vector<FsStore*> owners;
    std::vector<std::vector<uint64_t>> ancestors;
    Status s = Find(raw, &path, &inodes, &owners, &ancestors);
    if (!s.ok()) return s;
    if (inodes[0].type != FileType::kDirectory) {
      return Status::NotADirectory(path + ": not a directory");
    }
    std::map<std::string, bool> names;
    Status failed;
    for (size_t i = 0; i < owners.size(); ++i) {
      std::vector<DirEntry> entries;
      s = owners[i]->ListDir(inodes[i].ino, ancestors[i], path, &entries);
      if (!s.ok() && failed.ok()) {
        failed = s;
      } else if (!s.ok()) {
        failed = Status(failed.code(), failed.message() + "; " + s.message());
      }
      for (auto& e : entries) names.emplace(e.name, e.is_dir);
    }
    for (auto& [name, is_dir] : names) out->push_back({name, is_dir});
    return failed;
  }

  Status Mkdir(const std::string& p, uint32_t) override { return ReadOnly(p); }
  Status Rmdir(const std::string& p) override { return ReadOnly(p); }
  Status Unlink(const std::string& p) override { return ReadOnly(p); }
  Status Rename(const std::string& p, const std::string&) override {
    return ReadOnly(p);
  }
  Status Truncate(const std::string& p, uint64_t) override { return ReadOnly(p); }
  Status SetAttr(const std::string& p, const SetAttrs&) override {
    return ReadOnly(p);
  }

  Status Verify(const std::string& raw) override {
    std::string path;
    std::vector<Inode> inodes;
    std::vector<FsStore*> owners;
    Status s = Find(raw, &path, &inodes, &owners);
    if (!s.ok() || inodes[0].type == FileType::kDirectory) return s;
    Status incomplete;
    for (size_t i = 0; i < owners.size(); ++i) {
      s = VerifyFile(owners[i], inodes[i], path);
      if (s.code() == Code::kIncomplete) {
        incomplete = s;
      } else if (!s.ok()) {
        return s;
      }
    }
    if (owners.size() > 1) {
      s = CheckWriterOverlaps(path, inodes, owners);
      if (!s.ok()) return s;
    }
    return incomplete;
  }

  Status Sync() override { return Status::OK(); }
  Status Close() override {
    Status s;
    for (auto& st : stores_) {
      Status c = st->store()->Close();
      if (s.ok()) s = c;
    }
    return s;
  }
  bool read_only() const override { return true; }

 private:
  Status ReadOnly(const std::string& path) const {
    return Status::InvalidArgument(path + ": the file system at " + root_ +
                                   " is open read-only");
  }

  // The inodes of `raw` in every store that has it (and, if asked, the
  // directories each store's walk went through: FsStore::Resolve).
  Status Find(const std::string& raw, std::string* path,
              std::vector<Inode>* inodes, std::vector<FsStore*>* owners,
              std::vector<std::vector<uint64_t>>* ancestors = nullptr) {
    Status s = NormalizePath(raw, path);
    if (!s.ok()) return s;
    for (auto& st : stores_) {
      Inode parent, inode;
      std::string name;
      bool exists = false;
      std::vector<uint64_t> walked;
      s = st->Resolve(*path, &parent, &name, &inode, &exists, &walked);
      if (s.IsNotFound()) continue;
      if (!s.ok()) return s;
      if (!exists) continue;
      if (ancestors) ancestors->push_back(std::move(walked));
      if (!inodes->empty() && inode.type != (*inodes)[0].type) {
        return Status::Corruption(*path + ": a file for one writer and a "
                                  "directory for another");
      }
      inodes->push_back(inode);
      owners->push_back(st.get());
    }
    if (inodes->empty()) return Status::NotFound(*path + ": no such file");
    return Status::OK();
  }

  // Index entries of every writer, merged: no byte may come from two.
  Status CheckWriterOverlaps(const std::string& path,
                             const std::vector<Inode>& inodes,
                             const std::vector<FsStore*>& owners) {
    struct Piece {
      uint64_t begin, end;
      int writer;
    };
    std::vector<Piece> all;
    for (size_t i = 0; i < owners.size(); ++i) {
      const std::string prefix = IndexPrefix(inodes[i].ino);
      std::unique_ptr<Iterator> it = PrefixIterator(owners[i]->store(), prefix);
      for (it->Seek(prefix); it->Valid() && HasPrefix(it->key(), prefix);
           it->Next()) {
        uint64_t len, sum;
        Status s = DecodeIndex(it->value(), &len, &sum);
        if (!s.ok()) return s;
        const uint64_t off = KeyOffset(it->key());
        all.push_back({off, off + len, owners[i]->writer()});
      }
      if (!it->status().ok()) return it->status();
    }
    std::sort(all.begin(), all.end(),
              [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
    for (size_t i = 1; i < all.size(); ++i) {
      if (all[i].begin < all[i - 1].end) {
        return Status::Corruption(
            path + ": writers " + std::to_string(all[i - 1].writer) + " and " +
            std::to_string(all[i].writer) + " both wrote bytes [" +
            std::to_string(all[i].begin) + ", " +
            std::to_string(std::min(all[i].end, all[i - 1].end)) + ")");
      }
    }
    return Status::OK();
  }

  const std::string root_;
  std::vector<std::unique_ptr<FsStore>> stores_;
};

}  // namespace

Status OpenReaderFs(const FsOptions& options, const std::string& root,
                    std::unique_ptr<FileSystem>* out) {
  DIR* d = opendir(root.c_str());
  if (d == nullptr) {
    return Status::NotFound("no Sluice file system at " + root + ": " +
                            strerror(errno));
  }
  std::set<std::string> names;
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "writer.", 7) == 0) names.insert(e->d_name);
  }
  closedir(d);
  if (names.empty()) {
    return Status::NotFound("no Sluice file system at " + root +
                            " (no writer.* stores)");
  }
  StoreOptions so = options.store;
  so.read_only = true;
  std::vector<std::unique_ptr<FsStore>> stores;
  for (const auto& name : names) {
    std::unique_ptr<FsStore> st;
    const int writer = atoi(name.c_str() + 7);
    Status s = FsStore::Open(so, root + "/" + name, writer, &st);
    // A writer's store that does not exist yet (an empty directory, or a
    // creation killed before its header) holds nothing: no part of the view.
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    stores.push_back(std::move(st));
  }
  out->reset(new ReaderFs(root, std::move(stores)));
  return Status::OK();
}

}  // namespace fs
}  // namespace sluice
