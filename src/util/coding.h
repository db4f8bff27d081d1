// Little-endian fixed-width integer encoding for on-disk formats.
#ifndef SLUICE_UTIL_CODING_H_
#define SLUICE_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice {

inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

inline void PutFixed32(std::string* s, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  s->append(b, 4);
}
inline void PutFixed64(std::string* s, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  s->append(b, 8);
}

// Reads fields off the front of a byte string; any read past its end makes
// it fail, and every later read too (bad), returning zeros.
struct ByteReader {
  std::string_view in;
  bool bad = false;
  bool Take(size_t n, const char** p) {
    if (bad || in.size() < n) {
      bad = true;
      return false;
    }
    *p = in.data();
    in.remove_prefix(n);
    return true;
  }
  uint8_t U8() {
    const char* p;
    return Take(1, &p) ? static_cast<uint8_t>(*p) : 0;
  }
  uint32_t U32() {
    const char* p;
    return Take(4, &p) ? DecodeFixed32(p) : 0;
  }
  uint64_t U64() {
    const char* p;
    return Take(8, &p) ? DecodeFixed64(p) : 0;
  }
  // A length (u32) and that many bytes.
  std::string Str() {
    const uint32_t n = U32();
    const char* p;
    return Take(n, &p) ? std::string(p, n) : std::string();
  }
};

}  // namespace sluice

#endif  // SLUICE_UTIL_CODING_H_
