// The LD_PRELOAD interposer's core: configuration, the descriptor table,
// path resolution and the process's view of the store.
//
// Every descriptor the program opens under SLUICE_MOUNT is a real kernel
// descriptor (the "placeholder"): an O_PATH descriptor of a memfd whose
// first page holds the stored file's offset and a small header naming the
// stored path and the open flags. Each process that holds it maps that
// page (shared), so the offset is shared as the kernel shares any open
// file description: dup, dup2, fork and exec keep working. The stored
// file's bytes never go into the memfd; calls on our descriptors go to the
// file layer, and any call that reaches the placeholder itself (one nobody
// wrapped: read, write, mmap, fsync, lseek, locks) fails with EBADF, while
// fstat, fcntl's F_GETFD/F_SETFD, dup and close work on it.
//
// The process opens the file system lazily: read-only over every writer's
// store (the merged view) while it only reads, and as its own writer
// (SLUICE_WRITER, else its MPI rank, else 0) from its first change on. It
// lets the store go (flushes and closes it, keeping descriptors) before it
// forks, spawns or execs, so the next process can take it; its descriptors
// reattach on their next use. A second process that wants the store while
// one holds it waits up to SLUICE_LOCK_WAIT seconds.
#ifndef SLUICE_PRELOAD_SHIM_H_
#define SLUICE_PRELOAD_SHIM_H_

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/fs.h"

