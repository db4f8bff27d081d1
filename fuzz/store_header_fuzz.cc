// Store header and barrier record (src/store/header.h, barrier_record.h):
// any bytes decode to an error or to values that encode back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/barrier_record.h"
#include "store/header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  sluice::StoreHeader h;
  if (sluice::StoreHeader::Decode(in, "fuzz", &h).ok()) {
    sluice::StoreHeader back;
    // What decodes re-encodes (as the current version) and decodes alike.
    if (!sluice::StoreHeader::Decode(h.Encode(), "fuzz", &back).ok() ||
        back.backend != h.backend || back.layout != h.layout ||
        back.flags != h.flags || back.created_nanos != h.created_nanos) {
      abort();
    }
  }
  sluice::BarrierRecord r;
  if (sluice::BarrierRecord::Decode(in, "fuzz", &r).ok() && r.Encode() != in) {
    abort();
  }
  return 0;
}
