// The C API: thin shims over the C++ K/V API. Nothing throws into C.
#include "c/c_api.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

using sluice::SetLastError;
using sluice::Status;
using sluice::WriteMode;

namespace sluice {
namespace {
thread_local std::string last_error;
}  // namespace

int SetLastError(const Status& s) {
  last_error = s.ok() ? std::string() : s.message();
  return static_cast<int>(s.code());
}

int CopyString(const std::string& value, char* buf, size_t cap, size_t* len,
               const std::string& what) {
  if (len != nullptr) *len = value.size();
  if (cap > 0) {
    const size_t n = value.size() < cap - 1 ? value.size() : cap - 1;
    memcpy(buf, value.data(), n);
    buf[n] = '\0';
  }
  if (value.size() < cap) return SetLastError(Status::OK());
  last_error = what + " needs " + std::to_string(value.size() + 1) +
               " bytes with its NUL; the buffer has " + std::to_string(cap);
  return SLUICE_BUFFER_TOO_SMALL;
}
}  // namespace sluice

namespace {

std::string_view Bytes(const void* p, size_t n) {
  return std::string_view(static_cast<const char*>(p), n);
}

// Checks a handle and the flags, then records the outcome of `call`.
#define SLUICE_STORE_CALL(store, flags, call)                               \
  SLUICE_C_GUARD({                                                          \
    if ((store) == nullptr || !(store)->rep) {                              \
      return SetLastError(Status::InvalidArgument("NULL store handle"));    \
    }                                                                       \
    if ((flags) != SLUICE_SYNC && (flags) != SLUICE_ASYNC) {                \
      return SetLastError(Status::InvalidArgument(                          \
          "flags must be SLUICE_SYNC or SLUICE_ASYNC"));                    \
    }                                                                       \
    return SetLastError(call);                                              \
  })

WriteMode Mode(int flags) {
  return flags == SLUICE_ASYNC ? WriteMode::kAsync : WriteMode::kSync;
}

}  // namespace

