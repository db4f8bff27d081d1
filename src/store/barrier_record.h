// The barrier record: how a store knows what its last barrier covered, so
// that a backend that comes back with less (a truncated or deleted RocksDB
// MANIFEST, a LevelDB log cut short) is Corruption, never a store silently
// rolled back to an older state.
//
// Every barrier (or close) that follows changes writes into the tree the
// reserved key kBarrierKey holding the barrier's number, makes the tree
// durable, then writes the same number to the file SLUICE.barrier beside
// the backend. An opener reads the file before it opens the tree, then the
// key: the tree must hold at least the file's number (more is a crash
// between the two writes). The record also carries the store's layout and
// creation time, so a header that lies about the layout, or a record file
// from another store, is caught: in layout vlog the tree keeps the record
// behind a one-byte tag, so read through the wrong layout it does not
// decode.
//
// Record format, version 1 (little-endian), 64 bytes:
//   0  8  magic "SLUICEBR"
//   8  4  version (1)
//  12  4  layout id (as in the store header)
//  16  8  barrier number (0: created, no barrier with changes yet)
//  24  8  the store's creation time (ns), as in its header
//  32 24  zero (a record with any of them set is refused)
//  56  8  XXH64 (seed 0) of [0, 56)
// The file is 8192 bytes: two slots of 4096 (each its own page and
// physical sector), barrier n in slot n % 2, written in place (pwrite,
// fdatasync); a torn write spoils one slot and the other still holds the
// barrier before it. The tree's value is one
// record.
#ifndef SLUICE_STORE_BARRIER_RECORD_H_
#define SLUICE_STORE_BARRIER_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

constexpr const char kBarrierFileName[] = "SLUICE.barrier";
// The one key the K/V API reserves (refused as InvalidArgument, never
// listed by an iterator).
constexpr std::string_view kBarrierKey("\0sluice:barrier", 15);

struct BarrierRecord {
  uint64_t number = 0;
  uint32_t layout = 0;
  uint64_t created_nanos = 0;

  std::string Encode() const;
  // `what` names the record in the message of a Corruption.
  static Status Decode(std::string_view data, const std::string& what,
                       BarrierRecord* out);
};

// The record file of one store. A writer keeps it open and writes each
// barrier's number; readers Read it once.
class BarrierFile {
 public:
  BarrierFile() = default;
  ~BarrierFile();
  BarrierFile(const BarrierFile&) = delete;
  BarrierFile& operator=(const BarrierFile&) = delete;

  // Writes a new file in `dir` holding `record` in both slots (through a
  // temporary, fsync, rename; the caller syncs the directory).
  static Status Create(const std::string& dir, const BarrierRecord& record);
  // The newest valid slot of the file in `dir`. NotFound when it is
  // missing, Corruption when no slot is valid.
  static Status Read(const std::string& dir, BarrierRecord* record);

  // Opens the file in `dir` for Write.
  Status OpenForWriting(const std::string& dir);
  // Writes `record` to its slot and makes it durable.
  Status Write(const BarrierRecord& record);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace sluice

#endif  // SLUICE_STORE_BARRIER_RECORD_H_
