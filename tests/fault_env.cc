#include "fault_env.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace sluice {
namespace test {
namespace {

Env* Sys() { return Env::Posix(); }

int KindIndex(uint32_t kind) { return __builtin_ctz(kind); }

// Sets errno and returns -1, as the call it stands for would.
int Fail(int err) {
  errno = err;
  return -1;
}

bool PathStartsWith(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

}  // namespace

FaultEnv::FaultEnv(std::string stash_dir) : stash_dir_(std::move(stash_dir)) {
  mkdir(stash_dir_.c_str(), 0755);
}

FaultEnv::~FaultEnv() {
  // The stash holds only links to files whose removal a power loss could
  // still undo; nobody needs them once the Env is gone.
  std::lock_guard<std::mutex> lock(mu_);
  for (const NameOp& op : names_) {
    if (!op.stash.empty()) unlink(op.stash.c_str());
  }
  rmdir(stash_dir_.c_str());
}

void FaultEnv::InjectAt(uint64_t n, uint32_t mask, int err, bool short_write,
                        std::string only) {
  std::lock_guard<std::mutex> lock(mu_);
  inject_only_ = std::move(only);
  inject_mask_ = mask;
  inject_at_ = n;
  inject_seen_ = 0;
  inject_p_ = 0;
  inject_err_ = err;
  inject_short_ = short_write;
}

void FaultEnv::InjectRandomly(double p, uint32_t mask, int err, uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  inject_mask_ = mask;
  inject_at_ = UINT64_MAX;
  inject_p_ = p;
  inject_only_.clear();
  inject_err_ = err;
  inject_short_ = false;
  rng_.seed(seed);
}

void FaultEnv::StopInjecting() {
  std::lock_guard<std::mutex> lock(mu_);
  inject_mask_ = 0;
}

uint64_t FaultEnv::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

uint64_t FaultEnv::calls(uint32_t mask) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (int i = 0; i < 11; ++i) {
    if (mask & (1u << i)) n += counts_[i];
  }
  return n;
}

void FaultEnv::PowerLossAt(uint64_t n, std::function<void()> then) {
  std::lock_guard<std::mutex> lock(mu_);
  power_loss_at_ = mutating_ + n;
  then_ = std::move(then);
}

void FaultEnv::StallOpens(std::string only) {
  {
    std::lock_guard<std::mutex> lock(stall_mu_);
    stall_only_ = std::move(only);
  }
  stall_cv_.notify_all();
}

void FaultEnv::Unstall() {
  {
    std::lock_guard<std::mutex> lock(stall_mu_);
    stall_only_.clear();
  }
  stall_cv_.notify_all();
}

uint64_t FaultEnv::stalls() const {
  std::lock_guard<std::mutex> lock(stall_mu_);
  return stalls_;
}

void FaultEnv::MaybeStall(const char* path) {
  std::unique_lock<std::mutex> lock(stall_mu_);
  if (stall_only_.empty() || strstr(path, stall_only_.c_str()) == nullptr) {
    return;
  }
  ++stalls_;
  stall_cv_.wait(lock, [&] {
    return stall_only_.empty() || strstr(path, stall_only_.c_str()) == nullptr;
  });
}

Status FaultEnv::DropUnsynced() {
  std::lock_guard<std::mutex> lock(mu_);
  return DropLocked();
}

bool FaultEnv::powered_off() const {
  std::lock_guard<std::mutex> lock(mu_);
  return off_;
}

int FaultEnv::Check(Kind kind, const std::string& where, bool* short_write) {
  if (off_) return EIO;
  ++counts_[KindIndex(kind)];
  if (kind & kMutating) {
    if (mutating_++ == power_loss_at_) {
      Status s = DropLocked();
      if (!s.ok()) fprintf(stderr, "fault env: %s\n", s.ToString().c_str());
      if (then_) then_();
      return EIO;
    }
  }
  if ((kind & inject_mask_) == 0) return 0;
  if (!inject_only_.empty() && where.find(inject_only_) == std::string::npos) {
    return 0;
  }
  const uint64_t idx = inject_seen_++;
  bool fail = idx == inject_at_;
  if (!fail && inject_p_ > 0) {
    fail = std::uniform_real_distribution<double>(0, 1)(rng_) < inject_p_;
  }
  if (!fail) return 0;
  ++injected_;
  if (short_write != nullptr) *short_write = inject_short_ && kind == kWrite;
  static const char* const kNames[] = {
      "open",   "read",   "write", "sync",  "truncate", "allocate",
      "rename", "unlink", "mkdir", "close", "lock"};
  fault_ = std::string(kNames[KindIndex(kind)]) + " " + where + ": " +
           strerror(inject_err_) +
           (short_write != nullptr && *short_write ? " (cut short)" : "");
  return inject_err_;
}

std::string FaultEnv::PathOf(int fd) {
  FileState* f = Track(fd);
  return f != nullptr ? f->path : "fd " + std::to_string(fd);
}

std::string FaultEnv::fault() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fault_;
}

