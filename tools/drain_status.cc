// `sluice drain --status`: where every id of a context stands between its
// data root and the next, read without changing anything (tier/status.h).
#include <cstdio>
#include <string>
#include <vector>

#include "drain_targets.h"
#include "tier/status.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

namespace {

const char* State(const tier::IdStatus& st) {
  if (st.durable) return st.on_source ? "durable" : "destination_only";
  if (st.staged) return st.on_source ? "draining" : "staged_only";
  return "source_only";
}

// Bytes durable on the destination (a drain's journals say so far).
uint64_t DurableBytes(const tier::IdStatus& st) {
  if (st.durable) return st.bytes;
  uint64_t n = 0;
  for (const auto& w : st.writers) n += w.bytes;
  return n;
}

std::string Where(const tier::IdStatus& st) {
  const std::string state = State(st);
  if (state == "durable") {
    return "durable on the destination (and on the source)";
  }
  if (state == "destination_only") return "only on the destination";
  if (state == "source_only") return "on the source only (not drained)";
  if (state == "staged_only") {
    return "a drain directory on the destination, but no record on the "
           "source";
  }
  std::string out = "draining: " + std::to_string(DurableBytes(st)) + " of " +
                    std::to_string(st.bytes) + " bytes durable";
  for (const auto& w : st.writers) {
    out += "; writer " + std::to_string(w.writer) + " " +
           std::to_string(w.bytes) + "/" + std::to_string(w.total);
    if (w.done) out += " done";
    if (w.holder_pid > 0) {
      out += " (draining now: pid " + std::to_string(w.holder_pid) + ")";
    }
  }
  return out;
}

}  // namespace

int DrainStatusCmd(const std::vector<DrainTarget>& targets, bool json) {
  int rc = 0;
  if (json) printf("{\"contexts\": [");
  bool first_target = true;
  for (const DrainTarget& t : targets) {
    std::vector<tier::IdStatus> ids;
    Status s = tier::DrainStatus(t.src, t.dst, &ids);
    if (!s.ok()) {
      rc = Fail("drain", s);
      continue;
    }
    if (json) {
      printf("%s\n {\"context\": %s, \"source\": %s, \"destination\": %s, "
             "\"ids\": [",
             first_target ? "" : ",", Json(t.name).c_str(), Json(t.src).c_str(),
             Json(t.dst).c_str());
    } else {
      printf("context %s: %s -> %s\n%-24s %14s  %s\n",
             Printable(t.name).c_str(), Printable(t.src).c_str(),
             Printable(t.dst).c_str(), "dataset.id", "bytes", "where");
    }
    first_target = false;
    bool first = true;
    for (const tier::IdStatus& st : ids) {
      const std::string label =
          st.name.dataset + "." + std::to_string(st.name.id);
      if (!st.error.ok()) rc = Fail("drain", st.error);
      if (json) {
        std::string writers;
        for (const auto& w : st.writers) {
          writers += std::string(writers.empty() ? "" : ", ") +
                     "{\"writer\": " + std::to_string(w.writer) +
                     ", \"bytes\": " + std::to_string(w.bytes) +
                     ", \"total\": " + std::to_string(w.total) +
                     ", \"done\": " + (w.done ? "true" : "false") +
                     ", \"holder_pid\": " +
                     (w.holder_pid > 0 ? std::to_string(w.holder_pid)
                                       : std::string("null")) +
                     "}";
        }
        printf("%s\n  {\"dataset\": %s, \"id\": %lld, \"state\": \"%s\", "
               "\"on_source\": %s, \"durable\": %s, \"staged\": %s, "
               "\"bytes\": %llu, \"bytes_durable\": %llu, \"writers\": [%s], "
               "\"error\": %s}",
               first ? "" : ",", Json(st.name.dataset).c_str(),
               (long long)st.name.id, State(st),
               st.on_source ? "true" : "false", st.durable ? "true" : "false",
               st.staged ? "true" : "false", (unsigned long long)st.bytes,
               (unsigned long long)DurableBytes(st), writers.c_str(),
               st.error.ok() ? "null" : Json(st.error.ToString()).c_str());
      } else {
        printf("%-24s %14llu  %s\n", Printable(label).c_str(),
               (unsigned long long)st.bytes,
               st.error.ok() ? Where(st).c_str()
                             : ("unreadable: " + st.error.ToString()).c_str());
      }
      first = false;
    }
    if (json) printf("\n ]}");
  }
  if (json) printf("\n]}\n");
  if (fflush(stdout) != 0) return 1;
  return rc;
}

}  // namespace tool
}  // namespace sluice
