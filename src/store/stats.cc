#include "store/stats.h"

#include <cstdio>

namespace sluice {

const char* OpName(Op op) {
  switch (op) {
    case Op::kPut: return "put";
    case Op::kGet: return "get";
    case Op::kAppend: return "append";
    case Op::kDelete: return "del";
    case Op::kBarrier: return "barrier";
    case Op::kBatch: return "batch";
    case Op::kCount: break;
  }
  return "unknown";
}

StoreStats Counters::Snapshot() const {
  StoreStats out;
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    out.op[i].ops = slots_[i].ops.load(std::memory_order_relaxed);
    out.op[i].bytes = slots_[i].bytes.load(std::memory_order_relaxed);
    out.op[i].nanos = slots_[i].nanos.load(std::memory_order_relaxed);
  }
  return out;
}

std::string StoreStats::ToString() const {
  std::string line;
  char buf[160];
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const OpStats& s = op[i];
    double secs = s.nanos / 1e9;
    double mib = s.bytes / 1048576.0;
    snprintf(buf, sizeof buf, "%s%s=%llu ops/%.1f MiB/%.3f s", i ? " " : "",
             OpName(static_cast<Op>(i)), static_cast<unsigned long long>(s.ops),
             mib, secs);
    line += buf;
    if (secs > 0 && s.bytes > 0) {
      snprintf(buf, sizeof buf, "/%.0f MiB/s", mib / secs);
      line += buf;
    }
  }
  return line;
}

}  // namespace sluice
