#include "adios2/stats.h"

#include <cstdint>

namespace sluice {
namespace adios2_engine {

template <class T>
void MinMaxOf(const T* v, size_t n, T* min, T* max) {
  T lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; ++i) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  *min = lo;
  *max = hi;
}

template void MinMaxOf(const char*, size_t, char*, char*);
template void MinMaxOf(const int8_t*, size_t, int8_t*, int8_t*);
template void MinMaxOf(const int16_t*, size_t, int16_t*, int16_t*);
template void MinMaxOf(const int32_t*, size_t, int32_t*, int32_t*);
template void MinMaxOf(const int64_t*, size_t, int64_t*, int64_t*);
template void MinMaxOf(const uint8_t*, size_t, uint8_t*, uint8_t*);
template void MinMaxOf(const uint16_t*, size_t, uint16_t*, uint16_t*);
template void MinMaxOf(const uint32_t*, size_t, uint32_t*, uint32_t*);
template void MinMaxOf(const uint64_t*, size_t, uint64_t*, uint64_t*);
template void MinMaxOf(const float*, size_t, float*, float*);
template void MinMaxOf(const double*, size_t, double*, double*);
template void MinMaxOf(const long double*, size_t, long double*, long double*);

}  // namespace adios2_engine
}  // namespace sluice
