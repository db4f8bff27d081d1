// The value log's on-disk format (value_log.h): the header of each file
// and the pointers the tree keeps to the values.
//
// File format, version 1 (little-endian):
//   [0, 4096)  header:  0 8 magic "SLUICEVL", 8 4 version, 12 4 header
//              size (4096), 16 4 file number, 20 4 flags (0; a file with
//              others is refused), 24 8 creation time (ns), zero up to
//              4088, 4088 8 XXH64 (seed 0) of [0, 4088)
//   [4096, …)  values, packed back to back, no per-value header: each is
//              found through its ValuePointer, which carries its length and
//              a checksum of the value mixed with its location (XXH3 of the
//              bytes XOR an XXH64 of file and offset), so a pointer to the
//              wrong place fails.
//
// A ValuePointer, 24 bytes: 0 4 file number, 4 8 offset, 12 4 length,
// 16 8 checksum.
#ifndef SLUICE_STORE_VALUE_LOG_FORMAT_H_
#define SLUICE_STORE_VALUE_LOG_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

constexpr size_t kValueLogHeaderBytes = 4096;
constexpr uint32_t kValueLogFormatVersion = 1;

struct ValuePointer {
  uint32_t file = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint64_t checksum = 0;

  static constexpr size_t kEncodedSize = 24;
  void EncodeTo(char* dst) const;
  static ValuePointer DecodeFrom(const char* src);
};

// What a value's checksum is mixed with: its location.
uint64_t ValueLocationMix(uint32_t file, uint64_t offset);
// The checksum a pointer carries for `value` stored at (file, offset).
uint64_t ValueChecksum(uint32_t file, uint64_t offset, std::string_view value);

// The header of log file number `file` (kValueLogHeaderBytes).
std::string EncodeValueLogHeader(uint32_t file);
// OK if the n bytes at p are the header of log file number `file`;
// `path` names the file in the error.
Status CheckValueLogHeader(const char* p, size_t n, uint32_t file,
                           const std::string& path);

}  // namespace sluice

#endif  // SLUICE_STORE_VALUE_LOG_FORMAT_H_
