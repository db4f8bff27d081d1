// The interposer's settings, read once at its start through the
// configuration (sluice/config.h, docs/CONFIG.md): the environment, and the
// [global] lines of the file SLUICE_CONFIG_FILE names. Its own variables
// are mount (SLUICE_MOUNT), root (SLUICE_ROOT: the first of data_roots),
// writer, merged_reads and lock_wait; the store options and extent_bytes
// (and options, their list) tune its file system over its own defaults.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>

#include "preload/state.h"
#include "sluice/config.h"

namespace sluice {
namespace preload {
namespace {

// The MPI rank the launcher gives, or null.
const char* RankVar() {
  const char* r = nullptr;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (!r) r = getenv(v);
  }
  return r;
}

// The file system's options when the configuration says nothing: tuned
// for unmodified programs. `numbered`: the process has a writer number.
FsOptions InterposerDefaults(bool numbered) {
  FsOptions o;
  // A shell's tools expect the page cache on reads (a file read twice is
  // read from memory the second time). A rank reads its checkpoint once, at
  // restart: O_DIRECT, through the value log's read-ahead windows, spares
  // the cache's copy (1 GiB in 16 KiB reads at 1 rank: 1203-1499 MiB/s
  // through the page cache, 2144-2170 with O_DIRECT).
  o.store.vlog_direct_reads = numbered;
  // Extents of 1 MiB, the st_blksize it reports (cp and cat then move 1 MiB
  // per call): an extent then stays in cache between the copy into the
  // write-combining buffer, its checksum and the value log's copy, and
  // between the read-ahead and the caller's copy out. A stored cat of 1 GiB
  // took half the user CPU of 4 MiB extents (0.15 s against 0.31 s).
  o.extent_bytes = 1u << 20;
  // Up to 8 write buffers (16 MiB each; the last six only for big files):
  // a cp reads its source between writes, and with two buffers the device
  // waited through those reads (stored cp of 1 GiB: 3.4-3.9 s; with a lead
  // of 64-128 MiB, 1.6-3.2 s, plain 2.3-3.1 s).
  o.store.vlog_write_buffers = 8;
  // A process without a writer number (a shell's tools) reads stores
  // another process is writing, as that writer last closed its files:
  // `cat a | tee b` in one store. Ranks (and merged_reads restarts) wait
  // for the writers instead, to see complete checkpoints.
  o.store.snapshot_reads = !numbered;
  return o;
}

bool ParseConfigInner() {
  Config config;
  Status s = Config::Load("", "", environ, &config);
  if (!s.ok()) {
    // Nothing of the configuration can be trusted. The mount is the one
    // SLUICE_MOUNT names, if it does, so that calls under it fail rather
    // than land in the plain directory; one set only in the file is not
    // known, and everything passes through (said on stderr all the same).
    S->cfg.error = "configuration: " + s.message();
    const char* mount = getenv("SLUICE_MOUNT");
    std::string prefix = mount ? mount : "";
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    std::string norm;
    if (!prefix.empty() && prefix[0] == '/' && prefix != "/" &&
        NormalizePath(prefix, &norm).ok()) {
      S->cfg.prefix = norm;
    }
    return true;
  }
  std::string prefix = config.Get("mount").value;
  if (prefix.empty()) return false;
  // The configuration checked it: absolute, not "/".
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  std::string norm;
  if (!NormalizePath(prefix, &norm).ok()) norm = prefix;
  S->cfg.prefix = norm;
  const ConfigValue root = config.Get("root");
  if (root.value.empty() || root.value[0] != '/') {
    S->cfg.error = "SLUICE_MOUNT is set but the data root (SLUICE_ROOT, the "
                   "first directory of data_roots) is not an absolute "
                   "directory: '" + root.value + "' (" + root.SourceText() +
                   ")";
    return true;
  }
  S->cfg.root = root.value;
  std::string nroot;
  if (NormalizePath(S->cfg.root, &nroot).ok() &&
      (nroot == norm || nroot.compare(0, norm.size() + 1, norm + "/") == 0)) {
    S->cfg.error = "the data root (SLUICE_ROOT) " + S->cfg.root +
                   " lies inside SLUICE_MOUNT " + norm;
    return true;
  }
  // The writer number: SLUICE_WRITER, else the MPI rank, else none.
  int writer = atoi(config.Get("writer").value.c_str());  // checked
  const char* rank = writer < 0 ? RankVar() : nullptr;
  if (rank) {
    char* end;
    long v = strtol(rank, &end, 10);
    if (!*rank || *end || v < 0 || v > 99999999) {
      S->cfg.error = "the MPI rank '" + std::string(rank) +
                     "' is not a writer number (set SLUICE_WRITER)";
      return true;
    }
    writer = static_cast<int>(v);
  }
  const bool numbered = writer >= 0;
  s = config.ToFsOptions(FsOptions(), InterposerDefaults(numbered),
                         &S->cfg.options);
  if (!s.ok()) {
    S->cfg.error = "configuration: " + s.message();
    return true;
  }
  if (numbered) {
    S->cfg.writer = writer;
    // merged_reads: a process with a writer number still reads through
    // the merged view until its first change, as a restart does when every
    // writer has closed (N-to-M restart reads other ranks' data).
    bool merged = false;
    Config::ParseBool(config.Get("merged_reads").value, &merged);  // checked
    S->cfg.always_writer = !merged;
  }
  double wait = 60;
  Config::ParseDuration(config.Get("lock_wait").value, &wait);  // checked
  // Waits past a billion seconds are a billion (the deadline's arithmetic
  // must not overflow).
  S->cfg.lock_wait = std::min(wait, 1e9);
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
