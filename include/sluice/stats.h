// Performance counters of one store.
//
// Every store counts, per operation type, the operations, the bytes of
// values moved and the wall-clock time spent in the store. Reading them is
// cheap and safe at any time from any thread (relaxed atomic loads: a
// snapshot taken while writers run may mix counts from adjacent operations).
// With SLUICE_STATS=1 in the environment, a store prints one line of these
// counters to stderr when it closes.
#ifndef SLUICE_STATS_H_
#define SLUICE_STATS_H_

#include <cstdint>
#include <string>

#include "sluice/export.h"

namespace sluice {

// Part of the C ABI (sluice.h mirrors it as SLUICE_OP_*): append only.
enum class Op : int {
  kPut = 0,
  kGet = 1,
  kAppend = 2,
  kDelete = 3,
  kBarrier = 4,  // write_barrier: bytes are those made durable by it
  kBatch = 5,    // stop_batch and Write(batch): bytes of the batch
  kCount = 6,
};

SLUICE_EXPORT const char* OpName(Op op);

struct OpStats {
  uint64_t ops = 0;
  uint64_t bytes = 0;  // value bytes written, appended or returned
  uint64_t nanos = 0;  // wall-clock time inside the store
};

struct SLUICE_EXPORT StoreStats {
  OpStats op[static_cast<int>(Op::kCount)];

  const OpStats& operator[](Op o) const { return op[static_cast<int>(o)]; }
  // One line: "put=ops/MiB/s get=... barrier=...".
  std::string ToString() const;
};

}  // namespace sluice

#endif  // SLUICE_STATS_H_
