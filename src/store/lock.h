// The store lock: flock(2) on SLUICE.lock in the store directory. A writer
// holds it exclusively and writes "pid host" into it so that a second
// opener's error can say who holds the store; readers hold it shared. The
// kernel drops the lock when the process dies, so it is never stale. On file
// systems without flock (ENOLCK, ENOSYS, EOPNOTSUPP) the store opens
// unlocked and relies on the backend's own lock.
#ifndef SLUICE_STORE_LOCK_H_
#define SLUICE_STORE_LOCK_H_

#include <string>

#include "sluice/status.h"

namespace sluice {

constexpr const char kLockFileName[] = "SLUICE.lock";

class StoreLock {
 public:
  StoreLock() = default;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  ~StoreLock() { Release(); }

  // Busy (naming the path and, if known, the holder) when the lock is held.
  Status Acquire(const std::string& dir, bool exclusive);
  void Release();

 private:
  int fd_ = -1;
  bool exclusive_ = false;
};

}  // namespace sluice

#endif  // SLUICE_STORE_LOCK_H_
