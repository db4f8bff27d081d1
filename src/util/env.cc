#include "util/env.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace sluice {
namespace {

// Retries a call interrupted by a signal, as every caller would have to.
template <typename F>
auto NoIntr(F f) -> decltype(f()) {
  decltype(f()) r;
  do {
    r = f();
  } while (r < 0 && errno == EINTR);
  return r;
}

std::atomic<Env*> default_env{nullptr};

}  // namespace

Env* Env::Posix() {
  static Env* posix = new Env;  // never destroyed: used until process exit
  return posix;
}

Env* Env::Default() {
  Env* e = default_env.load(std::memory_order_acquire);
  return e != nullptr ? e : Posix();
}

Env* Env::SetDefault(Env* env) {
  Env* old = default_env.exchange(env, std::memory_order_acq_rel);
  return old != nullptr ? old : Posix();
}

int Env::Open(const char* path, int flags, mode_t mode) {
  return NoIntr([&] { return open(path, flags, mode); });
}
int Env::Close(int fd) { return close(fd); }
ssize_t Env::Pread(int fd, void* buf, size_t n, off_t offset) {
  return NoIntr([&] { return pread(fd, buf, n, offset); });
}
ssize_t Env::Pwrite(int fd, const void* buf, size_t n, off_t offset) {
  return NoIntr([&] { return pwrite(fd, buf, n, offset); });
}
ssize_t Env::Write(int fd, const void* buf, size_t n) {
  return NoIntr([&] { return write(fd, buf, n); });
}
int Env::Fsync(int fd) {
  return NoIntr([&] { return fsync(fd); });
}
int Env::Fdatasync(int fd) {
  return NoIntr([&] { return fdatasync(fd); });
}
int Env::Ftruncate(int fd, off_t length) {
  return NoIntr([&] { return ftruncate(fd, length); });
}
int Env::Fallocate(int fd, int mode, off_t offset, off_t length) {
  return NoIntr([&] { return fallocate(fd, mode, offset, length); });
}
int Env::Rename(const char* from, const char* to) { return rename(from, to); }
int Env::Unlink(const char* path) { return unlink(path); }
int Env::Mkdir(const char* path, mode_t mode) { return mkdir(path, mode); }
int Env::Rmdir(const char* path) { return rmdir(path); }
int Env::Flock(int fd, int operation) {
  return NoIntr([&] { return flock(fd, operation); });
}

int Env::ReadFull(int fd, void* buf, size_t n, off_t offset, size_t* got) {
  *got = 0;
  while (*got < n) {
    const ssize_t r = Pread(fd, static_cast<char*>(buf) + *got, n - *got,
                            offset + static_cast<off_t>(*got));
    if (r < 0) return errno;
    if (r == 0) break;
    *got += static_cast<size_t>(r);
  }
  return 0;
}

int Env::WriteFull(int fd, const void* buf, size_t n, off_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = Pwrite(fd, static_cast<const char*>(buf) + done, n - done,
                             offset + static_cast<off_t>(done));
    if (w < 0) return errno;
    done += static_cast<size_t>(w);
  }
  return 0;
}

}  // namespace sluice