extern "C" {

const char* sluice_errmsg(void) { return sluice::last_error.c_str(); }

const char* sluice_strerror(int code) {
  if (code == SLUICE_BUFFER_TOO_SMALL) return "BufferTooSmall";
  return sluice::CodeName(static_cast<sluice::Code>(code));
}

void sluice_free(void* ptr) { free(ptr); }

// The library's version, from CMake's project(); the headers' must match.
static_assert(std::string_view(SLUICE_BUILD_VERSION) == SLUICE_VERSION,
              "include/sluice/version.h differs from CMakeLists.txt's version");
const char* sluice_version(void) { return SLUICE_BUILD_VERSION; }

sluice_options_t* sluice_options_create(void) {
  try {
    return new sluice_options_t;
  } catch (...) {
    return nullptr;
  }
}

void sluice_options_destroy(sluice_options_t* options) { delete options; }

int sluice_options_set(sluice_options_t* options, const char* name,
                       const char* value) {
  SLUICE_C_GUARD({
    if (options == nullptr || name == nullptr || value == nullptr) {
      return SetLastError(Status::InvalidArgument("NULL argument"));
    }
    if (strcmp(name, "extent_bytes") == 0) {
      return SetLastError(options->files.Set(name, value));
    }
    return SetLastError(options->rep.Set(name, value));
  })
}

int sluice_kv_open(const char* path, const sluice_options_t* options,
                   sluice_store_t** store) {
  SLUICE_C_GUARD({
    if (store == nullptr) {
      return SetLastError(Status::InvalidArgument("NULL store pointer"));
    }
    *store = nullptr;
    if (path == nullptr) {
      return SetLastError(Status::InvalidArgument("NULL path"));
    }
    auto handle = std::make_unique<sluice_store_t>();
    Status s = sluice::Store::Open(
        options ? options->rep : sluice::StoreOptions(), path, &handle->rep);
    if (s.ok()) *store = handle.release();
    return SetLastError(s);
  })
}

int sluice_kv_close(sluice_store_t* store) {
  if (store == nullptr) return SetLastError(Status::OK());
  std::unique_ptr<sluice_store_t> owned(store);
  SLUICE_C_GUARD({ return SetLastError(owned->rep->Close()); })
}

int sluice_kv_put(sluice_store_t* store, const void* key, size_t klen,
                  const void* val, size_t vlen, int flags) {
  SLUICE_STORE_CALL(store, flags,
                    store->rep->Put(Bytes(key, klen), Bytes(val, vlen),
                                    Mode(flags)));
}

int sluice_kv_append(sluice_store_t* store, const void* key, size_t klen,
                     const void* val, size_t vlen, int flags) {
  SLUICE_STORE_CALL(store, flags,
                    store->rep->Append(Bytes(key, klen), Bytes(val, vlen),
                                       Mode(flags)));
}

int sluice_kv_delete(sluice_store_t* store, const void* key, size_t klen,
                     int flags) {
  SLUICE_STORE_CALL(store, flags,
                    store->rep->Delete(Bytes(key, klen), Mode(flags)));
}

int sluice_kv_get(sluice_store_t* store, const void* key, size_t klen,
                  void** val, size_t* vlen) {
  SLUICE_C_GUARD({
    if (store == nullptr || val == nullptr || vlen == nullptr) {
      return SetLastError(Status::InvalidArgument("NULL argument"));
    }
    *val = nullptr;
    *vlen = 0;
    std::string value;
    Status s = store->rep->Get(Bytes(key, klen), &value);
    if (s.ok()) {
      void* copy = malloc(value.size() ? value.size() : 1);
      if (copy == nullptr) throw std::bad_alloc();
      memcpy(copy, value.data(), value.size());
      *val = copy;
      *vlen = value.size();
    }
    return SetLastError(s);
  })
}

int sluice_kv_get_into(sluice_store_t* store, const void* key, size_t klen,
                       void* buf, size_t cap, size_t* vlen) {
  SLUICE_C_GUARD({
    if (store == nullptr || vlen == nullptr || (buf == nullptr && cap > 0)) {
      return SetLastError(Status::InvalidArgument("NULL argument"));
    }
    std::string value;
    Status s = store->rep->Get(Bytes(key, klen), &value);
    if (!s.ok()) return SetLastError(s);
    *vlen = value.size();
    if (value.size() > cap) {
      sluice::last_error = "value of " + std::to_string(value.size()) +
                           " bytes does not fit a buffer of " +
                           std::to_string(cap);
      return SLUICE_BUFFER_TOO_SMALL;
    }
    memcpy(buf, value.data(), value.size());
    return SetLastError(s);
  })
}

int sluice_kv_write_barrier(sluice_store_t* store) {
  SLUICE_STORE_CALL(store, SLUICE_SYNC, store->rep->WriteBarrier());
}

int sluice_kv_reclaim_space(sluice_store_t* store, uint64_t* bytes_freed) {
  uint64_t ignored;
  uint64_t* freed = bytes_freed != nullptr ? bytes_freed : &ignored;
  *freed = 0;  // also when the handle is bad
  SLUICE_STORE_CALL(store, SLUICE_SYNC, store->rep->ReclaimSpace(freed));
}

int sluice_kv_start_batch(sluice_store_t* store) {
  SLUICE_STORE_CALL(store, SLUICE_SYNC, store->rep->StartBatch());
}

int sluice_kv_stop_batch(sluice_store_t* store) {
  SLUICE_STORE_CALL(store, SLUICE_SYNC, store->rep->StopBatch());
}

int sluice_kv_stats(sluice_store_t* store, int op, sluice_op_stats_t* out) {
  SLUICE_C_GUARD({
    if (store == nullptr || out == nullptr || op < 0 || op >= SLUICE_OP_COUNT) {
      return SetLastError(Status::InvalidArgument("bad store, op or output"));
    }
    const sluice::StoreStats all = store->rep->GetStats();
    const sluice::OpStats& s = all[static_cast<sluice::Op>(op)];
    out->ops = s.ops;
    out->bytes = s.bytes;
    out->nanos = s.nanos;
    return SetLastError(Status::OK());
  })
}

int sluice_kv_stats_string(sluice_store_t* store, char* buf, size_t cap,
                           size_t* len) {
  SLUICE_C_GUARD({
    if (len != nullptr) *len = 0;
    if (store == nullptr || (buf == nullptr && cap > 0)) {
      return SetLastError(Status::InvalidArgument("NULL argument"));
    }
    return sluice::CopyString(store->rep->GetStats().ToString(), buf, cap,
                              len, "the store's counters");
  })
}

}  // extern "C"
