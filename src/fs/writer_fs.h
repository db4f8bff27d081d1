// The writer file system: one writer's store, POSIX semantics,
// write-combining, and the other writers' parts of its files (peers.h).
// Its namespace calls are in writer_fs.cc; WriterFile, and what WriterFs
// does for it, in writer_file.cc.
#ifndef SLUICE_FS_WRITER_FS_H_
#define SLUICE_FS_WRITER_FS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/covered_spans.h"
#include "fs/fs_store.h"
#include "fs/peers.h"
#include "fs/reader.h"
#include "sluice/fs.h"

namespace sluice {
namespace fs {

// Sizes are off_t's: 2^63 or more is a negative one passed on.
inline Status CheckSize(const std::string& path, uint64_t size) {
  if (size <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::OK();
  }
  return Status::InvalidArgument(path + ": bad size " +
                                 std::to_string(static_cast<int64_t>(size)) +
                                 " (sizes are 0 to 2^63 - 1)");
}

inline bool Writable(int flags) { return (flags & 3) == kWrite || (flags & 3) == kReadWrite; }
inline bool Readable(int flags) { return (flags & 3) == kRead || (flags & 3) == kReadWrite; }

inline FileInfo ToInfo(const Inode& i) {
  FileInfo f;
  f.ino = i.ino;
  f.is_dir = i.type == FileType::kDirectory;
  f.mode = i.mode;
  f.size = i.size;
  f.allocated = i.allocated;
  f.atime_ns = i.atime_ns;
  f.mtime_ns = i.mtime_ns;
  f.ctime_ns = i.ctime_ns;
  f.checksum_valid = !(i.flags & kChecksumStale);
  f.complete = !(i.flags & (kChecksumStale | kUnclosed));
  f.checksum = i.checksum;
  return f;
}

// The state of a file open for writing in this process, shared by its
// handles.
struct OpenInode {
  std::mutex mu;
  Inode inode;             // GUARDED_BY(mu): newer than the store's
  std::string path;        // for messages
  uint64_t extent_end = 0;  // GUARDED_BY(mu)
  bool extent_end_known = false;
  CoveredSpans covered;    // GUARDED_BY(mu)
  // GUARDED_BY(mu): the write-combining buffer, laid out as the extent's
  // value (kExtentHeader bytes of room, then the data: the batch takes it
  // whole, no copy), with the data's checksum hashed as it comes in.
  std::string buf;
  uint64_t buf_off = 0;
  DataChecksummer buf_sum;
  size_t buffered() const {
    return buf.size() > kExtentHeader ? buf.size() - kExtentHeader : 0;
  }
  WriteBatch batch;        // GUARDED_BY(mu): reused, so its memory stays hot
  bool dirty = false;      // checksum out of date
  // GUARDED_BY(mu): the other writers' parts of the file, as they were
  // when it was last opened here or changed (null: none).
  std::shared_ptr<PartsFile> peers;
  int opens = 0;           // GUARDED_BY(WriterFs::mu_)
  bool unlinked = false;   // GUARDED_BY(WriterFs::mu_)
};

class WriterFs;

class WriterFile final : public File {
 public:
  WriterFile(WriterFs* fs, std::shared_ptr<OpenInode> st, int flags,
             std::string path)
      : fs_(fs), st_(std::move(st)), flags_(flags), path_(std::move(path)) {}
  ~WriterFile() override { Close(); }

  Status Read(void* buf, size_t n, size_t* got) override;
  Status Write(const void* buf, size_t n) override;
  Status PRead(void* buf, size_t n, uint64_t offset, size_t* got) override;
  Status PWrite(const void* buf, size_t n, uint64_t offset) override;
  Status Append(const void* buf, size_t n, uint64_t* at) override;
  Status Seek(int64_t offset, int whence, uint64_t* pos) override;
  Status Truncate(uint64_t size) override;
  Status Sync() override;
  Status Stat(FileInfo* info) override {
    std::lock_guard<std::mutex> lock(st_->mu);
    if (!st_->peers) {
      *info = ToInfo(st_->inode);
      return Status::OK();
    }
    std::vector<Inode> all{st_->inode};
    for (const Inode& i : st_->peers->inodes()) all.push_back(i);
    *info = MergeInfo(all);
    return Status::OK();
  }
  const std::string& path() const override { return path_; }
  Status Close() override;
  // Close without the write barrier, which the caller then owes: the
  // file's data, checksum and completeness are written to the store but
  // are durable only at its next barrier.
  Status CloseWithoutBarrier();
  Status MarkOpen() override;
  // Writes the write-combining buffer into the store (no barrier): an
  // error here (a full root) leaves the buffer as it was.
  Status FlushBuffer();
  // This writer's bytes [offset, offset + n) as written so far, the
  // buffer that could not be flushed included, without flushing it (a
  // file whose root is full is read back to be written elsewhere). Holes
  // read as zeros; the other writers' parts are not read.
  Status ReadBack(char* buf, size_t n, uint64_t offset);

