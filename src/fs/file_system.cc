// FileSystem over per-writer stores: the writer side (one store, POSIX
// semantics, write-combining) and the reader side (every writer's store,
// merged, overlaps reported).
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <atomic>
#include <mutex>

#include "fs/fs_store.h"
#include "fs/peers.h"
#include "fs/reader.h"
#include "util/posix.h"

namespace sluice {

File::~File() = default;
Status File::MarkOpen() { return Status::OK(); }

Status File::Append(const void* buf, size_t n, uint64_t* at) {
  FileInfo info;
  Status s = Stat(&info);
  if (!s.ok()) return s;
  *at = info.size;
  return PWrite(buf, n, *at);
}
FileSystem::~FileSystem() = default;

Status NormalizePath(const std::string& path, std::string* out) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) {
        return Status::InvalidArgument("path " + path +
                                       " climbs above the file system root");
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  out->clear();
  for (const auto& p : parts) *out += "/" + p;
  if (out->empty()) *out = "/";
  return Status::OK();
}

namespace fs {
namespace {

// Sizes are off_t's: 2^63 or more is a negative one passed on.
Status CheckSize(const std::string& path, uint64_t size) {
  if (size <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::OK();
  }
  return Status::InvalidArgument(path + ": bad size " +
                                 std::to_string(static_cast<int64_t>(size)) +
                                 " (sizes are 0 to 2^63 - 1)");
}

// A name or path in a message: whole when short, else its head and length.
std::string Shortened(const std::string& s) {
  if (s.size() <= 64) return s;
  return s.substr(0, 48) + "... (" + std::to_string(s.size()) + " bytes)";
}

// A normalised path whose last name is to be made: it must fit a real file
// system (sluice export makes it there), as open(2) and mkdir(2) check.
Status CheckNameLengths(const std::string& path) {
  if (path.size() >= kPathMax) {
    return Status::NameTooLong("path " + Shortened(path) + " is " +
                               std::to_string(path.size()) +
                               " bytes; a path has fewer than 4096 "
                               "(PATH_MAX, with its terminating zero)");
  }
  size_t pos = 1;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    if (slash - pos > kNameMax) {
      return Status::NameTooLong(
          "name " + Shortened(path.substr(pos, slash - pos)) + " in " +
          Shortened(path) + " is longer than 255 bytes (NAME_MAX)");
    }
    pos = slash + 1;
  }
  return Status::OK();
}

bool Writable(int flags) { return (flags & 3) == kWrite || (flags & 3) == kReadWrite; }
bool Readable(int flags) { return (flags & 3) == kRead || (flags & 3) == kReadWrite; }

FileInfo ToInfo(const Inode& i) {
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
  Status MarkOpen() override;

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
                  std::unique_ptr<File>* file) override {
    Status s = CheckOpenFlags(raw, flags);
    if (!s.ok()) return s;
    std::unique_ptr<WriterFile> f;
    Resolved r;
    std::vector<PeerPart> parts;
    bool looked = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s = ResolveLocked(raw, &r, flags & kCreate);
      // Other writers' parts matter to reads, appends, truncation, O_EXCL,
      // and to a file this store does not hold yet.
      if (peers_ && (s.ok() || s.IsNotFound()) &&
          (!s.ok() || !r.exists || Readable(flags) ||
           (flags & (kAppend | kTruncate | kExclusive)))) {
        std::string path;
        Status n = NormalizePath(raw, &path);
        if (n.ok()) n = peers_->Find(path, &parts);
        if (!n.ok()) return n;
        looked = true;
        if (!s.ok() && !parts.empty() && !Writable(flags) &&
            !(flags & (kCreate | kTruncate))) {
          return OpenPeersOnly(path, flags, std::move(parts), file);
        }
      }
      if (!s.ok()) return s;
      if (!parts.empty()) {
        if (parts[0].inode.type == FileType::kDirectory) {
          return Status::IsADirectory(r.path + ": is a directory");
        }
        if (r.exists && r.inode.type != FileType::kFile) {
          return Status::Corruption(r.path + ": a file for one writer and a "
                                    "directory for another");
        }
        if ((flags & kCreate) && (flags & kExclusive)) {
          return Status::AlreadyExists(r.path + ": file exists");
        }
        if (!r.exists && !Writable(flags) && !(flags & kTruncate)) {
          return OpenPeersOnly(r.path, flags, std::move(parts), file);
        }
        // Writing a file only others hold: this writer's part begins.
        if (!r.exists) flags |= kCreate;
      }
      if (r.exists && (flags & kCreate) && (flags & kExclusive)) {
        return Status::AlreadyExists(r.path + ": file exists");
      }
      if (r.exists && r.inode.type == FileType::kDirectory) {
        return Status::IsADirectory(r.path + ": is a directory");
      }
      if (r.exists && (flags & kDirectory)) {
        return Status::NotADirectory(r.path + ": not a directory");
      }
      if (!r.exists) {
        if (!(flags & kCreate)) {
          return Status::NotFound(r.path + ": no such file");
        }
        s = CreateLocked(&r, FileType::kFile, mode);
        if (!s.ok()) return s;
      }
      std::shared_ptr<OpenInode>& st = open_[r.inode.ino];
      if (!st) {
        st = std::make_shared<OpenInode>();
        st->inode = r.inode;
        if (!r.exists) st->extent_end_known = true;  // new: no extents
      }
      st->path = r.path;
      ++st->opens;
      if (looked) {
        std::lock_guard<std::mutex> ilock(st->mu);
        st->peers = parts.empty() ? nullptr
                                  : std::shared_ptr<PartsFile>(
                                        NewPartsFile(r.path, std::move(parts)));
      }
      f = std::make_unique<WriterFile>(this, st, flags, r.path);
    }
    // Outside the namespace lock: a failing handle's Close takes it again.
    if ((flags & kTruncate) && Writable(flags)) {
      Status s = f->Truncate(0);
      if (!s.ok()) return s;
    }
    *file = std::move(f);
    return Status::OK();
  }

  Status Stat(const std::string& raw, FileInfo* info) override {
    Inode inode;
    Status s = Lookup(raw, &inode);
    std::vector<Inode> all;
    if (s.ok()) {
      std::shared_ptr<OpenInode> st = Find(inode.ino);
      if (st) {
        std::lock_guard<std::mutex> lock(st->mu);
        inode = st->inode;
      }
      all.push_back(inode);
    }
    std::vector<PeerPart> parts;
    if (peers_ && (s.ok() || s.IsNotFound())) {
      std::string path;
      Status n = NormalizePath(raw, &path);
      if (n.ok()) n = peers_->Find(path, &parts);
      if (!n.ok()) return n;
      for (const PeerPart& p : parts) {
        if (all.empty() || p.inode.type == all[0].type) all.push_back(p.inode);
      }
    }
    if (all.empty()) return s;
    *info = all.size() == 1 ? ToInfo(all[0]) : MergeInfo(all);
    return Status::OK();
  }

  Status ReadDir(const std::string& raw, std::vector<DirEntry>* out) override {
    Resolved r;
    Status s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s = ResolveLocked(raw, &r);
      if (s.ok() && !r.exists) s = Status::NotFound(r.path + ": no such file");
    }
    if (s.ok() && r.inode.type != FileType::kDirectory) {
      return Status::NotADirectory(r.path + ": not a directory");
    }
    if (!peers_) return s.ok() ? store_->ListDir(r.inode.ino, r.ancestors, r.path, out) : s;
    if (!s.ok() && !s.IsNotFound()) return s;
    std::vector<PeerPart> parts;
    Status p = peers_->Find(r.path, &parts);
    if (!p.ok()) return p;
    if (!s.ok() && parts.empty()) return s;
    for (const PeerPart& part : parts) {
      if (part.inode.type != FileType::kDirectory) {
        return Status::NotADirectory(r.path + ": not a directory");
      }
    }
    std::vector<DirEntry> own;
    Status o = s.ok() ? store_->ListDir(r.inode.ino, r.ancestors, r.path, &own)
                      : Status::OK();
    std::map<std::string, bool> names;
    for (auto& e : own) names.emplace(e.name, e.is_dir);
    p = peers_->List(r.path, &names);
    for (auto& [name, is_dir] : names) out->push_back({name, is_dir});
    return o.ok() ? p : o;
  }

  Status Mkdir(const std::string& raw, uint32_t mode) override {
    std::lock_guard<std::mutex> lock(mu_);
    Resolved r;
    Status s = ResolveLocked(raw, &r, true);
    if (!s.ok()) return s;
    if (r.exists) return Status::AlreadyExists(r.path + ": file exists");
    std::vector<PeerPart> parts;
    if (peers_) s = peers_->Find(r.path, &parts);
    if (!s.ok()) return s;
    if (!parts.empty()) return Status::AlreadyExists(r.path + ": file exists");
    return CreateLocked(&r, FileType::kDirectory, mode);
  }

  Status Rmdir(const std::string& raw) override {
    std::lock_guard<std::mutex> lock(mu_);
    Resolved r;
    Status s = ResolveLocked(raw, &r);
    if (!s.ok() && !(peers_ && s.IsNotFound())) return s;
    if (r.path == "/") return Status::InvalidArgument("cannot remove the root");
    std::vector<PeerPart> parts;
    s = PeersOf(r.path, &parts);
    if (!s.ok()) return s;
    if (!parts.empty()) {
      for (const PeerPart& p : parts) {
        if (p.inode.type != FileType::kDirectory) {
          return Status::NotADirectory(r.path + ": not a directory");
        }
      }
      std::map<std::string, bool> names;
      s = peers_->List(r.path, &names);
      if (!s.ok()) return s;
      if (!names.empty()) return Status::NotEmpty(r.path + ": directory not empty");
      if (r.exists) {
        bool empty;
        s = store_->DirIsEmpty(r.inode.ino, &empty);
        if (!s.ok()) return s;
        if (!empty) return Status::NotEmpty(r.path + ": directory not empty");
      }
      s = ForPeerWriters(options_, root_, peers_.get(), WritersOf(parts),
                         [&](int, FileSystem* fs) { return fs->Rmdir(r.path); });
      if (!s.ok() || !r.exists) return s;
    }
    if (!r.exists) return Status::NotFound(r.path + ": no such directory");
    if (r.inode.type != FileType::kDirectory) {
      return Status::NotADirectory(r.path + ": not a directory");
    }
    bool empty;
    s = store_->DirIsEmpty(r.inode.ino, &empty);
    if (!s.ok()) return s;
    if (!empty) return Status::NotEmpty(r.path + ": directory not empty");
    WriteBatch b;
    b.Delete(DirentKey(r.parent.ino, r.name));
    b.Delete(InodeKey(r.inode.ino));
    r.parent.mtime_ns = r.parent.ctime_ns = NowNanos();
    FsStore::PutInode(&b, r.parent);
    return store_->Write(b);
  }

  Status Unlink(const std::string& raw) override {
    std::lock_guard<std::mutex> lock(mu_);
    Resolved r;
    Status s = ResolveLocked(raw, &r);
    if (!s.ok() && !(peers_ && s.IsNotFound())) return s;
    std::vector<PeerPart> parts;
    s = PeersOf(r.path, &parts);
    if (!s.ok()) return s;
    if (!parts.empty()) {
      // Every other writer's part goes first; none does when one of their
      // stores cannot be changed.
      for (const PeerPart& p : parts) {
        if (p.inode.type == FileType::kDirectory) {
          return Status::IsADirectory(r.path + ": is a directory");
        }
      }
      if (r.exists && r.inode.type == FileType::kDirectory) {
        return Status::IsADirectory(r.path + ": is a directory");
      }
      s = ForPeerWriters(options_, root_, peers_.get(), WritersOf(parts),
                         [&](int, FileSystem* fs) { return fs->Unlink(r.path); });
      if (!s.ok() || !r.exists) return s;
      ForgetPeersLocked(r.inode.ino);
    }
    if (!r.exists) return Status::NotFound(r.path + ": no such file");
    return UnlinkLocked(r);
  }

  Status UnlinkLocked(Resolved& r) {
    if (r.inode.type == FileType::kDirectory) {
      return Status::IsADirectory(r.path + ": is a directory");
    }
    WriteBatch b;
    b.Delete(DirentKey(r.parent.ino, r.name));
    r.parent.mtime_ns = r.parent.ctime_ns = NowNanos();
    FsStore::PutInode(&b, r.parent);
    Status s = store_->Write(b);
    if (s.ok()) s = DropInodeLocked(r.inode.ino);
    return s;
  }

  Status Rename(const std::string& raw_from, const std::string& raw_to) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!peers_) return RenameLocked(raw_from, raw_to);
    std::string from, to;
    Status s = NormalizePath(raw_from, &from);
    if (s.ok()) s = NormalizePath(raw_to, &to);
    std::vector<PeerPart> pf, pt;
    if (s.ok()) s = peers_->Find(from, &pf);
    if (s.ok()) s = peers_->Find(to, &pt);
    if (!s.ok()) return s;
    if (pf.empty() && pt.empty()) return RenameLocked(raw_from, raw_to);
    if (from == "/" || to == "/") return Status::InvalidArgument("cannot rename the root");
    if (from == to) return Status::OK();
    Resolved f, t;
    s = ResolveLocked(from, &f);
    if (!s.ok() && !s.IsNotFound()) return s;
    s = ResolveLocked(to, &t, true);
    if (!s.ok() && !s.IsNotFound()) return s;
    if (!f.exists && pf.empty()) return Status::NotFound(from + ": no such file");
    const FileType ft = f.exists ? f.inode.type : pf[0].inode.type;
    const bool t_exists = t.exists || !pt.empty();
    const FileType tt = t.exists ? t.inode.type
                                 : pt.empty() ? ft : pt[0].inode.type;
    if (ft == FileType::kDirectory && to.rfind(from + "/", 0) == 0) {
      return Status::InvalidArgument("cannot move " + from + " into itself (" +
                                     to + ")");
    }
    if (t_exists && tt == FileType::kDirectory && ft != FileType::kDirectory) {
      return Status::IsADirectory(to + ": is a directory");
    }
    if (t_exists && tt != FileType::kDirectory && ft == FileType::kDirectory) {
      return Status::NotADirectory(to + ": not a directory");
    }
    if (t_exists && tt == FileType::kDirectory) {
      std::map<std::string, bool> names;
      s = peers_->List(to, &names);
      if (s.ok() && t.exists) {
        bool empty;
        s = store_->DirIsEmpty(t.inode.ino, &empty);
        if (s.ok() && !empty) names.emplace("", false);
      }
      if (!s.ok()) return s;
      if (!names.empty()) return Status::NotEmpty(to + ": directory not empty");
    }
    // In each other writer's store: the source renamed where it is, the
    // target removed where only it is. Then this writer's own.
    std::set<int> has_from;
    for (const PeerPart& p : pf) has_from.insert(p.store->writer());
    std::vector<int> writers(has_from.begin(), has_from.end());
    for (const PeerPart& p : pt) {
      if (!has_from.count(p.store->writer())) writers.push_back(p.store->writer());
    }
    s = ForPeerWriters(options_, root_, peers_.get(), writers,
                       [&](int w, FileSystem* fs) {
                         if (has_from.count(w)) return fs->Rename(from, to);
                         return tt == FileType::kDirectory ? fs->Rmdir(to)
                                                           : fs->Unlink(to);
                       });
    if (!s.ok()) return s;
    if (f.exists) {
      ForgetPeersLocked(f.inode.ino);
      return RenameLocked(from, to);
    }
    if (t.exists) {
      if (tt == FileType::kDirectory) {
        WriteBatch b;
        b.Delete(DirentKey(t.parent.ino, t.name));
        b.Delete(InodeKey(t.inode.ino));
        t.parent.mtime_ns = t.parent.ctime_ns = NowNanos();
        FsStore::PutInode(&b, t.parent);
        return store_->Write(b);
      }
      return UnlinkLocked(t);
    }
    return Status::OK();
  }

  // Rename within this writer's store alone.
  Status RenameLocked(const std::string& raw_from, const std::string& raw_to) {
    Resolved f, t;
    Status s = ResolveLocked(raw_from, &f);
    if (!s.ok()) return s;
    if (!f.exists) return Status::NotFound(f.path + ": no such file");
    s = ResolveLocked(raw_to, &t, true);
    if (!s.ok() && !s.IsNotFound()) return s;
    if (f.path == "/" || t.path == "/") {
      return Status::InvalidArgument("cannot rename the root");
    }
    if (f.inode.type == FileType::kDirectory &&
        (t.path == f.path || t.path.rfind(f.path + "/", 0) == 0)) {
      if (t.path == f.path) return Status::OK();
      return Status::InvalidArgument("cannot move " + f.path +
                                     " into itself (" + t.path + ")");
    }
    if (!s.ok()) return s;
    if (t.exists && t.inode.ino == f.inode.ino) return Status::OK();
    if (!t.exists) {
      s = CheckNewName(t);
      if (!s.ok()) return s;
    }
    if (t.exists) {
      if (t.inode.type == FileType::kDirectory) {
        if (f.inode.type != FileType::kDirectory) {
          return Status::IsADirectory(t.path + ": is a directory");
        }
        bool empty;
        s = store_->DirIsEmpty(t.inode.ino, &empty);
        if (!s.ok()) return s;
        if (!empty) return Status::NotEmpty(t.path + ": directory not empty");
      } else if (f.inode.type == FileType::kDirectory) {
        return Status::NotADirectory(t.path + ": not a directory");
      }
    }
    WriteBatch b;
    const int64_t now = NowNanos();
    b.Delete(DirentKey(f.parent.ino, f.name));
    b.Put(DirentKey(t.parent.ino, t.name), EncodeDirent(f.inode.ino, f.inode.type));
    if (t.exists && t.inode.type == FileType::kDirectory) {
      b.Delete(InodeKey(t.inode.ino));
    }
    f.parent.mtime_ns = f.parent.ctime_ns = now;
    FsStore::PutInode(&b, f.parent);
    if (t.parent.ino != f.parent.ino) {
      t.parent.mtime_ns = t.parent.ctime_ns = now;
      FsStore::PutInode(&b, t.parent);
    }
    s = store_->Write(b);
    if (s.ok() && t.exists && t.inode.type == FileType::kFile) {
      s = DropInodeLocked(t.inode.ino);
    }
    std::shared_ptr<OpenInode> st = FindLocked(f.inode.ino);
    if (st) st->path = t.path;
    return s;
  }

  Status Truncate(const std::string& path, uint64_t size) override {
    Status s = CheckSize(path, size);
    if (!s.ok()) return s;
    std::unique_ptr<File> f;
    s = OpenFile(path, kWrite, 0, &f);
    if (s.ok()) s = f->Truncate(size);
    Status c = f ? f->Close() : Status::OK();
    return s.ok() ? c : s;
  }

  Status SetAttr(const std::string& raw, const SetAttrs& a) override {
    std::lock_guard<std::mutex> lock(mu_);
    Resolved r;
    Status s = ResolveLocked(raw, &r);
    if (!s.ok() && !(peers_ && s.IsNotFound())) return s;
    std::vector<PeerPart> parts;
    s = PeersOf(r.path, &parts);
    if (!s.ok()) return s;
    if (!parts.empty()) {
      s = ForPeerWriters(options_, root_, peers_.get(), WritersOf(parts),
                         [&](int, FileSystem* fs) { return fs->SetAttr(r.path, a); });
      if (!s.ok() || !r.exists) return s;
      ForgetPeersLocked(r.inode.ino);
    }
    if (!r.exists) return Status::NotFound(r.path + ": no such file or directory");
    // An open file's handles keep writing the record from st->inode.
    std::shared_ptr<OpenInode> st = FindLocked(r.inode.ino);
    std::unique_lock<std::mutex> ilock;
    if (st) ilock = std::unique_lock<std::mutex>(st->mu);
    Inode inode = st ? st->inode : r.inode;
    if (a.set_mode) inode.mode = a.mode & 07777;
    if (a.set_atime) inode.atime_ns = a.atime_ns;
    if (a.set_mtime) inode.mtime_ns = a.mtime_ns;
    inode.ctime_ns = NowNanos();
    WriteBatch b;
    FsStore::PutInode(&b, inode);
    s = store_->Write(b);
    if (s.ok() && st) st->inode = inode;
    return s;
  }

  Status Verify(const std::string& raw) override {
    std::string path;
    Status s = NormalizePath(raw, &path);
    if (!s.ok()) return s;
    Inode inode;
    s = Lookup(path, &inode);
    if (!s.ok()) return s;
    if (inode.type == FileType::kDirectory) return Status::OK();
    std::shared_ptr<OpenInode> st = Find(inode.ino);
    if (st) {  // an open file: verify what its handles have written
      std::lock_guard<std::mutex> lock(st->mu);
      s = Flush(st.get());
      inode = st->inode;
      if (s.ok() && st->dirty) inode.flags |= kChecksumStale;
      if (!s.ok()) return s;
    }
    return VerifyFile(store_.get(), inode, path);
  }

  Status Sync() override {
    std::vector<std::shared_ptr<OpenInode>> open;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return Closed();
      for (auto& [ino, st] : open_) open.push_back(st);
    }
    Status s;
    for (auto& st : open) {
      std::lock_guard<std::mutex> lock(st->mu);
      Status f = Finish(st.get(), false);
      if (s.ok()) s = f;
    }
    Status b = store_->store()->WriteBarrier();
    return s.ok() ? b : s;
  }

  Status Close() override {
    std::map<uint64_t, std::shared_ptr<OpenInode>> open;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return Status::OK();
      closed_ = true;
      open.swap(open_);
    }
    Status s;
    for (auto& [ino, st] : open) {
      std::lock_guard<std::mutex> lock(st->mu);
      Status f =
          st->unlinked ? store_->DeleteFile(ino) : Finish(st.get(), true);
      st->peers.reset();
      if (s.ok()) s = f;
    }
    // The other writers' stores, too (a LevelDB one holds its lock).
    if (peers_) peers_->Close();
    Status c = store_->store()->Close();
    return s.ok() ? c : s;
  }

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
  Status Commit(OpenInode* st) {
    const uint64_t ino = st->inode.ino;
    const uint64_t offset = st->buf_off;
    const uint64_t length = st->buffered();
    Status s = KnowExtentEnd(st);
    if (!s.ok()) return s;
    WriteBatch& b = st->batch;
    b.Clear();
    uint64_t removed = 0;
    if (offset < st->extent_end) {
      s = store_->RemoveRange(ino, offset, offset + length, st->path, &b,
                              &removed);
      if (!s.ok()) return s;
    }
    FsStore::PutExtentValue(ino, offset, st->buf_sum.Value(), &st->buf, &b);
    Inode inode = st->inode;
    inode.allocated = inode.allocated - removed + length;
    inode.flags |= kChecksumStale | kUnclosed;
    FsStore::PutInode(&b, inode);
    s = store_->WriteFor(ino, b);
    if (!s.ok()) FsStore::TakeExtentValue(ino, offset, &st->buf, &b);
    b.Clear();  // keeps the value's memory for a later extent
    if (s.ok()) {
      st->inode = inode;
      st->extent_end = std::max<uint64_t>(st->extent_end, offset + length);
      st->dirty = true;
    }
    return s;
  }

  Status TruncateLocked(OpenInode* st, uint64_t size) {
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
      st->dirty = true;
    }
    return s;
  }

  // Flushes and, if the file changed, sets its checksum; when `closing`,
  // also marks it closed (a sync leaves kUnclosed: see format.h).
  Status Finish(OpenInode* st, bool closing) {
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

  // Ends a handle of `st`: its last one finishes the file and marks it
  // closed; then everything is made durable.
  Status Release(const std::shared_ptr<OpenInode>& st) {
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
    if (!s.ok()) return s;
    return store_->store()->WriteBarrier();
  }

 private:
  Status Closed() const {
    return Status::InvalidArgument("file system " + store_->path() +
                                   " is closed");
  }

  // `to_make`: the path names what may be made (a create, mkdir, a rename's
  // target), so its names must fit the limits; names already stored stay
  // reachable by any length, to be renamed or removed.
  Status ResolveLocked(const std::string& raw, Resolved* r,
                       bool to_make = false) {
    Status s = NormalizePath(raw, &r->path);
    if (s.ok() && to_make) s = CheckNameLengths(r->path);
    if (!s.ok()) return s;
    if (closed_) return Closed();
    return store_->Resolve(r->path, &r->parent, &r->name, &r->inode,
                           &r->exists, &r->ancestors);
  }

  // A new entry's name must be one every reader follows (ValidName); a
  // normalised path's last component can only be too long (also caught
  // with the path's other names, as NameTooLong) or hold a NUL.
  static Status CheckNewName(const Resolved& r) {
    static_assert(kMaxNameBytes == kNameMax, "one NAME_MAX");
    if (r.name.size() > kMaxNameBytes) {
      return Status::NameTooLong(
          QuoteName(r.path) + ": a name is at most " +
          std::to_string(kMaxNameBytes) + " bytes, this one has " +
          std::to_string(r.name.size()));
    }
    if (!ValidName(r.name)) {
      return Status::InvalidArgument(QuoteName(r.path) +
                                     ": not a valid name (a NUL byte?)");
    }
    return Status::OK();
  }

  // Creates a file or directory at r's path (which does not exist yet).
  Status CreateLocked(Resolved* r, FileType type, uint32_t mode) {
    Status s = CheckNewName(*r);
    if (!s.ok()) return s;
    WriteBatch b;
    Inode& inode = r->inode;
    inode = Inode();
    inode.ino = store_->AllocateIno(&b);
    inode.type = type;
    inode.mode = mode & 07777;
    // The checksum is set at sync or close; the file is complete at close.
    if (type == FileType::kFile) inode.flags = kChecksumStale | kUnclosed;
    inode.atime_ns = inode.mtime_ns = inode.ctime_ns = NowNanos();
    FsStore::PutInode(&b, inode);
    b.Put(DirentKey(r->parent.ino, r->name), EncodeDirent(inode.ino, type));
    r->parent.mtime_ns = r->parent.ctime_ns = inode.mtime_ns;
    FsStore::PutInode(&b, r->parent);
    return store_->Write(b);
  }

  Status Lookup(const std::string& raw, Inode* inode) {
    std::lock_guard<std::mutex> lock(mu_);
    Resolved r;
    Status s = ResolveLocked(raw, &r);
    if (s.ok() && !r.exists) s = Status::NotFound(r.path + ": no such file");
    if (s.ok()) *inode = r.inode;
    return s;
  }

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
  static std::vector<int> WritersOf(const std::vector<PeerPart>& parts) {
    std::vector<int> w;
    for (const PeerPart& p : parts) w.push_back(p.store->writer());
    return w;
  }
  // An open file whose other parts were changed: its handles read them
  // again once it is next opened (or truncated).
  void ForgetPeersLocked(uint64_t ino) {
    std::shared_ptr<OpenInode> st = FindLocked(ino);
    if (!st) return;
    std::lock_guard<std::mutex> lock(st->mu);
    st->peers.reset();
  }
  // A file this writer does not hold, opened to be read: the other
  // writers' parts, as the reader file system reads them.
  static Status OpenPeersOnly(const std::string& path, int flags,
                              std::vector<PeerPart> parts,
                              std::unique_ptr<File>* file) {
    if (parts[0].inode.type == FileType::kDirectory) {
      return Status::IsADirectory(path + ": is a directory");
    }
    if (flags & kDirectory) return Status::NotADirectory(path + ": not a directory");
    for (const PeerPart& p : parts) {
      if (p.inode.type != FileType::kFile) {
        return Status::Corruption(path + ": a file for one writer and a "
                                  "directory for another");
      }
    }
    *file = NewPartsFile(path, std::move(parts));
    return Status::OK();
  }

  // After its last name is gone: delete now, or at the last close.
  Status DropInodeLocked(uint64_t ino) {
    std::shared_ptr<OpenInode> st = FindLocked(ino);
    if (st) {
      st->unlinked = true;
      return Status::OK();
    }
    return store_->DeleteFile(ino);
  }

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

}  // namespace

