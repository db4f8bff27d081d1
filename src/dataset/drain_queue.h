// The background drains of a context: committed ids of this process's
// store copied to the next data root (tier/drain.h) by a bounded number of
// threads, in the order committed.
#ifndef SLUICE_DATASET_DRAIN_QUEUE_H_
#define SLUICE_DATASET_DRAIN_QUEUE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sluice/dataset.h"
#include "tier/drain.h"

namespace sluice {
namespace dataset {

struct DrainJob {
  std::string dataset;
  int64_t id = 0;
  std::string src_dir, dst_dir;  // context directories
  int dst_root = -1;
  std::string dst_root_path;
  std::vector<int> writers;      // this process's stores
  // Where they are (lives as long as the job; the store it reads as long
  // as the context, which stops the queue before closing its stores).
  std::unique_ptr<tier::StoreSource> source;
  int keep_dst = 0;  // keep_last on the destination (0: all)
  tier::DrainOptions options;

  std::atomic<uint64_t> done{0}, total{0};
  std::atomic<bool> stop{false};  // the drain stops at its next flush
  // GUARDED_BY(DrainQueue::mu_)
  DrainPhase phase = DrainPhase::kQueued;
  uint64_t resumed = 0;
  bool durable = false;  // the whole id is on the destination
  Status error;
};

class DrainQueue {
 public:
  explicit DrainQueue(int threads) : threads_(threads < 1 ? 1 : threads) {}
  ~DrainQueue() { Stop(); }

  // Queues `job` (replacing an earlier job of the same id).
  void Add(std::shared_ptr<DrainJob> job);
  // This process's job of the id, or null.
  std::shared_ptr<DrainJob> Find(const std::string& dataset, int64_t id);
  // The job's state now.
  DrainState State(const DrainJob& job);
  // Waits until the job is no longer queued or draining.
  void Wait(const std::shared_ptr<DrainJob>& job);
  // Waits for every job, printing a line of progress to stderr every few
  // seconds when `progress`; the first failure.
  Status WaitAll(bool progress, const std::string& what);
  // Stops the threads (a drain in flight stops at its next flush, to be
  // resumed later) and waits for them.
  void Stop();
  // stage_mode auto: takes out of the queue the jobs of `dataset` below id
  // `below` not begun yet (*taken), and says which of its ids below it
  // began here (*began: draining or done).
  void TakeQueued(const std::string& dataset, int64_t below,
                  std::vector<std::shared_ptr<DrainJob>>* taken,
                  std::vector<int64_t>* began);
  // Puts a job TakeQueued took back in the queue, or marks it skipped.
  void Return(const std::shared_ptr<DrainJob>& job, bool skip);
  // Forgets the id's job: out of the queue, or stopped and waited for
  // (UnlinkId removes the id next).
  void Cancel(const std::string& dataset, int64_t id);

 private:
  void Run();
  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  // GUARDED_BY(mu_): the jobs not begun, in order; every job by id; the
  // jobs draining now; whether Stop began; the threads.
  std::deque<std::shared_ptr<DrainJob>> queue_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<DrainJob>> jobs_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> pool_;
};

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_DRAIN_QUEUE_H_
