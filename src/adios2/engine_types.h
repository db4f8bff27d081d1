// ADIOS2's type names to C++ types, for the engine's stored blocks and
// attributes.
#ifndef SLUICE_ADIOS2_ENGINE_TYPES_H_
#define SLUICE_ADIOS2_ENGINE_TYPES_H_

#include <adios2/common/ADIOSMacros.h>
#include <adios2/cxx/Types.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__GNUC__)
#define SLUICE_ADIOS2_EXPORT __attribute__((visibility("default")))
#else
#define SLUICE_ADIOS2_EXPORT
#endif

namespace sluice {
namespace adios2_engine {

// Calls f(static_cast<T*>(nullptr)) for the type T that ADIOS2 names
// `type` (adios2::GetType<T>()); false when no type has that name.
template <class F>
bool ForType(const std::string& type, F&& f) {
#define SLUICE_TRY(T)                      \
  if (type == adios2::GetType<T>()) {      \
    f(static_cast<T*>(nullptr));           \
    return true;                           \
  }
  ADIOS2_FOREACH_STDTYPE_1ARG(SLUICE_TRY)
#undef SLUICE_TRY
  return false;
}

// Calls f(static_cast<const T*>(p)) for the type T named `type`.
template <class F>
bool WithType(const std::string& type, const void* p, F&& f) {
  return ForType(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    f(static_cast<const T*>(p));
  });
}

// The bytes of a block of `count` elements of `elem` bytes each, in
// *bytes; false when they would pass 2^62, the largest block the engine
// writes or reads.
inline bool BlockBytes(const std::vector<uint64_t>& count, size_t elem,
                       uint64_t* bytes) {
  uint64_t n = 1;
  for (uint64_t c : count) {
    if (c != 0 && n > (uint64_t{1} << 62) / elem / c) return false;
    n *= c;
  }
  *bytes = n * elem;
  return true;
}

// sizeof(T) for the type named `type`; 0 for none.
inline size_t TypeSize(const std::string& type) {
  size_t n = 0;
  ForType(type, [&](auto* tag) { n = sizeof(*tag); });
  return n;
}

}  // namespace adios2_engine
}  // namespace sluice

#endif  // SLUICE_ADIOS2_ENGINE_TYPES_H_
