/* The bytes the dataset tests write and check (C and C++): byte `off` of
 * element `el` (a tag: which element, and for a unique one whose) of id
 * `id`, so that a byte in the wrong place, id or element is seen. */
#ifndef SLUICE_TESTS_DATASET_BYTES_H_
#define SLUICE_TESTS_DATASET_BYTES_H_

#include <stdint.h>

static inline unsigned char DatasetByte(int64_t id, int el, uint64_t off) {
  uint64_t x = off * 0x9E3779B97F4A7C15ull ^ (uint64_t)id << 40 ^
               (uint64_t)el << 32;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (unsigned char)x;
}

#endif /* SLUICE_TESTS_DATASET_BYTES_H_ */
