// Shared by the C shims: the handle structs and the last-error slot.
#ifndef SLUICE_C_C_API_H_
#define SLUICE_C_C_API_H_

#include <memory>
#include <string>

#include "sluice/dataset.h"
#include "sluice/fs.h"
#include "sluice/kv.h"
#include "sluice/sluice.h"

struct sluice_options_t {
  sluice::StoreOptions rep;
  // Files only: extent_bytes as set (FsOptions::Set checks and records it
  // as given, so the configuration does not replace it).
  sluice::FsOptions files;
};

struct sluice_store_t {
  std::unique_ptr<sluice::Store> rep;
};

struct sluice_context_t {
  std::unique_ptr<sluice::Context> rep;
};

namespace sluice {
// Records `s` as the calling thread's last error and returns its C code.
SLUICE_EXPORT int SetLastError(const Status& s);
// Copies `value` into buf[0..cap), NUL-terminated (truncated if it does not
// fit: SLUICE_BUFFER_TOO_SMALL, naming `what`); *len, if not NULL, is its
// length.
int CopyString(const std::string& value, char* buf, size_t cap, size_t* len,
               const std::string& what);
}  // namespace sluice

// Runs `body` (returning an int), turning any exception into an error code
// so nothing throws into C.
#define SLUICE_C_GUARD(body)                                                \
  try {                                                                     \
    body                                                                    \
  } catch (const std::bad_alloc&) {                                         \
    return sluice::SetLastError(sluice::Status::IOError("out of memory"));  \
  } catch (const std::exception& e) {                                       \
    return sluice::SetLastError(sluice::Status::IOError(e.what()));         \
  }

#endif  // SLUICE_C_C_API_H_