namespace sluice {
namespace preload {

// The next definition of `name` after this library (libc's).
void* RealSym(const char* name);
#define SLUICE_REAL(fn)                                         \
  static const auto real_##fn = reinterpret_cast<decltype(&::fn)>( \
      ::sluice::preload::RealSym(#fn))

// Set while Sluice itself runs on this thread: its own calls go to libc.
extern thread_local bool t_inside __attribute__((tls_model("initial-exec")));
class Inside {
 public:
  Inside() : prev_(t_inside) { t_inside = true; }
  ~Inside() { t_inside = prev_; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;

 private:
  bool prev_;
};

// An open file description of a stored file or directory. Shared by the
// descriptors dup'd from it; `file` is null while detached (after a
// release, after fork or exec) and reopened on next use.
struct Desc {
  int refs = 0;       // descriptors of this process that refer to it
  std::string path;   // within the file system: "/a/b"
  int flags = 0;      // the program's open flags
  bool is_dir = false;
  bool pending = false;  // opened before exec in a forked child: not yet done
  mode_t mode = 0;       // for a pending O_CREAT
  ino_t key = 0;      // the placeholder's inode: dups share it
  char* map = nullptr;  // the placeholder's page, mapped shared (offset, header)
  int lock_fd = -1;     // the lock file, for flock and OFD locks (locks.cc)
  std::unique_ptr<File> file;
  Status error;       // a flush that failed at release: the next call says so
};

constexpr int kMaxFds = 1 << 16;
extern std::atomic<Desc*> g_fds[kMaxFds];
extern std::atomic<bool> g_ready;
// Every change of g_fds, and every use of a Desc or the file system, holds
// this lock. Descriptors not ours never take it.
extern std::mutex g_mu;

void EnsureInit();

// The descriptor's Desc, or null when `fd` is not ours. No lock, no
// allocation: the pass-through path of every descriptor call.
inline Desc* Lookup(int fd) {
  if (!g_ready.load(std::memory_order_acquire)) EnsureInit();
  if (fd < 0 || fd >= kMaxFds) return nullptr;
  return g_fds[fd].load(std::memory_order_acquire);
}

// True when `path` (relative to dirfd, AT_FDCWD or one of our directory
// descriptors) is under the mount; *out is then its normalised path in the
// file system. False for everything else, which the caller passes to libc.
bool Resolve(int dirfd, const char* path, std::string* out);
inline bool Resolve(const char* path, std::string* out) {
  return Resolve(AT_FDCWD, path, out);
}

// Sets errno from `s` (and reports store failures on stderr once);
// returns -1.
int Fail(const Status& s);
inline int FailErrno(int e) {
  errno = e;
  return -1;
}

// `fd` moved to a high number (close-on-exec; 1024, or half the limit of
// descriptors), out of the program's way; itself when none is free there
// or the limit is below `min_limit`.
int AsideHigh(int fd, rlim_t min_limit);

// The file system, opened for reading or writing as `write` asks
// (g_mu held). A writer view also serves reads.
Status View(bool write, FileSystem** fs);
// Reopens a detached Desc (g_mu held).
Status Attach(Desc* d);
// Makes what this process changed in the namespace durable (g_mu held): a
// barrier of its writer view, when it has one open (fsync of a directory).
Status SyncNamespaceLocked();
// Flushes and closes every open file and the store, keeping descriptors
// (their files reopen at their next use); returns the first error, which
// a file's descriptor also reports at its next call.
Status ReleaseLocked();
void Release();
// Releases the store when no stored file is open (g_mu held): a process
// holds the store only while it uses it, and what it wrote is in the store
// when its last stored file closes, even if it then ends with _exit.
Status MaybeReleaseLocked();

// g_mu for one call on stored files; at its end the store is let go when
// nothing holds it.
class Session {
 public:
  Session() { g_mu.lock(); }
  ~Session() {
    const int e = errno;  // the call's result, not the release's
    MaybeReleaseLocked();
    g_mu.unlock();
    errno = e;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// Opens `path` (in the file system) as a new descriptor (g_mu held).
int OpenLocked(const std::string& path, int flags, mode_t mode);
// Drops descriptor `fd` from the table, closing its Desc when it was the
// last (g_mu held). Returns 0, or -1 with errno when the final flush failed.
int DropLocked(int fd);
// Rewrites the placeholder's header after d->flags changed (g_mu held).
void RewriteHeaderLocked(int fd, Desc* d);
// Records newfd as a duplicate of oldfd's Desc (g_mu held).
void DupLocked(int oldfd, int newfd);

// The file offset of the open file description, kept in the placeholder's
// page: shared with its duplicates, forked children and exec'd programs.
inline off_t OffsetOf(const Desc* d) {
  return reinterpret_cast<std::atomic<int64_t>*>(d->map)->load();
}
inline void SetOffset(Desc* d, off_t pos) {
  reinterpret_cast<std::atomic<int64_t>*>(d->map)->store(pos);
}

// Locks on stored files (locks.cc): fcntl's lock commands (F_SETLK,
// F_SETLKW, F_GETLK, F_OFD_*) on our descriptor; 1 when `cmd` is not one.
int LockFcntl(int fd, int cmd, void* arg, int* result);
// The process's POSIX locks of d's file go at any close of a descriptor of
// it, and d's own lock file at its last (g_mu held).
void LocksOnDropLocked(Desc* d, bool last);

// Stored files keep no owner (attrs.cc): 0 when chown to (u, g) changes
// nothing (-1, or the owner stat reports), else -1 with EPERM.
int ChownStored(uid_t u, gid_t g);

void FillStat(const FileInfo& fi, struct stat* st);
// Stat of a path in the file system (g_mu held). The mount root is a
// directory even before anything is stored.
Status StatLocked(const std::string& path, FileInfo* fi);
Status StatDescLocked(Desc* d, FileInfo* fi);

// The root directory of the data (SLUICE_ROOT), for statvfs.
const std::string& DataRoot();
// True when the interposer is set up for a mount with a usable
// configuration (not one whose bad setting fails every call under the
// mount); DataRoot() is then set.
bool Active();
// The current directory when it is inside the mount ("" otherwise).
std::string VirtualCwd();
void SetVirtualCwd(const std::string& path);
// Called after the real cwd changed.
void RealCwdChanged();
// The mount prefix ("/sluice").
const std::string& MountPrefix();
// The process's umask, as its last umask() call set it (read from /proc at
// start: umask(2) cannot be read without changing it).
mode_t Umask();
void NoteUmask(mode_t mask);
// The permission bits a new file or directory gets for `mode`: the umask
// taken out.
mode_t CreationMode(mode_t mode);

// The standard streams follow fds 0-2: when one is ours, its FILE is a
// cookie stream over our calls.
void SyncStdStream(int fd);
void FlushStdStream(int fd);

}  // namespace preload
}  // namespace sluice

#endif  // SLUICE_PRELOAD_SHIM_H_