 private:
  Status CheckOpen(bool write) const {
    if (closed_) return Status::InvalidArgument(path_ + ": file is closed");
    if (write ? !Writable(flags_) : !Readable(flags_)) {
      return Status::InvalidArgument(path_ + ": not open for " +
                                     (write ? "writing" : "reading"));
    }
    return Status::OK();
  }
  Status PWriteLocked(const char* buf, size_t n, uint64_t offset);
  Status PReadLocked(char* buf, size_t n, uint64_t offset, size_t* got);
  // O_SYNC, O_DSYNC: after a write has committed its data, the barrier
  // that makes it durable (outside the file's locks).
  Status BarrierIfSync();
  // An O_APPEND write (st_->mu held); *at is where it went.
  Status AppendLocked(const char* buf, size_t n, uint64_t* at);
  // The file's size, with the other writers' parts (st_->mu held).
  uint64_t SizeLocked() const {
    return st_->peers ? std::max(st_->inode.size, st_->peers->size())
                      : st_->inode.size;
  }

  WriterFs* const fs_;
  std::shared_ptr<OpenInode> st_;
  const int flags_;
  const std::string path_;
  std::mutex offset_mu_;
  uint64_t offset_ = 0;  // GUARDED_BY(offset_mu_)
  Cursor cursor_;        // GUARDED_BY(st_->mu)
  std::atomic<bool> closed_{false};
};

class WriterFs : public FileSystem {
 private:
  // A path looked up under mu_: where it is, and what is there.
  struct Resolved {
    std::string path, name;
    Inode parent, inode;
    bool exists = false;
    std::vector<uint64_t> ancestors;  // FsStore::Resolve's
  };
 public:
  WriterFs(const FsOptions& options, std::unique_ptr<FsStore> store,
           const std::string& root)
      : options_(options), root_(root), store_(std::move(store)) {
    if (!root.empty()) {
      peers_ = std::make_unique<Peers>(options.store, root, store_->writer());
    }
  }
  ~WriterFs() override { Close(); }

  FsStore* store() { return store_.get(); }
  size_t extent_bytes() const { return options_.extent_bytes; }

  Status OpenFile(const std::string& raw, int flags, uint32_t mode,
                  std::unique_ptr<File>* file) override;
  Status Stat(const std::string& raw, FileInfo* info) override;
  Status ReadDir(const std::string& raw, std::vector<DirEntry>* out) override;
  Status Mkdir(const std::string& raw, uint32_t mode) override;
  Status Rmdir(const std::string& raw) override;
  Status Unlink(const std::string& raw) override;
  Status UnlinkLocked(Resolved& r);
  Status Rename(const std::string& raw_from, const std::string& raw_to) override;

  // Rename within this writer's store alone.
  Status RenameLocked(const std::string& raw_from, const std::string& raw_to);

  Status Truncate(const std::string& path, uint64_t size) override;
  Status SetAttr(const std::string& raw, const SetAttrs& a) override;
  Status Verify(const std::string& raw) override;
  Status Sync() override;
  Status Close() override;

  bool read_only() const override { return false; }

  // ---- used by WriterFile --------------------------------------------------

  // True when other writers' stores share this file system.
  Status SharedRoot(bool* shared) {
    *shared = false;
    return peers_ ? peers_->Any(shared) : Status::OK();
  }

  // An O_APPEND write to a file system other writers share: under a lock
  // on the root (SLUICE.append), the write goes to the end of the file as
  // every writer has made it durable, and is made durable before the lock
  // is let go, so the next appender, of any writer, writes after it.
  // *at is where it went.
  Status AppendShared(OpenInode* st, const std::function<Status(uint64_t)>& write,
                      uint64_t* at);

