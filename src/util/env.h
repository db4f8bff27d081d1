// Env: the one seam between Sluice's stores and the operating system.
//
// Every call that opens, reads, writes, syncs, truncates, allocates,
// renames, removes or locks a file of a store goes through Env::Default():
// the value log, the header, the barrier record, the lock and the store's
// directories directly, and the RocksDB and LevelDB backends through file
// systems built on it (src/store/rocksdb_env.cc, leveldb_env.cc) whenever
// Default() is not the plain POSIX one. The calls keep the shape of the system
// calls they stand for (a descriptor, -1 and errno on failure), so code over it
// reads like POSIX code and an Env that injects faults (tests/fault_env.h) sees
// every byte a store writes and every sync that makes it durable.
//
// Thread-safety: an Env is called from many threads at once. SetDefault is
// for tests: call it before opening a store and restore the old Env only
// after closing every store opened through the new one.
#ifndef SLUICE_UTIL_ENV_H_
#define SLUICE_UTIL_ENV_H_

#include <sys/types.h>

#include <cstddef>

#include "sluice/export.h"

namespace sluice {

class SLUICE_EXPORT Env {
 public:
  virtual ~Env() = default;

  // The Env every store uses: Posix() unless a test replaced it.
  static Env* Default();
  // The system calls themselves.
  static Env* Posix();
  // Replaces Default(); nullptr restores Posix(). Returns the previous one.
  static Env* SetDefault(Env* env);
  // True when Default() is the plain POSIX Env (the backends then use their
  // own native file systems, which make the same calls).
  static bool DefaultIsPosix() { return Default() == Posix(); }

  // As open(2) (O_CLOEXEC is the caller's to add), close(2), pread(2),
  // pwrite(2), write(2), fsync(2), fdatasync(2), ftruncate(2),
  // fallocate(2), rename(2), unlink(2), mkdir(2), rmdir(2), flock(2).
  virtual int Open(const char* path, int flags, mode_t mode);
  virtual int Close(int fd);
  virtual ssize_t Pread(int fd, void* buf, size_t n, off_t offset);
  virtual ssize_t Pwrite(int fd, const void* buf, size_t n, off_t offset);
  virtual ssize_t Write(int fd, const void* buf, size_t n);
  virtual int Fsync(int fd);
  virtual int Fdatasync(int fd);
  virtual int Ftruncate(int fd, off_t length);
  virtual int Fallocate(int fd, int mode, off_t offset, off_t length);
  virtual int Rename(const char* from, const char* to);
  virtual int Unlink(const char* path);
  virtual int Mkdir(const char* path, mode_t mode);
  virtual int Rmdir(const char* path);
  virtual int Flock(int fd, int operation);

  // Reads up to n bytes at offset through Pread, short only at the end of
  // the file (*got says how many); writes all n through Pwrite. Each
  // returns 0 or the errno of the call that failed.
  int ReadFull(int fd, void* buf, size_t n, off_t offset, size_t* got);
  int WriteFull(int fd, const void* buf, size_t n, off_t offset);
};

}  // namespace sluice

#endif  // SLUICE_UTIL_ENV_H_
