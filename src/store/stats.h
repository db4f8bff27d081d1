// Lock-free counters behind StoreStats.
#ifndef SLUICE_STORE_STATS_H_
#define SLUICE_STORE_STATS_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "sluice/stats.h"

namespace sluice {

class Counters {
 public:
  void Record(Op op, uint64_t bytes, uint64_t nanos) {
    Slot& s = slots_[static_cast<int>(op)];
    s.ops.fetch_add(1, std::memory_order_relaxed);
    s.bytes.fetch_add(bytes, std::memory_order_relaxed);
    s.nanos.fetch_add(nanos, std::memory_order_relaxed);
  }
  StoreStats Snapshot() const;

 private:
  struct Slot {
    std::atomic<uint64_t> ops{0}, bytes{0}, nanos{0};
  };
  Slot slots_[static_cast<int>(Op::kCount)];
};

// Measures from construction to Elapsed().
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  uint64_t ElapsedNanos() const {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - start_)
            .count());
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sluice

#endif  // SLUICE_STORE_STATS_H_
