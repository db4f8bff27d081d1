// FaultEnv: an Env (src/util/env.h) for tests that injects errors into the
// calls a store makes and simulates a power loss.
//
// Faults. InjectAt(n, ...) makes the n-th eligible call from now (0-based,
// counted over the kinds in `mask`) fail with `err`; a write may instead be
// cut short: half of it is written and its count returned, and the next
// write on that descriptor fails with `err`, as a file system filling up
// does. InjectRandomly fails each eligible call with a probability.
//
// Power loss. The model is ext4's (data=ordered), which is what Sluice
// runs on here:
//   - a file's data is durable once fsync/fdatasync of that file returned;
//     what was written since is lost, in whole or in part;
//   - the name operations (create, rename, unlink, mkdir, rmdir) are
//     journaled in order: an fsync or fdatasync of any file or directory
//     makes every one issued before it durable; the later ones are undone.
// DropUnsynced() applies that to the disk: it puts back what every file
// held at its last sync (from the pre-images it kept of every range a
// write, truncate or hole punch changed since), cuts files to their synced
// sizes, undoes the name operations after the last sync in reverse order,
// and from then on fails every call with EIO (the machine is off).
// PowerLossAt(n, then) does it at the n-th call that changes the disk and
// calls `then` (which usually _exits) while every other thread of the
// process is held at the Env's lock.
//
// Unlinked and replaced files are kept (hard links in `stash_dir`) until
// their removal is durable, so that a power loss can bring them back.
// Files that existed before the Env was installed count as synced as they
// were. Every call is made under one lock.
#ifndef SLUICE_TESTS_FAULT_ENV_H_
#define SLUICE_TESTS_FAULT_ENV_H_

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sluice/status.h"
#include "util/env.h"

namespace sluice {
namespace test {

class FaultEnv : public Env {
 public:
  enum Kind : uint32_t {
    kOpen = 1u << 0,
    kRead = 1u << 1,
    kWrite = 1u << 2,
    kSync = 1u << 3,
    kTruncate = 1u << 4,
    kAllocate = 1u << 5,
    kRename = 1u << 6,
    kUnlink = 1u << 7,
    kMkdir = 1u << 8,
    kClose = 1u << 9,
    kLock = 1u << 10,
    kAll = (1u << 11) - 1,
    // The calls that change the disk (what PowerLossAt counts).
    kMutating =
        kWrite | kSync | kTruncate | kAllocate | kRename | kUnlink | kMkdir,
  };

  // `stash_dir` must be on the same file system as the stores (hard links).
  explicit FaultEnv(std::string stash_dir);
  ~FaultEnv() override;

  // `only`: count only calls on files whose path contains it.
  void InjectAt(uint64_t n, uint32_t mask, int err, bool short_write = false,
                std::string only = "");
  void InjectRandomly(double p, uint32_t mask, int err, uint64_t seed);
  void StopInjecting();
  uint64_t injected() const;
  // The last fault injected: the call, its file and the error.
  std::string fault() const;
  // Eligible calls so far of the kinds in mask.
  uint64_t calls(uint32_t mask) const;

  // Opens of files whose path contains `only` wait until Unstall(), or
  // until a later StallOpens no longer matches them (a compaction held
  // before it writes its table, say). Every other call goes on. stalls():
  // opens that have waited so far.
  void StallOpens(std::string only);
  void Unstall();
  uint64_t stalls() const;

  void PowerLossAt(uint64_t n, std::function<void()> then);
  Status DropUnsynced();
  bool powered_off() const;

  int Open(const char* path, int flags, mode_t mode) override;
  int Close(int fd) override;
  ssize_t Pread(int fd, void* buf, size_t n, off_t offset) override;
  ssize_t Pwrite(int fd, const void* buf, size_t n, off_t offset) override;
  ssize_t Write(int fd, const void* buf, size_t n) override;
  int Fsync(int fd) override;
  int Fdatasync(int fd) override;
  int Ftruncate(int fd, off_t length) override;
  int Fallocate(int fd, int mode, off_t offset, off_t length) override;
  int Rename(const char* from, const char* to) override;
  int Unlink(const char* path) override;
  int Mkdir(const char* path, mode_t mode) override;
  int Rmdir(const char* path) override;
  int Flock(int fd, int operation) override;

 private:
  using Inode = std::pair<dev_t, ino_t>;
  struct Undo {
    uint64_t offset;
    std::string old;  // the bytes [offset, offset + old.size()) held
  };
  struct FileState {
    std::string path;  // a name it can be reached by
    uint64_t synced_size = 0;
    bool dirty = false;      // changed since the last sync
    std::vector<Undo> undo;  // since the last sync, oldest first
  };
  struct NameOp {
    enum Type { kCreate, kRename, kUnlink, kMkdir, kRmdir } type;
    std::string path, from;  // from: a rename's source
    std::string stash;       // an unlinked or replaced file's keeping link
  };

  void MaybeStall(const char* path);

  // Counts the call and decides whether it fails: 0, or the errno to fail
  // with (*short_write: cut the write short instead). Also triggers the
  // power loss. Requires mu_.
  int Check(Kind kind, const std::string& where, bool* short_write = nullptr);
  std::string PathOf(int fd);  // requires mu_
  int Sync(int fd, bool data_only);
  FileState* Track(int fd);  // requires mu_; nullptr if fd is unknown
  void Preimage(FileState* f, int fd, uint64_t offset, uint64_t n);
  void CommitNames();  // a sync made the name operations durable
  std::string Stash(const std::string& path);  // "" if nothing to keep
  Status DropLocked();

  const std::string stash_dir_;
  mutable std::mutex mu_;
  std::map<int, Inode> fds_;
  std::map<Inode, FileState> files_;
  std::vector<NameOp> names_;         // since the last sync
  std::map<int, int> pending_error_;  // fd -> errno for its next write
  uint64_t counts_[11] = {};
  uint32_t inject_mask_ = 0;
  uint64_t inject_at_ = UINT64_MAX;  // index among calls matching the mask
  uint64_t inject_seen_ = 0;
  std::string inject_only_;
  double inject_p_ = 0;
  std::mt19937_64 rng_;
  int inject_err_ = 0;
  bool inject_short_ = false;
  uint64_t injected_ = 0;
  std::string fault_;
  uint64_t mutating_ = 0;
  uint64_t power_loss_at_ = UINT64_MAX;
  std::function<void()> then_;
  bool off_ = false;
  uint64_t stash_seq_ = 0;

  mutable std::mutex stall_mu_;  // never held with mu_
  std::condition_variable stall_cv_;
  std::string stall_only_;  // GUARDED_BY(stall_mu_); "" when none
  uint64_t stalls_ = 0;     // GUARDED_BY(stall_mu_)
};

}  // namespace test
}  // namespace sluice

#endif  // SLUICE_TESTS_FAULT_ENV_H_
