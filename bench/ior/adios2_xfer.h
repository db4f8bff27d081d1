// One transfer through ADIOS2's C++ API, as -a ADIOS2 and -a SLUICE-ADIOS2
// make it: the range [at, at + len) of a 1-D array of bytes, a sync Put or
// Get (the runner reuses its buffer).
#ifndef SLUICE_BENCH_IOR_ADIOS2_XFER_H_
#define SLUICE_BENCH_IOR_ADIOS2_XFER_H_

#include <adios2.h>

#include <string>

#include "ior/api.h"

namespace sluice {
namespace bench {

// `what` begins the message of an error ("ADIOS2 transfer x.bp").
inline Status Adios2Xfer(adios2::Engine& engine, adios2::Variable<uint8_t>& var,
                         Access access, char* buf, uint64_t len, uint64_t at,
                         const std::string& what) {
  try {
    var.SetSelection({{at}, {len}});
    uint8_t* p = reinterpret_cast<uint8_t*>(buf);
    if (access == Access::kWrite) {
      engine.Put(var, p, adios2::Mode::Sync);
    } else {
      engine.Get(var, p, adios2::Mode::Sync);
    }
  } catch (const std::exception& e) {
    return Status::IOError(what + ": " + e.what());
  }
  return Status::OK();
}

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_ADIOS2_XFER_H_
