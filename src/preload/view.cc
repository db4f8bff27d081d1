// The process's view of the store: opened lazily (merged reader, or this
// process's writer), let go when nothing is open, and errors turned into
// errno.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "preload/state.h"

namespace sluice {
namespace preload {
namespace {
// The storage engine's function-local statics are made at its first open
// and destroyed by exit() before any library destructor runs; an atexit
// handler registered after that first open runs before them.
std::atomic<bool> g_atexit_registered{false};
}  // namespace

void AtExit() {
  if (!S || !S->cfg.active) return;
  fflush(nullptr);  // stdio buffers of stored files, before the store closes
  Release();
}

// ---- errors ----------------------------------------------------------------
int Fail(const Status& s) {
  int e = ErrnoOf(s);
  switch (s.code()) {
    case Code::kCorruption:
    case Code::kIOError:
    case Code::kBusy:
    case Code::kNoSpace:
    case Code::kNotAStore:
    case Code::kVersionTooNew:
      Say(s.ToString());
      break;
    default:
      break;
  }
  errno = e ? e : EIO;
  return -1;
}

// ---- the store -------------------------------------------------------------
Status View(bool write, FileSystem** fs) {
  if (!S->cfg.error.empty()) return Status::InvalidArgument(S->cfg.error);
  if (S->cfg.always_writer) write = true;
  if (S->fs && (S->fs_writer || !write)) {
    *fs = S->fs.get();
    return Status::OK();
  }
  if (S->fs) ReleaseLocked();  // reader to writer: files reattach on next use
  Inside inside;
  const int who = write ? S->cfg.writer : FileSystem::kReader;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline =
      start + std::chrono::duration<double>(S->cfg.lock_wait);
  Status s;
  bool said = false;
  for (;;) {
    s = FileSystem::Open(S->cfg.options, S->cfg.root, who, &S->fs);
    const auto now = std::chrono::steady_clock::now();
    if (!s.IsBusy() || now >= deadline) break;
    // Said once the wait is more than a moment's (xargs -P, a pipeline
    // of two writers), not for every short one.
    if (!said && S->cfg.lock_wait >= 2 && now - start >= std::chrono::seconds(1)) {
      Say("waiting up to " + std::to_string(static_cast<int>(S->cfg.lock_wait)) +
          " s (SLUICE_LOCK_WAIT) for " + s.message());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!s.ok()) {
    S->fs.reset();
    return s;
  }
  S->fs_writer = write;
  g_used_store = true;
  *fs = S->fs.get();
  if (!g_atexit_registered.exchange(true)) atexit(AtExit);
  return Status::OK();
}

Status SyncNamespaceLocked() {
  if (!S->fs || !S->fs_writer) return Status::OK();
  Inside inside;
  return S->fs->Sync();
}

Status Attach(Desc* d) {
  if (!d->error.ok()) {
    Status e = std::move(d->error);
    d->error = Status::OK();
    return e;
  }
  if (d->file || (d->is_dir && !d->pending)) return Status::OK();
  const int acc = d->flags & O_ACCMODE;
  constexpr int kOpenOnly = O_CREAT | O_EXCL | O_TRUNC;
  FileSystem* fs;
  Status s = View(acc != O_RDONLY || (d->pending && (d->flags & kOpenOnly)),
                  &fs);
  if (!s.ok()) return s;
  Inside inside;
  // O_SYNC, O_DSYNC: each write is durable when it returns.
  const int ff = acc | (d->flags & (O_SYNC | O_DSYNC));
  if (!d->pending) {
    // A descriptor this process (or the one before exec) had closed its
    // file under, at a release: the file is open again, incomplete until
    // the program closes it.
    s = fs->OpenFile(d->path, ff, 0, &d->file);
    if (s.ok() && acc != O_RDONLY) s = d->file->MarkOpen();
    return s;
  }
  // An open made before exec: carry it out now, once.
  s = fs->OpenFile(d->path, ff | (d->flags & kOpenOnly), d->mode, &d->file);
  if (s.code() == Code::kIsADirectory && acc == O_RDONLY &&
      !(d->flags & O_CREAT)) {
    d->is_dir = true;
    s = Status::OK();
  }
  if (!s.ok()) return s;
  d->pending = false;
  d->flags &= ~kOpenOnly;
  for (int fd = 0; fd < kMaxFds; fd++) {
    if (g_fds[fd].load() == d) {
      RewriteHeaderLocked(fd, d);
      break;
    }
  }
  return Status::OK();
}

Status ReleaseLocked() {
  Inside inside;
  Status first;
  for (Desc* d : S->descs) {
    if (!d->file) continue;
    Status s = d->file->Close();
    if (!s.ok() && d->error.ok()) d->error = s;
    if (!s.ok() && first.ok()) first = s;
    d->file.reset();
  }
  if (S->fs) {
    Status s = S->fs->Close();
    if (!s.ok()) {
      Say("closing the store: " + s.ToString());
      if (first.ok()) first = s;
    }
    S->fs.reset();
  }
  return first;
}

Status MaybeReleaseLocked() {
  if (!S || !S->fs) return Status::OK();
  for (const Desc* d : S->descs) {
    if (d->file) return Status::OK();
  }
  return ReleaseLocked();
}

void Release() {
  if (!S || !S->cfg.active) return;
  std::lock_guard<std::mutex> lock(g_mu);
  ReleaseLocked();
}

Status StatLocked(const std::string& path, FileInfo* fi) {
  FileSystem* fs;
  Status s = View(false, &fs);
  if (s.IsNotFound() && path == "/") {
    *fi = FileInfo();
    fi->is_dir = true;
    fi->mode = 0755;
    fi->ino = 1;
    return Status::OK();
  }
  if (!s.ok()) return s;
  Inside inside;
  return fs->Stat(path, fi);
}

Status StatDescLocked(Desc* d, FileInfo* fi) {
  if (!d->is_dir) {
    Status s = Attach(d);
    if (!s.ok()) return s;
    Inside inside;
    return d->file->Stat(fi);
  }
  return StatLocked(d->path, fi);
}

void FillStat(const FileInfo& fi, struct stat* st) {
  FileInfoToStat(fi, st);
  st->st_dev = makedev(0, 0xfe51c);
  st->st_uid = geteuid();
  st->st_gid = getegid();
  // The preferred I/O size: the extent (cp and cat size their buffers by it).
  st->st_blksize = static_cast<blksize_t>(S->cfg.options.extent_bytes);
}

}  // namespace preload
}  // namespace sluice
