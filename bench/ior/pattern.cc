#include "ior/pattern.h"

#include <algorithm>
#include <cstring>

namespace sluice {
namespace bench {

namespace {
uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

Pattern::Pattern(uint64_t seed, uint64_t file_id)
    : seed_(Mix(seed) ^ Mix(file_id + 0x51ce)) {
  for (int i = 0; i < 64; ++i) base_[i] = Mix(seed_ + i);
}

uint64_t Pattern::Word(uint64_t offset) const {
  return offset % 512 == 0 ? Mix(seed_ ^ offset) : base_[(offset % 512) / 8];
}

void Pattern::Fill(char* buf, uint64_t len, uint64_t offset) const {
  uint64_t* w = reinterpret_cast<uint64_t*>(buf);
  const uint64_t words = len / 8;
  if (offset % 512 == 0 && len % 512 == 0) {
    // Aligned: whole copies of the base, then the stamps.
    for (uint64_t i = 0; i < words; i += 64) memcpy(w + i, base_, 512);
    for (uint64_t i = 0; i < words; i += 64) {
      w[i] = Mix(seed_ ^ (offset + i * 8));
    }
    return;
  }
  for (uint64_t i = 0; i < words; ++i) w[i] = Word(offset + i * 8);
}

bool Pattern::Verify(const char* buf, uint64_t len, uint64_t offset,
                     uint64_t* bad_offset, uint64_t* bad_bytes) const {
  // Fast path: build what should be there (a copy of the base and a stamp
  // per 512 bytes) and compare; only a mismatch pays for the exact scan.
  constexpr uint64_t kChunk = 64u << 10;
  if (expected_.size() < kChunk) expected_.resize(kChunk);
  bool same = true;
  for (uint64_t i = 0; same && i < len; i += kChunk) {
    const uint64_t n = std::min(kChunk, len - i);
    Fill(&expected_[0], n, offset + i);
    same = memcmp(buf + i, expected_.data(), n) == 0;
  }
  if (same) return true;
  const uint64_t words = len / 8;
  uint64_t first = 0, bad = 0;
  for (uint64_t i = 0; i < words; ++i) {
    uint64_t got;
    memcpy(&got, buf + i * 8, 8);
    const uint64_t want = Word(offset + i * 8);
    if (got == want) continue;
    for (int b = 0; b < 8; ++b) {
      if (((got ^ want) >> (8 * b)) & 0xff) {
        if (bad == 0) first = offset + i * 8 + b;
        ++bad;
      }
    }
  }
  if (bad == 0) return true;
  *bad_offset = first;
  *bad_bytes = bad;
  return false;
}

}  // namespace bench
}  // namespace sluice
