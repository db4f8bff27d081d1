// The values adios2_writer writes and adios2_reader expects.
#ifndef SLUICE_TESTS_ADIOS2_TEST_VALUES_H_
#define SLUICE_TESTS_ADIOS2_TEST_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice_adios2_test {

constexpr size_t kPerRank = 100;  // temperature values per rank
constexpr size_t kRows = 8;       // cells rows per rank
constexpr size_t kCols = 6;

inline double Temperature(int step, size_t i) {
  return step * 1e6 + static_cast<double>(i) + 0.25;
}
inline int32_t Cell(int step, size_t row, size_t col) {
  return static_cast<int32_t>(step * 100000 + row * kCols + col);
}
inline int32_t RankId(int step, int rank) { return rank * 1000 + step; }
inline double Time(int step) { return step * 0.5; }
// particles: a local array of 5 + rank floats per rank.
inline size_t Particles(int rank) { return 5 + static_cast<size_t>(rank); }
inline float Particle(int step, int rank, size_t i) {
  return static_cast<float>(step * 1000 + rank * 100) + static_cast<float>(i) * 0.5f;
}
inline std::string Label(int step) { return "step-" + std::to_string(step); }

}  // namespace sluice_adios2_test

#endif  // SLUICE_TESTS_ADIOS2_TEST_VALUES_H_
