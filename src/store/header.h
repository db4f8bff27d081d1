// The store header: the file SLUICE at the top of a store directory. It
// tells a Sluice store from any other directory, records the format version
// and the backend, and is checksummed.
//
// Format (little-endian), version 3, 64 bytes (version 1 had zero at 32,
// read as layout lsm; version 3 stores keep a barrier record,
// barrier_record.h, which a writer adds to an older store when it opens
// it):
//   0  8  magic "SLUICEKV"
//   8  4  format version
//  12  4  header size in bytes (64); the checksum is always its last 8 bytes
//  16  4  backend (1 = RocksDB, 2 = LevelDB)
//  20  4  flags (0; a store with any other flags is refused)
//  24  8  creation time, nanoseconds since the epoch
//  32  4  layout (1 = lsm, 2 = vlog)
//  36 20  zero
//  56  8  XXH64 (seed 0) of bytes [0, header size - 8)
// A reader checks the magic, then the checksum over the size the header
// declares (so a newer, longer header is still verified), then the version.
#ifndef SLUICE_STORE_HEADER_H_
#define SLUICE_STORE_HEADER_H_

#include <cstdint>
#include <string>

#include "sluice/options.h"
#include "sluice/status.h"

namespace sluice {

constexpr uint32_t kStoreFormatVersion = 3;
// The first version whose stores have a barrier record.
constexpr uint32_t kBarrierRecordVersion = 3;
constexpr const char kHeaderFileName[] = "SLUICE";

struct StoreHeader {
  uint32_t version = kStoreFormatVersion;
  BackendKind backend = BackendKind::kRocksDB;
  StoreLayout layout = StoreLayout::kLsm;
  uint32_t flags = 0;
  uint64_t created_nanos = 0;

  std::string Encode() const;
  // `path` is only used in error messages.
  static Status Decode(const std::string& data, const std::string& path,
                       StoreHeader* out);
};

Status ReadStoreHeader(const std::string& dir, StoreHeader* header);
Status WriteStoreHeader(const std::string& dir, const StoreHeader& header);

}  // namespace sluice

#endif  // SLUICE_STORE_HEADER_H_