FaultEnv::FileState* FaultEnv::Track(int fd) {
  auto it = fds_.find(fd);
  if (it == fds_.end()) return nullptr;
  return &files_[it->second];
}

void FaultEnv::Preimage(FileState* f, int fd, uint64_t offset, uint64_t n) {
  f->dirty = true;
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset >= size || n == 0) return;
  const uint64_t len = std::min<uint64_t>(n, size - offset);
  // The descriptor may be O_DIRECT: read through a buffered one.
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  const int rfd = open(self.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return;
  Undo u{offset, std::string(len, '\0')};
  size_t got = 0;
  while (got < len) {
    ssize_t r = pread(rfd, &u.old[got], len - got, offset + got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(rfd);
  u.old.resize(got);
  f->undo.push_back(std::move(u));
}

void FaultEnv::CommitNames() {
  for (const NameOp& op : names_) {
    if (op.stash.empty()) continue;
    // The removal is durable: forget the file (its inode may be reused).
    for (auto it = files_.begin(); it != files_.end();) {
      it = it->second.path == op.stash ? files_.erase(it) : std::next(it);
    }
    unlink(op.stash.c_str());
  }
  names_.clear();
}

std::string FaultEnv::Stash(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  const std::string stash = stash_dir_ + "/" + std::to_string(getpid()) + "." +
                            std::to_string(stash_seq_++);
  if (link(path.c_str(), stash.c_str()) != 0) return "";
  auto it = files_.find({st.st_dev, st.st_ino});
  if (it != files_.end()) it->second.path = stash;
  return stash;
}

Status FaultEnv::DropLocked() {
  if (off_) return Status::OK();
  off_ = true;
  Status result;
  auto note = [&](const std::string& what, const std::string& path) {
    if (result.ok()) {
      result = Status::IOError("power loss: cannot " + what + " " + path +
                               ": " + strerror(errno));
    }
  };
  // Data first, by the names the files have now.
  for (auto& [inode, f] : files_) {
    if (!f.dirty) continue;
    const int fd = open(f.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) note("reopen", f.path);
      continue;
    }
    for (auto u = f.undo.rbegin(); u != f.undo.rend(); ++u) {
      if (pwrite(fd, u->old.data(), u->old.size(),
                 static_cast<off_t>(u->offset)) !=
          static_cast<ssize_t>(u->old.size())) {
        note("restore", f.path);
      }
    }
    if (ftruncate(fd, static_cast<off_t>(f.synced_size)) != 0) {
      note("cut", f.path);
    }
    fsync(fd);
    close(fd);
  }
  // Then the names, newest first.
  for (auto op = names_.rbegin(); op != names_.rend(); ++op) {
    switch (op->type) {
      case NameOp::kCreate:
        if (unlink(op->path.c_str()) != 0 && errno != ENOENT) {
          note("remove", op->path);
        }
        break;
      case NameOp::kRename:
        if (rename(op->path.c_str(), op->from.c_str()) != 0) {
          note("rename back", op->path);
        }
        if (!op->stash.empty() &&
            link(op->stash.c_str(), op->path.c_str()) != 0) {
          note("bring back", op->path);
        }
        break;
      case NameOp::kUnlink:
        if (!op->stash.empty() &&
            link(op->stash.c_str(), op->path.c_str()) != 0) {
          note("bring back", op->path);
        }
        break;
      case NameOp::kMkdir:
        if (rmdir(op->path.c_str()) != 0 && errno != ENOENT) {
          note("remove directory", op->path);
        }
        break;
      case NameOp::kRmdir:
        if (mkdir(op->path.c_str(), 0755) != 0) {
          note("bring back directory", op->path);
        }
        break;
    }
    if (!op->stash.empty()) unlink(op->stash.c_str());
  }
  names_.clear();
  files_.clear();
  return result;
}

int FaultEnv::Open(const char* path, int flags, mode_t mode) {
  MaybeStall(path);
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kOpen, path)) return Fail(err);
  struct stat before;
  const bool existed = lstat(path, &before) == 0;
  Undo truncated{0, {}};
  if (existed && (flags & O_TRUNC) && S_ISREG(before.st_mode) &&
      before.st_size > 0 && (flags & O_ACCMODE) != O_RDONLY) {
    const int rfd = open(path, O_RDONLY | O_CLOEXEC);
    if (rfd >= 0) {
      truncated.old.resize(static_cast<size_t>(before.st_size));
      ssize_t r = pread(rfd, &truncated.old[0], truncated.old.size(), 0);
      truncated.old.resize(r > 0 ? static_cast<size_t>(r) : 0);
      close(rfd);
    }
  }
  const int fd = Sys()->Open(path, flags, mode);
  if (fd < 0) return fd;
  struct stat st;
  if (fstat(fd, &st) != 0) return fd;
  const Inode inode{st.st_dev, st.st_ino};
  fds_[fd] = inode;
  auto [it, fresh] = files_.try_emplace(inode);
  FileState& f = it->second;
  f.path = path;
  if (fresh || !existed) {
    // Known from now: what it holds counts as synced (or, if this open
    // created it, it held nothing; an inode number may be reused).
    f = FileState{};
    f.path = path;
    f.synced_size = existed ? static_cast<uint64_t>(before.st_size) : 0;
  }
  if (!existed && (flags & O_CREAT)) {
    names_.push_back({NameOp::kCreate, path, "", ""});
  }
  if (!truncated.old.empty()) {
    f.dirty = true;
    f.undo.push_back(std::move(truncated));
  }
  return fd;
}

