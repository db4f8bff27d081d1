// The writer file system's namespace calls (open, stat, directories,
// unlink, rename, attributes, verify, sync, close) over this writer's
// store and the other writers' parts.
#include "fs/writer_fs.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace sluice {
namespace fs {
namespace {

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

}  // namespace

Status WriterFs::OpenFile(const std::string& raw, int flags, uint32_t mode,
                          std::unique_ptr<File>* file) {
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
      if (!r.exists) {  // new: no extents
        st->extent_end_known = true;
        st->covered.SetEmpty();
      }
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

Status WriterFs::Stat(const std::string& raw, FileInfo* info) {
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

Status WriterFs::ReadDir(const std::string& raw, std::vector<DirEntry>* out) {
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

Status WriterFs::Mkdir(const std::string& raw, uint32_t mode) {
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

Status WriterFs::Rmdir(const std::string& raw) {
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

Status WriterFs::Unlink(const std::string& raw) {
  std::lock_guard<std::mutex> lock(mu_);
  Resolved r;
  std::vector<PeerPart> parts;
  Status s = ResolveWithPeersLocked(raw, &r, &parts);
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

Status WriterFs::UnlinkLocked(Resolved& r) {
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

Status WriterFs::Rename(const std::string& raw_from,
                        const std::string& raw_to) {
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

Status WriterFs::RenameLocked(const std::string& raw_from,
                              const std::string& raw_to) {
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

Status WriterFs::Truncate(const std::string& path, uint64_t size) {
  Status s = CheckSize(path, size);
  if (!s.ok()) return s;
  std::unique_ptr<File> f;
  s = OpenFile(path, kWrite, 0, &f);
  if (s.ok()) s = f->Truncate(size);
  Status c = f ? f->Close() : Status::OK();
  return s.ok() ? c : s;
}

Status WriterFs::SetAttr(const std::string& raw, const SetAttrs& a) {
  std::lock_guard<std::mutex> lock(mu_);
  Resolved r;
  std::vector<PeerPart> parts;
  Status s = ResolveWithPeersLocked(raw, &r, &parts);
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

Status WriterFs::Verify(const std::string& raw) {
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

Status WriterFs::Sync() {
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

Status WriterFs::Close() {
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

Status WriterFs::ResolveLocked(const std::string& raw, Resolved* r,
                               bool to_make) {
  Status s = NormalizePath(raw, &r->path);
  if (s.ok() && to_make) s = CheckNameLengths(r->path);
  if (!s.ok()) return s;
  if (closed_) return Closed();
  return store_->Resolve(r->path, &r->parent, &r->name, &r->inode,
                         &r->exists, &r->ancestors);
}

Status WriterFs::CheckNewName(const Resolved& r) {
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

Status WriterFs::CreateLocked(Resolved* r, FileType type, uint32_t mode) {
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

Status WriterFs::Lookup(const std::string& raw, Inode* inode) {
  std::lock_guard<std::mutex> lock(mu_);
  Resolved r;
  Status s = ResolveLocked(raw, &r);
  if (s.ok() && !r.exists) s = Status::NotFound(r.path + ": no such file");
  if (s.ok()) *inode = r.inode;
  return s;
}

void WriterFs::ForgetPeersLocked(uint64_t ino) {
  std::shared_ptr<OpenInode> st = FindLocked(ino);
  if (!st) return;
  std::lock_guard<std::mutex> lock(st->mu);
  st->peers.reset();
}

Status WriterFs::OpenPeersOnly(const std::string& path, int flags,
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

Status WriterFs::DropInodeLocked(uint64_t ino) {
  std::shared_ptr<OpenInode> st = FindLocked(ino);
  if (st) {
    st->unlinked = true;
    return Status::OK();
  }
  return store_->DeleteFile(ino);
}

Status OpenWriterFs(const FsOptions& options, const std::string& dir,
                    int writer, const std::string& root,
                    std::unique_ptr<FileSystem>* out) {
  std::unique_ptr<FsStore> store;
  Status s = FsStore::Open(options.store, dir, writer, &store);
  if (s.ok()) out->reset(new WriterFs(options, std::move(store), root));
  return s;
}

}  // namespace fs
}  // namespace sluice