Status OpenWriterFs(const FsOptions& options, const std::string& dir,
                    int writer, const std::string& root,
                    std::unique_ptr<FileSystem>* out) {
  std::unique_ptr<FsStore> store;
  Status s = FsStore::Open(options.store, dir, writer, &store);
  if (s.ok()) out->reset(new WriterFs(options, std::move(store), root));
  return s;
}

}  // namespace fs

void FileInfoToStat(const FileInfo& i, struct stat* st) {
  memset(st, 0, sizeof *st);
  st->st_ino = i.ino;
  st->st_mode = (i.is_dir ? S_IFDIR : S_IFREG) | (i.mode & 07777);
  st->st_nlink = i.is_dir ? 2 : 1;
  st->st_size = static_cast<off_t>(i.size);
  st->st_blocks = static_cast<blkcnt_t>((i.allocated + 511) / 512);
  st->st_atim.tv_sec = i.atime_ns / 1000000000;
  st->st_atim.tv_nsec = i.atime_ns % 1000000000;
  st->st_mtim.tv_sec = i.mtime_ns / 1000000000;
  st->st_mtim.tv_nsec = i.mtime_ns % 1000000000;
  st->st_ctim.tv_sec = i.ctime_ns / 1000000000;
  st->st_ctim.tv_nsec = i.ctime_ns % 1000000000;
}

