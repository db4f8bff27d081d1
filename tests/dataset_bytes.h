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

#ifdef __cplusplus
#include <string>

/* n bytes from `off` of element `el` of id `id`. */
inline std::string DatasetBytes(int64_t id, int el, uint64_t off, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>(DatasetByte(id, el, off + i));
  }
  return s;
}
#endif

#endif /* SLUICE_TESTS_DATASET_BYTES_H_ */
