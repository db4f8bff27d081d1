#include "store/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/env.h"
#include "util/posix.h"

namespace sluice {

Status StoreLock::Acquire(const std::string& dir, bool exclusive) {
  Release();
  Env* env = Env::Default();
  const std::string path = posix::JoinPath(dir, kLockFileName);
  int fd = env->Open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && !exclusive && (errno == EACCES || errno == EROFS)) {
    fd = env->Open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  }
  if (fd < 0) return posix::Error("cannot open lock file", path, errno);
  if (env->Flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    int err = errno;
    if (err == ENOLCK || err == ENOSYS || err == EOPNOTSUPP) {
      fd_ = fd;  // no flock on this file system: open unlocked
      return Status::OK();
    }
    std::string holder;
    if (err == EWOULDBLOCK) {
      posix::ReadFile(path, &holder);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == 0)) {
        holder.pop_back();
      }
    }
    env->Close(fd);
    if (err != EWOULDBLOCK) return posix::Error("cannot lock", path, err);
    if (holder.empty()) {
      return Status::Busy("store " + dir +
                          " is open for reading by another process");
    }
    return Status::Busy("store " + dir +
                        " is open for writing by another process (pid and "
                        "host: " + holder + ")");
  }
  if (exclusive) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    std::string who = std::to_string(getpid()) + " " + host + "\n";
    if (env->Ftruncate(fd, 0) == 0) {
      (void)env->Pwrite(fd, who.data(), who.size(), 0);  // informational only
    }
  }
  fd_ = fd;
  exclusive_ = exclusive;
  return Status::OK();
}

void StoreLock::Release() {
  if (fd_ >= 0) {
    Env* env = Env::Default();
    if (exclusive_ && env->Ftruncate(fd_, 0) != 0) {
      // The holder line is informational; a stale one is overwritten.
    }
    env->Close(fd_);  // releases the flock
    fd_ = -1;
  }
}

}  // namespace sluice
