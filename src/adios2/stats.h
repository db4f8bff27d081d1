// A block's minimum and maximum (BP5's StatsLevel 1), which readers get
// from BlocksInfo. A plain loop, built with -O3 so that it is vectorised
// (stats.cc): std::minmax_element reads uint8 data at 2–3 GB/s here, the
// loop at 30–50.
#ifndef SLUICE_ADIOS2_STATS_H_
#define SLUICE_ADIOS2_STATS_H_

#include <cstddef>

namespace sluice {
namespace adios2_engine {

// n >= 1. Defined for the arithmetic types ADIOS2 stores.
template <class T>
void MinMaxOf(const T* v, size_t n, T* min, T* max);

}  // namespace adios2_engine
}  // namespace sluice

#endif  // SLUICE_ADIOS2_STATS_H_