  // Commits the write-combining buffer as an extent.
  Status Flush(OpenInode* st) {
    if (st->buffered() == 0) return Status::OK();
    Status s = Commit(st);
    if (s.ok()) st->buf.clear();
    return s;
  }

  // Writes the write-combining buffer, [buf_off, buf_off + buffered()), as
  // one extent, trimming what it overlaps, with the inode, in one batch. The
  // batch takes the buffer's memory and leaves other memory in its place; a
  // failed write gives the data back, so the next flush fails again rather
  // than lose it quietly.
  Status Commit(OpenInode* st);
  Status TruncateLocked(OpenInode* st, uint64_t size);

  // Flushes and, if the file changed, sets its checksum; when `closing`,
  // also marks it closed (a sync leaves kUnclosed: see format.h).
  Status Finish(OpenInode* st, bool closing);

  // Ends a handle of `st`: its last one finishes the file and marks it
  // closed; then everything is made durable.
  // With `barrier` false the caller makes the write barrier (the dataset
  // layer makes one for all of an id's files at its commit).
  Status Release(const std::shared_ptr<OpenInode>& st, bool barrier = true);

 private:
  Status Closed() const {
    return Status::InvalidArgument("file system " + store_->path() +
                                   " is closed");
  }

  // `to_make`: the path names what may be made (a create, mkdir, a rename's
  // target), so its names must fit the limits; names already stored stay
  // reachable by any length, to be renamed or removed.
  Status ResolveLocked(const std::string& raw, Resolved* r,
                       bool to_make = false);

  // A new entry's name must be one every reader follows (ValidName); a
  // normalised path's last component can only be too long (also caught
  // with the path's other names, as NameTooLong) or hold a NUL.
  static Status CheckNewName(const Resolved& r);

  // Creates a file or directory at r's path (which does not exist yet).
  Status CreateLocked(Resolved* r, FileType type, uint32_t mode);
  Status Lookup(const std::string& raw, Inode* inode);

  std::shared_ptr<OpenInode> FindLocked(uint64_t ino) {
    auto it = open_.find(ino);
    return it == open_.end() ? nullptr : it->second;
  }
  std::shared_ptr<OpenInode> Find(uint64_t ino) {
    std::lock_guard<std::mutex> lock(mu_);
    return FindLocked(ino);
  }

  // The other writers' parts of `path` (none without peers).
  Status PeersOf(const std::string& path, std::vector<PeerPart>* parts) {
    return peers_ ? peers_->Find(path, parts) : Status::OK();
  }
  // Resolves `raw` and finds its other writers' parts: with peers, a path
  // this writer does not hold is no error (r->exists is false).
  Status ResolveWithPeersLocked(const std::string& raw, Resolved* r,
                                std::vector<PeerPart>* parts) {
    Status s = ResolveLocked(raw, r);
    if (!s.ok() && !(peers_ && s.IsNotFound())) return s;
    return PeersOf(r->path, parts);
  }
  static std::vector<int> WritersOf(const std::vector<PeerPart>& parts) {
    std::vector<int> w;
    for (const PeerPart& p : parts) w.push_back(p.store->writer());
    return w;
  }
  // An open file whose other parts were changed: its handles read them
  // again once it is next opened (or truncated).
  void ForgetPeersLocked(uint64_t ino);
  // A file this writer does not hold, opened to be read: the other
  // writers' parts, as the reader file system reads them.
  static Status OpenPeersOnly(const std::string& path, int flags,
                              std::vector<PeerPart> parts,
                              std::unique_ptr<File>* file);

  // After its last name is gone: delete now, or at the last close.
  Status DropInodeLocked(uint64_t ino);

  Status KnowExtentEnd(OpenInode* st) {
    if (st->extent_end_known) return Status::OK();
    Status s = store_->ExtentEnd(st->inode.ino, &st->extent_end);
    st->extent_end_known = s.ok();
    return s;
  }

  const FsOptions options_;
  const std::string root_;
  std::unique_ptr<FsStore> store_;
  std::unique_ptr<Peers> peers_;  // null: this store alone
  std::mutex mu_;  // the namespace and open_
  std::map<uint64_t, std::shared_ptr<OpenInode>> open_;  // GUARDED_BY(mu_)
  bool closed_ = false;                                  // GUARDED_BY(mu_)
};

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_WRITER_FS_H_
