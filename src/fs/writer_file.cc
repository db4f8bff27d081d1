// The writer file system's data path: WriterFile, which writes through
// the write-combining buffer and reads its own writes over the other
// writers' parts, and the commits, truncation, appends and closes
// WriterFs does for it.
#include "fs/writer_fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "util/posix.h"

namespace sluice {
namespace fs {

// ---- WriterFs: used by WriterFile -------------------------------------------

Status WriterFs::AppendShared(OpenInode* st,
                              const std::function<Status(uint64_t)>& write,
                              uint64_t* at) {
  const std::string lock_path = root_ + "/SLUICE.append";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return posix::Error("open", lock_path, errno);
  int rc;
  while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  Status s = rc == 0 ? Status::OK() : posix::Error("flock", lock_path, errno);
  std::vector<PeerPart> parts;
  if (s.ok()) s = peers_->Find(st->path, &parts);
  if (s.ok()) {
    st->peers = parts.empty() ? nullptr
                              : std::shared_ptr<PartsFile>(
                                    NewPartsFile(st->path, std::move(parts)));
    *at = st->peers ? std::max(st->inode.size, st->peers->size())
                    : st->inode.size;
    s = Flush(st);
  }
  if (s.ok()) s = write(*at);
  if (s.ok()) s = Flush(st);
  if (s.ok()) s = store_->store()->WriteBarrier();
  close(fd);  // lets go of the lock
  return s;
}

Status WriterFs::Commit(OpenInode* st) {
  const uint64_t ino = st->inode.ino;
  const uint64_t offset = st->buf_off;
  const uint64_t length = st->buffered();
  Status s = KnowExtentEnd(st);
  if (!s.ok()) return s;
  WriteBatch& b = st->batch;
  b.Clear();
  uint64_t removed = 0;
  // A range no extent meets replaces nothing: then no extent starts at
  // `offset` either.
  const bool fresh = !(offset < st->extent_end &&
                       st->covered.Meets(offset, offset + length));
  if (!fresh) {
    s = store_->RemoveRange(ino, offset, offset + length, st->path, &b,
                            &removed);
    if (!s.ok()) return s;
  }
  FsStore::PutExtentValue(ino, offset, st->buf_sum.Value(), &st->buf, &b,
                          fresh);
  Inode inode = st->inode;
  inode.allocated = inode.allocated - removed + length;
  // The size covers the extent in the same batch: a write call stores each
  // full extent before it sets st->inode.size, and a writer that dies in
  // the call must not leave bytes past the file's end (a later sync's
  // checksum would cover them, and making the file longer would show them
  // rather than zeros).
  inode.size = std::max(inode.size, offset + length);
  inode.flags |= kChecksumStale | kUnclosed;
  FsStore::PutInode(&b, inode);
  s = store_->WriteFor(ino, b);
  if (!s.ok()) FsStore::TakeExtentValue(ino, offset, &st->buf, &b);
  b.Clear();  // keeps the value's memory for a later extent
  if (s.ok()) {
    st->inode = inode;
    st->extent_end = std::max<uint64_t>(st->extent_end, offset + length);
    st->covered.Add(offset, offset + length);
    st->dirty = true;
  }
  return s;
}

Status WriterFs::TruncateLocked(OpenInode* st, uint64_t size) {
  Status s = CheckSize(st->path, size);
  if (s.ok() && peers_) {
    // Every other writer's part longer than `size` is cut to it (this
    // writer's own part grows the file, when it is to grow).
    std::vector<PeerPart> parts;
    s = peers_->Find(st->path, &parts);
    std::vector<int> longer;
    for (const PeerPart& p : parts) {
      if (p.inode.size > size) longer.push_back(p.store->writer());
    }
    if (s.ok() && !longer.empty()) {
      const std::string path = st->path;
      s = ForPeerWriters(options_, root_, peers_.get(), longer,
                         [&](int, FileSystem* fs) { return fs->Truncate(path, size); });
      parts.clear();
      if (s.ok()) s = peers_->Find(path, &parts);
    }
    if (s.ok()) {
      st->peers = parts.empty() ? nullptr
                                : std::shared_ptr<PartsFile>(
                                      NewPartsFile(st->path, std::move(parts)));
    }
  }
  if (s.ok()) s = Flush(st);
  if (s.ok()) s = KnowExtentEnd(st);
  if (!s.ok()) return s;
  WriteBatch b;
  uint64_t removed = 0;
  if (size < st->extent_end) {
    s = store_->RemoveRange(st->inode.ino, size, st->extent_end, st->path, &b,
                            &removed);
    if (!s.ok()) return s;
  }
  Inode inode = st->inode;
  inode.size = size;
  inode.allocated -= removed;
  inode.mtime_ns = inode.ctime_ns = NowNanos();
  inode.flags |= kChecksumStale | kUnclosed;
  FsStore::PutInode(&b, inode);
  s = store_->Write(b);
  if (s.ok()) {
    st->inode = inode;
    st->extent_end = std::min(st->extent_end, size);
    st->covered.CutTo(size);
    st->dirty = true;
  }
  return s;
}

Status WriterFs::Finish(OpenInode* st, bool closing) {
  Status s = Flush(st);
  if (!s.ok()) return s;
  const bool stale = st->dirty || (st->inode.flags & kChecksumStale);
  if (!stale && !(closing && (st->inode.flags & kUnclosed))) return s;
  Inode inode = st->inode;
  if (stale) {
    s = store_->ComputeChecksum(inode.ino, inode.size, &inode.checksum);
    if (!s.ok()) return s;
    inode.flags &= ~kChecksumStale;
  }
  if (closing) inode.flags &= ~kUnclosed;
  WriteBatch b;
  FsStore::PutInode(&b, inode);
  s = store_->Write(b);
  if (s.ok()) {
    st->inode = inode;
    st->dirty = false;
  }
  return s;
}

Status WriterFs::Release(const std::shared_ptr<OpenInode>& st, bool barrier) {
  Status s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Status::OK();  // Close finished every open file
    if (--st->opens == 0) {
      std::lock_guard<std::mutex> ilock(st->mu);
      s = st->unlinked ? store_->DeleteFile(st->inode.ino)
                       : Finish(st.get(), true);
      st->peers.reset();  // lets go of the other writers' stores
      open_.erase(st->inode.ino);
    }
  }
  if (!s.ok() || !barrier) return s;
  return store_->store()->WriteBarrier();
}

// ---- WriterFile ------------------------------------------------------------

Status WriterFile::PWriteLocked(const char* buf, size_t n, uint64_t offset) {
  OpenInode* st = st_.get();
  const size_t max = fs_->extent_bytes();
  Status s;
  if (st->buffered() > 0 && offset != st->buf_off + st->buffered()) {
    s = fs_->Flush(st);  // not a continuation: start a new extent
  }
  while (s.ok() && n > 0) {
    if (st->buffered() == 0) {
      st->buf_off = offset;
      if (st->buf.capacity() < kExtentHeader + max) {
        st->buf.reserve(kExtentHeader + max);
      }
      st->buf.assign(kExtentHeader, '\0');
      st->buf_sum.Reset(st->inode.ino, offset);
    }
    const size_t take = std::min(n, max - st->buffered());
    st->buf.append(buf, take);
    // Hashed from the copy, while it is in cache (and as stored, should the
    // caller change its buffer meanwhile).
    st->buf_sum.Update(st->buf.data() + st->buf.size() - take, take);
    buf += take;
    n -= take;
    offset += take;
    if (st->buffered() == max) s = fs_->Flush(st);
  }
  if (s.ok()) {
    st->inode.size = std::max(st->inode.size, offset);
    st->inode.mtime_ns = st->inode.ctime_ns = NowNanos();
    st->inode.flags |= kChecksumStale | kUnclosed;
    st->dirty = true;
  }
  return s;
}

Status WriterFile::PWrite(const void* buf, size_t n, uint64_t offset) {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    s = PWriteLocked(static_cast<const char*>(buf), n, offset);
    if (s.ok() && (flags_ & kDataSync)) s = fs_->Flush(st_.get());
  }
  return s.ok() ? BarrierIfSync() : s;
}

