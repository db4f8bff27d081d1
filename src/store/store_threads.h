// The background work of one store (its backend's flushes and compactions),
// on threads of its own: a queue of jobs, run by up to `limit` threads that
// start as work arrives, all ended by Stop(). The backends' Envs run their
// Schedule calls here instead of on their libraries' process-wide pools,
// which never end and which a forked child inherits without their threads
// (rocksdb_backend.cc says more).
#ifndef SLUICE_STORE_STORE_THREADS_H_
#define SLUICE_STORE_STORE_THREADS_H_

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sluice {

class StoreThreads {
 public:
  struct Job {
    void (*function)(void*);
    void* arg;
    void* tag;  // for Take
    void (*unsched)(void*);
  };

  // `name`: the threads' name (at most 15 characters).
  StoreThreads(std::string name, int limit)
      : name_(std::move(name)), limit_(limit) {}
  ~StoreThreads() { Stop(); }
  StoreThreads(const StoreThreads&) = delete;
  StoreThreads& operator=(const StoreThreads&) = delete;

  // Queues `job`, starting a thread when none is idle and the limit allows.
  // False after Stop(): the job is not taken.
  bool Submit(const Job& job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    jobs_.push_back(job);
    if (idle_ == 0 && static_cast<int>(threads_.size()) < limit_) {
      threads_.emplace_back([this] { Run(); });
    }
    cv_.notify_one();
    return true;
  }
  // Removes the queued jobs with `tag` (not those already running) and
  // returns them.
  std::vector<Job> Take(void* tag) {
    std::lock_guard<std::mutex> lock(mu_);
    auto keep = std::stable_partition(
        jobs_.begin(), jobs_.end(), [tag](const Job& j) { return j.tag != tag; });
    std::vector<Job> taken(keep, jobs_.end());
    jobs_.erase(keep, jobs_.end());
    return taken;
  }
  size_t Queued() const {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size();
  }
  int Limit() const {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  void SetLimit(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = std::max(n, 0);
  }
  void RaiseLimit(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = std::max(limit_, n);
  }

  // Runs what is queued, then ends and joins every thread. The store's
  // engine must be closed first (it waits for its own work).
  void Stop() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      threads.swap(threads_);
    }
    cv_.notify_all();
    for (std::thread& t : threads) t.join();
  }

 private:
  void Run() {
    pthread_setname_np(pthread_self(), name_.c_str());
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopped, and nothing left to run
      Job j = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      j.function(j.arg);
      lock.lock();
    }
  }

  const std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::vector<std::thread> threads_;
  int limit_;
  int idle_ = 0;
  bool stop_ = false;
};

}  // namespace sluice

#endif  // SLUICE_STORE_STORE_THREADS_H_
