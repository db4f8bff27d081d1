// An Env that counts what is read from stores' value log files, and by
// which threads (read ahead runs on threads of its own), and the reads of
// their trees' table files.
#ifndef SLUICE_TESTS_COUNTING_ENV_H_
#define SLUICE_TESTS_COUNTING_ENV_H_

#include <string.h>

#include <mutex>
#include <set>
#include <thread>

#include "util/env.h"

namespace sluice {
namespace test {

class CountingEnv : public Env {
 public:
  int Open(const char* path, int flags, mode_t mode) override {
    const int fd = Posix()->Open(path, flags, mode);
    std::lock_guard<std::mutex> lock(mu_);
    if (fd >= 0) {
      if (strstr(path, "/vlog/") != nullptr) {
        vlog_fds_.insert(fd);
      } else {
        vlog_fds_.erase(fd);
      }
      const size_t n = strlen(path);
      if (n > 4 && (strcmp(path + n - 4, ".sst") == 0 ||
                    strcmp(path + n - 4, ".ldb") == 0)) {
        table_fds_.insert(fd);
      } else {
        table_fds_.erase(fd);
      }
    }
    return fd;
  }
  ssize_t Pread(int fd, void* buf, size_t n, off_t offset) override {
    const ssize_t r = Posix()->Pread(fd, buf, n, offset);
    std::lock_guard<std::mutex> lock(mu_);
    if (r > 0 && vlog_fds_.count(fd)) {
      bytes_ += static_cast<uint64_t>(r);
      reads_ += 1;
      if (std::this_thread::get_id() != caller_) others_ += 1;
    }
    if (r > 0 && table_fds_.count(fd)) table_reads_ += 1;
    return r;
  }
  // Starts counting afresh; reads from threads other than this one are
  // counted apart (read ahead).
  void Reset() {
    std::lock_guard<std::mutex> lock(mu_);
    bytes_ = reads_ = others_ = table_reads_ = 0;
    caller_ = std::this_thread::get_id();
  }
  uint64_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }
  // Reads of value log files, by any thread.
  uint64_t reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_;
  }
  // Reads of table files (.sst, .ldb), by any thread.
  uint64_t table_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return table_reads_;
  }
  uint64_t other_threads_reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return others_;
  }

 private:
  std::mutex mu_;
  std::set<int> vlog_fds_, table_fds_;
  uint64_t bytes_ = 0, reads_ = 0, others_ = 0, table_reads_ = 0;
  std::thread::id caller_;
};

class ScopedEnv {
 public:
  explicit ScopedEnv(Env* env) : old_(Env::SetDefault(env)) {}
  ~ScopedEnv() { Env::SetDefault(old_); }

 private:
  Env* old_;
};

}  // namespace test
}  // namespace sluice

#endif  // SLUICE_TESTS_COUNTING_ENV_H_