Status WriterFile::Write(const void* buf, size_t n) {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> olock(offset_mu_);
    std::lock_guard<std::mutex> lock(st_->mu);
    if (flags_ & kAppend) {
      uint64_t at;
      s = AppendLocked(static_cast<const char*>(buf), n, &at);
      if (s.ok()) offset_ = at + n;
    } else {
      s = PWriteLocked(static_cast<const char*>(buf), n, offset_);
      if (s.ok()) offset_ += n;
      if (s.ok() && (flags_ & kDataSync)) s = fs_->Flush(st_.get());
    }
  }
  return s.ok() ? BarrierIfSync() : s;
}

Status WriterFile::AppendLocked(const char* buf, size_t n, uint64_t* at) {
  bool shared = false;
  Status s = fs_->SharedRoot(&shared);
  if (!s.ok()) return s;
  if (shared) {
    return fs_->AppendShared(
        st_.get(), [&](uint64_t off) { return PWriteLocked(buf, n, off); }, at);
  }
  *at = st_->inode.size;
  s = PWriteLocked(buf, n, *at);
  if (s.ok() && (flags_ & kDataSync)) s = fs_->Flush(st_.get());
  return s;
}

Status WriterFile::Append(const void* buf, size_t n, uint64_t* at) {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    s = AppendLocked(static_cast<const char*>(buf), n, at);
  }
  return s.ok() ? BarrierIfSync() : s;
}

Status WriterFile::BarrierIfSync() {
  if (!(flags_ & kDataSync)) return Status::OK();
  return fs_->store()->store()->WriteBarrier();
}

