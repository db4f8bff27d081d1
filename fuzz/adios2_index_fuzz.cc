// The ADIOS2 engine's step index (src/adios2/step_index.h). Any bytes
// decode to an error or to an index that encodes to the same bytes. Most
// inputs are resealed first (a correct length and checksum written over
// the fuzzer's), so that the body's decoding is what gets fuzzed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adios2/step_index.h"
#include "util/coding.h"
#include "util/hash.h"

using namespace sluice::adios2_engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string sealed(reinterpret_cast<const char*>(data), size);
  if (size >= 29 && (data[0] & 7) != 0) {
    sluice::EncodeFixed64(&sealed[12], size - 28);
    sluice::EncodeFixed64(&sealed[size - 8], XXH64(sealed.data(), size - 8, 0));
  }
  const std::string_view in(sealed);
  StepIndex x;
  if (DecodeStepIndex(in, "fuzz", &x).ok()) {
    if (EncodeStepIndex(x) != in) abort();
    for (const Attr& a : x.attrs) {
      std::vector<std::string> v;
      if (a.type == "string" && DecodeStrings(a.data, a.elements, &v).ok() &&
          EncodeStrings(v) != a.data) {
        abort();
      }
    }
  }
  return 0;
}