int FaultEnv::Close(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.erase(fd);
  pending_error_.erase(fd);
  const int err = Check(kClose, PathOf(fd));
  const int rc = Sys()->Close(fd);
  return err != 0 ? Fail(err) : rc;
}

ssize_t FaultEnv::Pread(int fd, void* buf, size_t n, off_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kRead, PathOf(fd))) return Fail(err);
  return Sys()->Pread(fd, buf, n, offset);
}

ssize_t FaultEnv::Pwrite(int fd, const void* buf, size_t n, off_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  bool cut = false;
  if (int err = Check(kWrite, PathOf(fd), &cut); err != 0 && !cut)
    return Fail(err);
  auto pending = pending_error_.find(fd);
  if (pending != pending_error_.end()) {
    const int err = pending->second;
    pending_error_.erase(pending);
    return Fail(err);
  }
  if (cut) {
    pending_error_[fd] = inject_err_;
    // O_DIRECT needs whole blocks: cut at a block, or fail outright.
    size_t half = n / 2;
    if (fcntl(fd, F_GETFL) & O_DIRECT) half &= ~size_t{4095};
    if (half == 0) {
      pending_error_.erase(fd);
      return Fail(inject_err_);
    }
    n = half;
  }
  if (FileState* f = Track(fd))
    Preimage(f, fd, static_cast<uint64_t>(offset), n);
  return Sys()->Pwrite(fd, buf, n, offset);
}

