// The interposer's settings, read once at start from the environment.
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "preload/state.h"

namespace sluice {
namespace preload {
namespace {

// Seconds written as digits with at most one '.' ("60", "0.5"); nothing
// else (no sign, exponent, suffix or blank). Read by hand: strtod would
// follow the program's locale. Waits past a billion seconds are a billion
// (the deadline's arithmetic must not overflow).
bool ParseSeconds(const char* text, double* out) {
  double v = 0, scale = 1;
  bool digits = false, dot = false;
  for (const char* p = text; *p; ++p) {
    if (*p >= '0' && *p <= '9') {
      digits = true;
      if (dot) {
        scale /= 10;
        v += (*p - '0') * scale;
      } else {
        v = v * 10 + (*p - '0');
      }
    } else if (*p == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!digits) return false;
  *out = std::min(v, 1e9);
  return true;
}

// SLUICE_WRITER, else the MPI rank; null when neither is set.
const char* WriterNumberVar() {
  const char* w = getenv("SLUICE_WRITER");
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (!w) w = getenv(v);
  }
  return w;
}

bool ParseConfigInner() {
  const char* mount = getenv("SLUICE_MOUNT");
  if (!mount || !*mount) return false;
  std::string prefix = mount;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix[0] != '/' || prefix == "/") {
    S->cfg.error = "SLUICE_MOUNT must be an absolute directory other than /, "
                  "not '" + std::string(mount) + "'";
    return true;
  }
  std::string norm;
  if (!NormalizePath(prefix, &norm).ok()) norm = prefix;
  S->cfg.prefix = norm;
  const char* root = getenv("SLUICE_ROOT");
  if (!root || !*root || root[0] != '/') {
    S->cfg.error = "SLUICE_MOUNT is set but SLUICE_ROOT (an absolute directory "
                  "that holds the stores) is not";
    return true;
  }
  S->cfg.root = root;
  std::string nroot;
  if (NormalizePath(S->cfg.root, &nroot).ok() &&
      (nroot == norm || nroot.compare(0, norm.size() + 1, norm + "/") == 0)) {
    S->cfg.error = "SLUICE_ROOT " + S->cfg.root + " lies inside SLUICE_MOUNT " +
                  norm;
    return true;
  }
  // Unmodified programs expect the page cache on reads (a file read twice
  // is read from memory the second time); SLUICE_OPTIONS may say otherwise.
  S->cfg.options.store.vlog_direct_reads = false;
  // Extents of 1 MiB, the st_blksize it reports (cp and cat then move 1 MiB
  // per call): an extent then stays in cache between the copy into the
  // write-combining buffer, its checksum and the value log's copy, and
  // between the read-ahead and the caller's copy out. A stored cat of 1 GiB
  // took half the user CPU of 4 MiB extents (0.15 s against 0.31 s).
  S->cfg.options.extent_bytes = 1u << 20;
  // Up to 8 write buffers (16 MiB each; the last six only for big files):
  // a cp reads its source between writes, and with two buffers the device
  // waited through those reads (stored cp of 1 GiB: 3.4-3.9 s; with a lead
  // of 64-128 MiB, 1.6-3.2 s, plain 2.3-3.1 s).
  S->cfg.options.store.vlog_write_buffers = 8;
  // A process without a writer number (a shell's tools) reads stores
  // another process is writing, as that writer last closed its files:
  // `cat a | tee b` in one store. Ranks (and SLUICE_MERGED_READS restarts)
  // wait for the writers instead, to see complete checkpoints.
  S->cfg.options.store.snapshot_reads = WriterNumberVar() == nullptr;
  if (const char* o = getenv("SLUICE_OPTIONS")) {
    Status s = S->cfg.options.SetAll(o);
    if (!s.ok()) {
      S->cfg.error = "SLUICE_OPTIONS: " + s.message();
      return true;
    }
  }
  if (const char* e = getenv("SLUICE_EXTENT_BYTES")) {
    Status s = S->cfg.options.Set("extent_bytes", e);
    if (!s.ok()) {
      S->cfg.error = "SLUICE_EXTENT_BYTES: " + s.message();
      return true;
    }
  }
  const char* w = WriterNumberVar();
  if (w) {
    char* end;
    long v = strtol(w, &end, 10);
    if (*end || v < 0 || v > 99999999) {
      S->cfg.error = "SLUICE_WRITER (or the MPI rank) '" + std::string(w) +
                    "' is not a writer number";
      return true;
    }
    S->cfg.writer = static_cast<int>(v);
    // SLUICE_MERGED_READS=1: a process with a writer number still reads
    // through the merged view until its first change, as a restart does
    // when every writer has closed (N-to-M restart reads other ranks' data).
    const char* m = getenv("SLUICE_MERGED_READS");
    S->cfg.always_writer = !(m && !strcmp(m, "1"));
  }
  if (const char* t = getenv("SLUICE_LOCK_WAIT")) {
    if (!ParseSeconds(t, &S->cfg.lock_wait)) {
      S->cfg.error = "SLUICE_LOCK_WAIT: '" + std::string(t) +
                     "' is not a number of seconds (0 or more, e.g. 60 or "
                     "0.5)";
      return true;
    }
  }
  S->cfg.active = true;
  return true;
}

}  // namespace

bool ParseConfig() {
  if (!ParseConfigInner()) return false;
  if (!S->cfg.error.empty() && !S->cfg.prefix.empty()) S->cfg.active = true;
  return true;
}

const std::string& MountPrefix() { return S->cfg.prefix; }
const std::string& DataRoot() { return S->cfg.root; }
bool Active() { return S != nullptr && S->cfg.active && S->cfg.error.empty(); }

}  // namespace preload
}  // namespace sluice
