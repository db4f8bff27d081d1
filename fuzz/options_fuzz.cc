// Option strings (StoreOptions::SetAll, FsOptions::SetAll): what users
// type into SLUICE_OPTIONS and the tools. Any string is refused with a
// message or sets options whose own listing parses back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sluice/fs.h"
#include "sluice/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  sluice::StoreOptions o;
  sluice::Status s = o.SetAll(in);
  if (s.ok()) {
    // ToString lists one name=value a line; as a SetAll list it must give
    // the same options back.
    std::string list = o.ToString();
    for (char& c : list) {
      if (c == '\n') c = ',';
    }
    while (!list.empty() && list.back() == ',') list.pop_back();
    sluice::StoreOptions back;
    if (!back.SetAll(list).ok() || back.ToString() != o.ToString()) abort();
    (void)o.Validate();
  } else if (s.message().empty()) {
    abort();  // a refusal says why
  }
  sluice::FsOptions f;
  (void)f.SetAll(in);
  return 0;
}
