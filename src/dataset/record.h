// The commit record of a dataset id: the one file whose presence makes the
// id exist (dataset.h). Written by rank 0 once every rank's data is
// durable, through a temporary name, fsync, rename and a directory fsync;
// read by rank 0 and broadcast when an id is opened.
//
// Format, version 3 (little-endian; version 1 lacks a part's rank, versions
// 1 and 2 the nodes):
//   magic "SLUICEDS" (8) | version u32 | body length u64 | body |
//   XXH64 (seed 0) of everything before it, u64
// body:
//   dataset str | id i64 | ranks u32 | writers u32 | mode u32 |
//   commit time ns i64 | nodes u32 | node of each rank u32 (ranks of
//   them, each < nodes) | element count u32 | elements
// element:
//   name str | kind u32 (0 shared, 1 unique) | rank i32 (unique: owner) |
//   size u64 | part count u32 | parts
// part (one rank's share of the element, in one writer's store):
//   writer u32 (the store) | rank u32 (whose part: the file's name in the
//   store, see PartPath) | size u64 (its end) | checksum u64 (its file
//   checksum) |
//   range count u32 | ranges (begin u64, end u64), ascending, disjoint;
//   no ranges: anywhere below size (the writer wrote too many pieces to
//   list)
// str: length u32 then the bytes.
#ifndef SLUICE_DATASET_RECORD_H_
#define SLUICE_DATASET_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/dataset.h"
#include "sluice/status.h"

namespace sluice {
namespace dataset {

constexpr uint32_t kRecordVersion = 3;

// Dataset modes (the variable dataset_mode): where a rank's parts go.
enum RecordMode : int {
  kModeBasic = 0,        // each rank's own store
  kModeFilePerNode = 1,  // the store of its node's leader
};
// A writer's ranges beyond this many are kept as one span.
constexpr size_t kMaxRanges = 64;

struct PartRecord {
  int writer = 0;  // the store: writer.<writer>
  int rank = 0;    // who wrote it
  uint64_t size = 0;
  uint64_t checksum = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // empty: [0, size)
};

struct ElementRecord {
  std::string name;
  ElementKind kind = ElementKind::kShared;
  int rank = -1;
  uint64_t size = 0;
  std::vector<PartRecord> parts;
};

struct CommitRecord {
  std::string dataset;
  int64_t id = 0;
  int ranks = 0;
  int writers = 0;
  int mode = kModeBasic;
  int64_t commit_time_ns = 0;
  // The node (0 .. nodes - 1) of each rank; a record of version 1 or 2
  // reads as one node.
  int nodes = 1;
  std::vector<int> node_of_rank;
  std::vector<ElementRecord> elements;

  uint64_t bytes() const;
  const ElementRecord* Find(const std::string& name, ElementKind kind,
                            int rank) const;
};

// Where, in its store, rank `rank`'s part of element `name` of the id in
// store directory `dir` (/DATASET/ID) lies: dir/shared/NAME (basic: the
// store is the rank's own) or dir/shared.RANK/NAME (file_per_node: the
// node's ranks share the store) for a shared element, dir/rank.RANK/NAME
// for a unique one.
std::string PartPath(const std::string& dir, int mode, ElementKind kind,
                     const std::string& name, int rank);

std::string EncodeRecord(const CommitRecord& r);
// Corruption naming `what` (the file) for anything but a whole, intact
// record; NotSupported for a newer version.
Status DecodeRecord(std::string_view data, const std::string& what,
                    CommitRecord* r);

// The pieces of one rank's share of the index (EncodeParts: one rank's
// elements, for the gather at commit).
std::string EncodeElements(const std::vector<ElementRecord>& elements);
Status DecodeElements(std::string_view data, std::vector<ElementRecord>* out);
// Merges the ranks' elements: parts of one shared element join under one
// entry (its size the largest part's end), in name order.
std::vector<ElementRecord> MergeElements(
    const std::vector<std::vector<ElementRecord>>& ranks);

// File names in the commit directory: DATASET.ID (a record),
// DATASET.ID.reclaimed (an id whose data was found uncommitted and removed).
std::string RecordName(const std::string& dataset, int64_t id);
std::string ReclaimedName(const std::string& dataset, int64_t id);
// Parses a name of the commit directory; false for anything else (a
// temporary file).
bool ParseRecordName(const std::string& name, std::string* dataset,
                     int64_t* id, bool* reclaimed);

// Letters, digits, '.', '_', '-'; not empty, not starting with '.', at most
// 128 bytes. `what` names the thing in the message ("dataset name").
Status CheckName(const std::string& name, const char* what);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_RECORD_H_