SetAttrs ModeAttrs(uint32_t mode) {
  SetAttrs a;
  a.set_mode = true;
  a.mode = mode & 07777;
  return a;
}

SetAttrs TimeAttrs(const struct timespec* times) {
  SetAttrs a;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (int i = 0; i < 2; ++i) {
    if (times && times[i].tv_nsec == UTIME_OMIT) continue;
    const struct timespec& t =
        !times || times[i].tv_nsec == UTIME_NOW ? now : times[i];
    (i == 0 ? a.set_atime : a.set_mtime) = true;
    (i == 0 ? a.atime_ns : a.mtime_ns) = t.tv_sec * 1000000000LL + t.tv_nsec;
  }
  return a;
}

Status FileSystem::Open(const FsOptions& options, const std::string& root,
                        int writer, std::unique_ptr<FileSystem>* out) {
  out->reset();
  if (options.extent_bytes < 4096 || options.extent_bytes > (256u << 20)) {
    return Status::InvalidArgument("extent_bytes must be in [4k, 256m]");
  }
  if (writer >= 0) {
    Status s = posix::CreateDirs(root);
    if (!s.ok()) return s;
    return fs::OpenWriterFs(options, fs::WriterStorePath(root, writer), writer,
                            root, out);
  }
  return fs::OpenReaderFs(options, root, out);
}

std::string FileSystem::StorePath(const std::string& root, int writer) {
  return fs::WriterStorePath(root, writer);
}

}  // namespace sluice
