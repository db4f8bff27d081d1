#include "store/async_queue.h"

namespace sluice {

namespace {
size_t Size(const AsyncQueue::Item& item) {
  return item.key.size() + item.value.size() +
         (item.batch ? item.batch->bytes() : 0);
}
}  // namespace

void AsyncQueue::Enqueue(Item item) {
  const size_t size = Size(item);
  std::unique_lock<std::mutex> lock(mu_);
  // Block while full; an item larger than the limit waits for an empty queue.
  space_cv_.wait(lock, [&] {
    return bytes_ == 0 || bytes_ + size <= max_bytes_;
  });
  if (!thread_.joinable()) {
    stop_ = false;
    thread_ = std::thread(&AsyncQueue::Run, this);
  }
  bytes_ += size;
  ++enqueued_;
  pending_.fetch_add(1, std::memory_order_release);
  queue_.push_back(std::move(item));
  work_cv_.notify_one();
}

void AsyncQueue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    Item item = std::move(queue_.front());
    queue_.pop_front();
    // After a failed update the ones queued behind it are dropped, until
    // the error is taken: what the store holds stays a prefix of what was
    // issued, as after a crash.
    const bool failed = !error_.ok();
    lock.unlock();
    Status s = failed ? Status::OK() : apply_(item);
    lock.lock();
    if (!s.ok() && error_.ok()) {
      error_ = s;
      failed_.store(true, std::memory_order_release);
    }
    bytes_ -= Size(item);
    ++applied_;
    pending_.fetch_sub(1, std::memory_order_release);
    space_cv_.notify_all();
  }
}

void AsyncQueue::Drain() {
  if (pending_.load(std::memory_order_acquire) == 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = enqueued_;
  space_cv_.wait(lock, [&] { return applied_ >= target; });
}

Status AsyncQueue::TakeError() {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = std::move(error_);
  error_ = Status::OK();
  failed_.store(false, std::memory_order_release);
  return s;
}

Status AsyncQueue::PeekError() {
  if (!failed_.load(std::memory_order_acquire)) return Status::OK();
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void AsyncQueue::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    work_cv_.notify_all();
    t = std::move(thread_);
  }
  if (t.joinable()) t.join();
}

}  // namespace sluice