ssize_t FaultEnv::Write(int fd, const void* buf, size_t n) {
  const off_t at = lseek(fd, 0, SEEK_CUR);
  if (at < 0) return -1;
  const ssize_t w = Pwrite(fd, buf, n, at);
  if (w > 0) lseek(fd, at + w, SEEK_SET);
  return w;
}

int FaultEnv::Sync(int fd, bool data_only) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kSync, PathOf(fd))) return Fail(err);
  const int rc = data_only ? Sys()->Fdatasync(fd) : Sys()->Fsync(fd);
  if (rc != 0) return rc;
  if (FileState* f = Track(fd)) {
    struct stat st;
    if (fstat(fd, &st) == 0) f->synced_size = static_cast<uint64_t>(st.st_size);
    f->undo.clear();
    f->dirty = false;
  }
  CommitNames();
  return 0;
}

// fdatasync makes the data and the size durable, which is all a power
// loss here takes away: the same as fsync in this model.
int FaultEnv::Fdatasync(int fd) { return Sync(fd, /*data_only=*/true); }

int FaultEnv::Fsync(int fd) { return Sync(fd, /*data_only=*/false); }

int FaultEnv::Ftruncate(int fd, off_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kTruncate, PathOf(fd))) return Fail(err);
  if (FileState* f = Track(fd)) {
    Preimage(f, fd, static_cast<uint64_t>(length), UINT64_MAX / 2);
  }
  return Sys()->Ftruncate(fd, length);
}

int FaultEnv::Fallocate(int fd, int mode, off_t offset, off_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kAllocate, PathOf(fd))) return Fail(err);
  if (FileState* f = Track(fd)) {
    if (mode & FALLOC_FL_PUNCH_HOLE) {
      Preimage(f, fd, static_cast<uint64_t>(offset),
               static_cast<uint64_t>(length));
    } else {
      f->dirty = true;  // may grow the file
    }
  }
  return Sys()->Fallocate(fd, mode, offset, length);
}

int FaultEnv::Rename(const char* from, const char* to) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kRename, from)) return Fail(err);
  std::string stash = Stash(to);
  if (Sys()->Rename(from, to) != 0) {
    const int err = errno;
    if (!stash.empty()) unlink(stash.c_str());
    return Fail(err);
  }
  const std::string f(from), t(to);
  for (auto& [inode, st] : files_) {
    if (st.path == f) {
      st.path = t;
    } else if (PathStartsWith(st.path, f)) {
      st.path = t + st.path.substr(f.size());
    }
  }
  names_.push_back({NameOp::kRename, t, f, stash});
  return 0;
}

int FaultEnv::Unlink(const char* path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kUnlink, path)) return Fail(err);
  std::string stash = Stash(path);
  if (Sys()->Unlink(path) != 0) {
    const int err = errno;
    if (!stash.empty()) unlink(stash.c_str());
    return Fail(err);
  }
  names_.push_back({NameOp::kUnlink, path, "", stash});
  return 0;
}

int FaultEnv::Mkdir(const char* path, mode_t mode) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kMkdir, path)) return Fail(err);
  if (Sys()->Mkdir(path, mode) != 0) return -1;
  names_.push_back({NameOp::kMkdir, path, "", ""});
  return 0;
}

int FaultEnv::Rmdir(const char* path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kUnlink, path)) return Fail(err);
  if (Sys()->Rmdir(path) != 0) return -1;
  names_.push_back({NameOp::kRmdir, path, "", ""});
  return 0;
}

int FaultEnv::Flock(int fd, int operation) {
  std::lock_guard<std::mutex> lock(mu_);
  if (int err = Check(kLock, PathOf(fd))) return Fail(err);
  return Sys()->Flock(fd, operation);
}

}  // namespace test
}  // namespace sluice
