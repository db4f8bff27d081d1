#include "fs/peers.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <set>

#include "fs/reader.h"

namespace sluice {
namespace fs {

Peers::Peers(const StoreOptions& options, std::string root, int self)
    : options_(options), root_(std::move(root)), self_(self) {}

namespace {
// What tells that a store changed durably: its barrier record, written in
// place at every barrier that follows changes (or its header, on a store
// from before the record). The bytes, not the times: two barriers may fall
// in one tick of the file system's clock.
bool Stamp(const std::string& dir, std::string* stamp) {
  int fd = open((dir + "/SLUICE.barrier").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fd = open((dir + "/SLUICE").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16384];
  const ssize_t n = pread(fd, buf, sizeof buf, 0);
  close(fd);
  if (n < 0) return false;
  stamp->assign(buf, static_cast<size_t>(n));
  return true;
}
}  // namespace

Status Peers::RefreshLocked() {
  if (closed_) return Status::OK();
  DIR* d = opendir(root_.c_str());
  if (d == nullptr) {
    return Status::IOError("cannot list " + root_ + ": " + strerror(errno));
  }
  std::set<int> writers;
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "writer.", 7) == 0) {
      const int w = atoi(e->d_name + 7);
      if (w != self_) writers.insert(w);
    }
  }
  closedir(d);
  for (auto it = peers_.begin(); it != peers_.end();) {
    it = writers.count(it->first) ? std::next(it) : peers_.erase(it);
  }
  StoreOptions so = options_;
  so.read_only = true;
  so.snapshot_reads = true;
  so.create_if_missing = false;
  for (int w : writers) {
    const std::string dir = WriterStorePath(root_, w);
    std::string stamp;
    if (!Stamp(dir, &stamp)) continue;  // no store yet
    Peer& p = peers_[w];
    if (p.store && p.stamp == stamp) continue;
    std::unique_ptr<FsStore> st;
    Status s = FsStore::Open(so, dir, w, &st);
    if (s.IsNotFound()) {  // a creation that did not finish: nothing in it
      peers_.erase(w);
      continue;
    }
    if (!s.ok()) {
      peers_.erase(w);
      return Status(s.code(), "another writer's store, " + dir +
                                  ", cannot be read: " + s.message());
    }
    p.store = std::move(st);
    p.stamp = std::move(stamp);
  }
  return Status::OK();
}

Status Peers::Any(bool* any) {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = RefreshLocked();
  *any = !peers_.empty();
  return s;
}

Status Peers::Find(const std::string& path, std::vector<PeerPart>* parts) {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = RefreshLocked();
  if (!s.ok()) return s;
  for (auto& [w, p] : peers_) {
    Inode parent, inode;
    std::string name;
    bool exists = false;
    s = p.store->Resolve(path, &parent, &name, &inode, &exists);
    if (s.IsNotFound() || s.code() == Code::kNotADirectory) continue;
    if (!s.ok()) return s;
    if (exists) parts->push_back({p.store, inode});
  }
  return Status::OK();
}

Status Peers::List(const std::string& path, std::map<std::string, bool>* names) {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = RefreshLocked();
  if (!s.ok()) return s;
  Status failed;
  for (auto& [w, p] : peers_) {
    Inode parent, inode;
    std::string name;
    bool exists = false;
    std::vector<uint64_t> walked;
    s = p.store->Resolve(path, &parent, &name, &inode, &exists, &walked);
    if (s.IsNotFound() || s.code() == Code::kNotADirectory) continue;
    if (!s.ok()) return s;
    if (!exists || inode.type != FileType::kDirectory) continue;
    std::vector<DirEntry> entries;
    s = p.store->ListDir(inode.ino, walked, path, &entries);
    if (!s.ok() && failed.ok()) failed = s;
    for (auto& e : entries) names->emplace(e.name, e.is_dir);
  }
  return failed;
}

void Peers::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  peers_.clear();
}

void Peers::Drop(int writer) {
  std::lock_guard<std::mutex> lock(mu_);
  peers_.erase(writer);
}

Status ForPeerWriters(const FsOptions& options, const std::string& root,
                      Peers* peers, const std::vector<int>& writers,
                      const std::function<Status(int, FileSystem*)>& op) {
  std::vector<std::pair<int, std::unique_ptr<FileSystem>>> open;
  // A store that is gone meanwhile (its writer removed it) holds nothing
  // to change, and must not be made again.
  FsOptions existing = options;
  existing.store.create_if_missing = false;
  Status s;
  for (int w : writers) {
    peers->Drop(w);
    std::unique_ptr<FileSystem> fs;
    s = OpenWriterFs(existing, WriterStorePath(root, w), w, "", &fs);
    if (s.IsNotFound()) {
      s = Status::OK();
      continue;
    }
    if (!s.ok()) {
      s = Status(s.code(), "writer " + std::to_string(w) +
                               " holds part of the file, and its store "
                               "cannot be changed now: " + s.message());
      break;
    }
    open.emplace_back(w, std::move(fs));
  }
  for (auto& [w, fs] : open) {
    if (!s.ok()) break;
    s = op(w, fs.get());
  }
  for (auto& [w, fs] : open) {
    Status c = fs->Close();
    if (s.ok()) s = c;
  }
  return s;
}

}  // namespace fs
}  // namespace sluice
