// The value log's format (src/store/value_log_format.h): any bytes are a
// file header only if they say the file number they are checked for, and
// then they are refused after a single changed bit; a ValuePointer decodes
// and encodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "store/value_log_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  uint32_t file = 1;
  if (size >= 20) memcpy(&file, p + 16, 4);
  sluice::Status s = sluice::CheckValueLogHeader(p, size, file, "fuzz");
  if (s.ok()) {
    std::string h(p, sluice::kValueLogHeaderBytes);
    h[size % sluice::kValueLogHeaderBytes] ^= 1;
    if (sluice::CheckValueLogHeader(h.data(), h.size(), file, "fuzz").ok()) {
      abort();  // one bit changed and still taken
    }
    if (sluice::CheckValueLogHeader(p, size, file + 1, "fuzz").ok()) abort();
  } else if (s.message().find("fuzz") == std::string::npos) {
    abort();  // a refusal names the file
  }
  const std::string own = sluice::EncodeValueLogHeader(file);
  if (!sluice::CheckValueLogHeader(own.data(), own.size(), file, "fuzz").ok()) {
    abort();
  }
  if (size >= sluice::ValuePointer::kEncodedSize) {
    const sluice::ValuePointer v = sluice::ValuePointer::DecodeFrom(p);
    char back[sluice::ValuePointer::kEncodedSize];
    v.EncodeTo(back);
    if (memcmp(back, p, sizeof back) != 0) abort();
  }
  return 0;
}
