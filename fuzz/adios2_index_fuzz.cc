// The ADIOS2 engine's step index (src/adios2/step_index.h). Any bytes
// decode to an error or to an index that encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adios2/step_index.h"

using namespace sluice::adios2_engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
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