Status WriterFile::PReadLocked(char* buf, size_t n, uint64_t offset,
                               size_t* got) {
  *got = 0;
  Status s = fs_->Flush(st_.get());  // read your own writes
  if (!s.ok()) return s;
  const uint64_t size = SizeLocked();
  if (offset >= size || n == 0) return Status::OK();
  n = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  if (!st_->peers) {
    s = ReadRange(fs_->store(), st_->inode.ino, st_->path, offset, n, buf,
                  &cursor_);
    if (s.ok()) *got = n;
    return s;
  }
  // The other writers' parts, then this writer's own over them: a byte
  // from two writers is Corruption, as in the reader file system.
  size_t theirs = 0;
  std::vector<PartsFile::Covered> them;
  s = st_->peers->ReadCovered(buf, n, offset, &theirs, &them);
  if (!s.ok()) return s;
  if (theirs < n) memset(buf + theirs, 0, n - theirs);
  std::vector<std::pair<uint64_t, uint64_t>> mine;
  if (offset < st_->inode.size) {
    const size_t own = static_cast<size_t>(
        std::min<uint64_t>(n, st_->inode.size - offset));
    s = ReadRange(fs_->store(), st_->inode.ino, st_->path, offset, own, buf,
                  &cursor_, &mine);
    if (!s.ok()) return s;
  }
  size_t j = 0;
  for (const auto& [b, e] : mine) {
    while (j < them.size() && them[j].end <= b) ++j;
    if (j < them.size() && them[j].begin < e) {
      return Status::Corruption(
          st_->path + ": writers " + std::to_string(fs_->store()->writer()) +
          " and " + std::to_string(them[j].writer) + " both wrote bytes [" +
          std::to_string(std::max(b, them[j].begin)) + ", " +
          std::to_string(std::min(e, them[j].end)) +
          "); writers of one file must not overlap");
    }
  }
  *got = n;
  return s;
}

Status WriterFile::FlushBuffer() {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(st_->mu);
  return fs_->Flush(st_.get());
}

Status WriterFile::ReadBack(char* buf, size_t n, uint64_t offset) {
  if (closed_) return Status::InvalidArgument(path_ + ": file is closed");
  std::lock_guard<std::mutex> lock(st_->mu);
  Status s = ReadRange(fs_->store(), st_->inode.ino, st_->path, offset, n,
                       buf, &cursor_);
  if (!s.ok()) return s;
  const size_t held = st_->buffered();
  if (held == 0) return Status::OK();
  const uint64_t b = std::max(offset, st_->buf_off);
  const uint64_t e = std::min(offset + n, st_->buf_off + held);
  if (b < e) {
    memcpy(buf + (b - offset),
           st_->buf.data() + kExtentHeader + (b - st_->buf_off), e - b);
  }
  return Status::OK();
}

Status WriterFile::PRead(void* buf, size_t n, uint64_t offset, size_t* got) {
  Status s = CheckOpen(false);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(st_->mu);
  return PReadLocked(static_cast<char*>(buf), n, offset, got);
}

Status WriterFile::Read(void* buf, size_t n, size_t* got) {
  Status s = CheckOpen(false);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> olock(offset_mu_);
  std::lock_guard<std::mutex> lock(st_->mu);
  s = PReadLocked(static_cast<char*>(buf), n, offset_, got);
  if (s.ok()) offset_ += *got;
  return s;
}

Status WriterFile::Seek(int64_t offset, int whence, uint64_t* pos) {
  if (closed_) return Status::InvalidArgument(path_ + ": file is closed");
  std::lock_guard<std::mutex> olock(offset_mu_);
  int64_t base = 0;
  if (whence == SEEK_CUR) {
    base = static_cast<int64_t>(offset_);
  } else if (whence == SEEK_END) {
    std::lock_guard<std::mutex> lock(st_->mu);
    base = static_cast<int64_t>(SizeLocked());
  } else if (whence != SEEK_SET) {
    return Status::InvalidArgument(path_ + ": bad whence");
  }
  if (base + offset < 0) {
    return Status::InvalidArgument(path_ + ": seek before the start");
  }
  offset_ = static_cast<uint64_t>(base + offset);
  *pos = offset_;
  return Status::OK();
}

Status WriterFile::Truncate(uint64_t size) {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(st_->mu);
  return fs_->TruncateLocked(st_.get(), size);
}

Status WriterFile::Sync() {
  if (closed_) return Status::InvalidArgument(path_ + ": file is closed");
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    Status s = fs_->Finish(st_.get(), false);
    if (!s.ok()) return s;
  }
  return fs_->store()->store()->WriteBarrier();
}

Status WriterFile::Close() {
  if (closed_.exchange(true)) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    cursor_ = Cursor();  // its iterator must not outlive the store
  }
  return fs_->Release(st_);
}

Status WriterFile::CloseWithoutBarrier() {
  if (closed_.exchange(true)) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    cursor_ = Cursor();
  }
  return fs_->Release(st_, false);
}

Status WriterFile::MarkOpen() {
  Status s = CheckOpen(true);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (!(st_->inode.flags & kUnclosed)) {
      Inode inode = st_->inode;
      inode.flags |= kUnclosed;
      WriteBatch b;
      FsStore::PutInode(&b, inode);
      s = fs_->store()->Write(b);
      if (!s.ok()) return s;
      st_->inode = inode;
    }
  }
  return fs_->store()->store()->WriteBarrier();
}

}  // namespace fs
}  // namespace sluice
