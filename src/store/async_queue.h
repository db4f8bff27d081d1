// AsyncQueue: asynchronous updates of one store, applied in issue order by
// one background thread (started at the first update). Bounded by bytes:
// Enqueue blocks while the queue holds more than its limit, so memory stays
// bounded whatever the application does. The first error of an applied
// update is kept until TakeError.
//
// Thread-safety: all methods may be called concurrently.
#ifndef SLUICE_STORE_ASYNC_QUEUE_H_
#define SLUICE_STORE_ASYNC_QUEUE_H_

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sluice/stats.h"
#include "sluice/status.h"
#include "store/write_buffer.h"

namespace sluice {

class AsyncQueue {
 public:
  struct Item {
    Op op;
    std::string key;
    std::string value;
    std::shared_ptr<const WriteBuffer> batch;  // Op::kBatch only
  };
  using ApplyFn = std::function<Status(const Item&)>;

  AsyncQueue(size_t max_bytes, ApplyFn apply)
      : max_bytes_(max_bytes), apply_(std::move(apply)) {}
  ~AsyncQueue() { Stop(); }

  void Enqueue(Item item);
  // Returns when every item enqueued before the call has been applied.
  void Drain();
  // The first error since the last call (OK if none).
  Status TakeError();
  // The same, left in place for the next TakeError.
  Status PeekError();
  // Drains, then ends the thread. Further Enqueue calls start it again.
  void Stop();

 private:
  void Run();

  const size_t max_bytes_;
  const ApplyFn apply_;
  std::atomic<size_t> pending_{0};  // items queued or being applied
  std::mutex mu_;
  std::condition_variable work_cv_;   // items arrived, or stop
  std::condition_variable space_cv_;  // bytes went down or all done
  std::deque<Item> queue_;            // GUARDED_BY(mu_)
  size_t bytes_ = 0;                  // GUARDED_BY(mu_)
  uint64_t enqueued_ = 0;             // GUARDED_BY(mu_)
  uint64_t applied_ = 0;              // GUARDED_BY(mu_)
  bool stop_ = false;                 // GUARDED_BY(mu_)
  Status error_;                      // GUARDED_BY(mu_)
  // Whether error_ is set: lets PeekError, asked before every synchronous
  // update, skip the lock when nothing failed.
  std::atomic<bool> failed_{false};
  std::thread thread_;                // GUARDED_BY(mu_)
};

}  // namespace sluice

#endif  // SLUICE_STORE_ASYNC_QUEUE_H_
