// The data pattern every writer writes and every reader verifies.
//
// The expected content of a file depends only on (seed, file id, offset):
// each 8-byte word at a file offset that is a multiple of 512 holds a stamp
// mixed from the offset, and every other word repeats a 512-byte base
// pattern. So a flipped byte, a block at the wrong offset and another rank's
// file all fail the check, while filling a reused buffer costs one store
// per 512 bytes. Offsets and lengths are multiples of 8.
#ifndef SLUICE_BENCH_IOR_PATTERN_H_
#define SLUICE_BENCH_IOR_PATTERN_H_

#include <cstdint>
#include <string>

namespace sluice {
namespace bench {

class Pattern {
 public:
  Pattern(uint64_t seed, uint64_t file_id);

  // Fills buf[0, len) with the content of file offset `offset`.
  void Fill(char* buf, uint64_t len, uint64_t offset) const;
  // Checks buf[0, len) against the content of `offset`. On a mismatch
  // returns false and sets *bad_offset to the file offset of the first bad
  // byte and *bad_bytes to the number of bad bytes in the range.
  bool Verify(const char* buf, uint64_t len, uint64_t offset,
              uint64_t* bad_offset, uint64_t* bad_bytes) const;

 private:
  uint64_t Word(uint64_t offset) const;
  uint64_t seed_;
  uint64_t base_[64];  // 512 bytes
  // Expected bytes for the fast check (Verify runs inside the timed read
  // loop, so it must cost far less than the I/O it checks).
  mutable std::string expected_;
};

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_PATTERN_H_
