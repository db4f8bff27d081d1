// Drained copies of dataset ids: the layout of an id on a slower data root
// (containers and their index), the plan that places every rank's parts in
// the containers, and the journal that lets an interrupted drain resume.
//
// A drained id lives in DEST/NAME (NAME the context) as:
//   DEST/NAME/data/DATASET.ID/c.<K>     the containers (K = 0 .. count-1)
//   DEST/NAME/commit/DATASET.ID.index  the index: the one file whose
//                                       presence makes the drained id exist
// and, while it drains, DEST/NAME/drain/DATASET.ID/ holds the containers
// being written, one journal per writer (journal.<W>: the store that holds
// parts, a rank's in basic mode, a node's in file_per_node) and one done
// marker per writer (done.<W>): the drain of a writer's parts is the work
// of one process at a time (tier/drain.h). When the last writer is done,
// its drainer renames the drain directory to data/DATASET.ID and writes
// the index.
//
// Placement (MakePlan): each part of the commit record gets a slot in one
// container: the container of its rank (n_n: the rank; n_m: its node, or
// rank / group when a group size is given; n_1: container 0). A slot's
// size is what the record says the part may cover (the sum of its ranges,
// or its size when it lists none); slots follow each other in (rank,
// element, part) order inside a container, each starting at a multiple of
// kSlotAlign: the offsets are an exclusive prefix sum of the slot sizes,
// which every drainer computes alike from the record, so no two drainers
// talk to each other. A part's bytes are packed at the start of its slot:
// the extents its writer's store really holds, in logical order, holes
// left out.
#ifndef SLUICE_TIER_CONTAINER_H_
#define SLUICE_TIER_CONTAINER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dataset/record.h"
#include "sluice/status.h"

namespace sluice {
namespace tier {

enum class Aggregation : int {
  kNN = 0,  // a container per rank
  kNM = 1,  // a container per node, or per group of ranks
  kN1 = 2,  // one container
};
// "n_n", "n_m", "n_1" <-> Aggregation.
const char* AggregationName(Aggregation a);
Status ParseAggregation(const std::string& s, Aggregation* out);

constexpr uint64_t kSlotAlign = 4096;
// A part's packed bytes are checksummed in chunks of this many bytes (the
// last chunk of a part may be shorter).
constexpr uint32_t kChunkBytes = 4u << 20;

struct Slot {
  int container = 0;
  uint64_t offset = 0;  // in the container, a multiple of kSlotAlign
  uint64_t bytes = 0;   // room for the part's packed bytes
};

struct DrainPlan {
  Aggregation aggregation = Aggregation::kNN;
  int group = 0;   // n_m: ranks per container (0: per node)
  int containers = 0;
  int pieces = 0;  // nodes of the job that wrote the id
  // slots[e][p]: part p of element e of the record.
  std::vector<std::vector<Slot>> slots;
  std::vector<uint64_t> container_bytes;  // end of the last slot
  // piece_of_rank[r]: the piece (node) of rank r.
  std::vector<int> piece_of_rank;
};

// The plan of record `rec` (whose node_of_rank must be filled: one entry
// per rank, nodes numbered 0 .. nodes-1). InvalidArgument for a group < 0.
Status MakePlan(const dataset::CommitRecord& rec, Aggregation aggregation,
                int group, DrainPlan* out);

// One extent of a part as drained: logical bytes [offset, offset + length)
// of the element are the part's packed bytes [packed, packed + length).
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t packed = 0;
};

// A drained part: its extents (ascending, disjoint, packed in order with no
// gap: packed of each is the sum of the lengths before it) and the XXH64
// (seed 0) of each kChunkBytes chunk of its packed bytes.
struct DrainedPart {
  std::vector<Extent> extents;
  std::vector<uint64_t> chunk_sums;
  uint64_t packed_bytes() const;
};

// The index of a drained id.
//
// Format, version 1 (little-endian):
//   magic "SLUICEDX" (8) | version u32 | body length u64 | body |
//   XXH64 (seed 0) of everything before it, u64
// body:
//   record length u32 | the id's commit record (EncodeRecord) |
//   aggregation u32 | group u32 | chunk bytes u32 | containers u32 |
//   container sizes u64 each | then for every part of every element, in
//   the record's order: extent count u32 | extents (offset u64, length
//   u64; packed is implied) | chunk count u32 | chunk sums u64 each
struct DrainIndex {
  dataset::CommitRecord record;
  DrainPlan plan;  // rebuilt from record, aggregation and group
  uint32_t chunk_bytes = kChunkBytes;
  std::vector<std::vector<DrainedPart>> parts;  // [element][part]
};
std::string EncodeIndex(const DrainIndex& index);
// Corruption naming `what` for anything but a whole, intact, consistent
// index (extents inside their slot, chunk counts matching the packed
// bytes, slots matching the plan MakePlan gives); NotSupported for a newer
// version.
Status DecodeIndex(std::string_view data, const std::string& what,
                   DrainIndex* out);

// The journal of one piece: a sequence of entries, each saying that bytes
// of a part are durable in their container. Entries of one part come in
// order and each continues where the last ended; a torn or damaged last
// entry (a crash while appending) is ignored, damage before the last is
// Corruption.
//
// Entry (little-endian):
//   magic u32 0x534c4a31 ("SLJ1") | body length u32 | body |
//   XXH64 (seed 0) of magic, length and body, u64
// body:
//   element u32 | part u32 | extent count u32 | extents (offset u64,
//   length u64, packed u64) | first chunk u32 | chunk count u32 | sums u64
//   each | part done u8 (1: the part is complete)
// The extents of an entry follow the part's earlier entries; its chunks
// start at `first chunk` (an entry ends on a chunk boundary unless it
// completes the part).
struct JournalEntry {
  uint32_t element = 0;
  uint32_t part = 0;
  std::vector<Extent> extents;
  uint32_t first_chunk = 0;
  std::vector<uint64_t> chunk_sums;
  bool done = false;
};
std::string EncodeJournalEntry(const JournalEntry& e);
// Every whole entry of `data` in order; *valid_bytes the length of the
// prefix they span (the rest is a torn tail, to be truncated before
// appending). Corruption naming `what` for a damaged entry followed by more
// data that parses.
Status DecodeJournal(std::string_view data, const std::string& what,
                     std::vector<JournalEntry>* out, uint64_t* valid_bytes);

// The state a piece's journal describes: for every part it names, the
// extents and chunk sums durable so far and whether it is complete.
// Corruption when an entry does not continue its part's earlier ones.
struct JournalState {
  // [element][part], sized to the record's elements and parts.
  std::vector<std::vector<DrainedPart>> parts;
  std::vector<std::vector<bool>> done;
};
Status ReplayJournal(const dataset::CommitRecord& rec,
                     const std::vector<JournalEntry>& entries,
                     const std::string& what, JournalState* out);

// File names.
std::string IndexName(const std::string& dataset, int64_t id);  // D.I.index
std::string ContainerName(int container);                       // c.<K>
std::string JournalName(int writer);                            // journal.<W>
std::string DoneName(int writer);                               // done.<W>

}  // namespace tier
}  // namespace sluice

#endif  // SLUICE_TIER_CONTAINER_H_
