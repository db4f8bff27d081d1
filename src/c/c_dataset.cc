// The C API of contexts, datasets and elements (sluice.h over
// sluice/dataset.h).
#include <algorithm>
#include <cstring>

#include "c/c_api.h"
#include "sluice/dataset.h"

using sluice::SetLastError;
using sluice::Status;

struct sluice_dataset_t {
  std::unique_ptr<sluice::Dataset> rep;
};
struct sluice_element_t {
  std::unique_ptr<sluice::Element> rep;
};
struct sluice_request_t {
  std::unique_ptr<sluice::Request> rep;
};

namespace {

int Null(const char* what) {
  return SetLastError(Status::InvalidArgument(std::string("NULL ") + what));
}

int Kind(int kind, sluice::ElementKind* out) {
  if (kind == SLUICE_ELEMENT_SHARED) {
    *out = sluice::ElementKind::kShared;
  } else if (kind == SLUICE_ELEMENT_UNIQUE) {
    *out = sluice::ElementKind::kUnique;
  } else {
    return SetLastError(Status::InvalidArgument(
        "element kind " + std::to_string(kind) +
        " is neither SLUICE_ELEMENT_SHARED nor SLUICE_ELEMENT_UNIQUE"));
  }
  return SLUICE_OK;
}

// A request handle for `r` if the call succeeded.
int NewRequest(const Status& s, std::unique_ptr<sluice::Request> r,
               sluice_request_t** req) {
  if (!s.ok()) return SetLastError(s);
  *req = new sluice_request_t{std::move(r)};
  return SLUICE_OK;
}

}  // namespace

extern "C" {

int sluice_init_single(const char* name, const char* config_file,
                       sluice_context_t** ctx) {
  SLUICE_C_GUARD({
    if (!ctx) return Null("context pointer");
    *ctx = nullptr;
    if (!name) return Null("context name");
    std::unique_ptr<sluice::Context> c;
    Status s = sluice::Context::InitSingle(name, config_file ? config_file : "",
                                           &c);
    if (!s.ok()) return SetLastError(s);
    *ctx = new sluice_context_t{std::move(c)};
    return SLUICE_OK;
  })
}

int sluice_fini(sluice_context_t* ctx) {
  SLUICE_C_GUARD({
    if (!ctx) return SetLastError(Status::OK());
    std::unique_ptr<sluice_context_t> owned(ctx);
    return SetLastError(ctx->rep->Fini());
  })
}

int sluice_config_set(sluice_context_t* ctx, const char* name,
                      const char* value) {
  SLUICE_C_GUARD({
    if (!ctx || !name || !value) return Null("argument");
    return SetLastError(ctx->rep->SetConfig(name, value));
  })
}

int sluice_config_get(sluice_context_t* ctx, const char* name,
                      const char* dataset, char* buf, size_t cap,
                      size_t* len) {
  SLUICE_C_GUARD({
    if (len) *len = 0;
    if (!ctx || !name || (!buf && cap)) return Null("argument");
    bool known = false;
    for (const auto& v : sluice::Config::Variables()) known |= name == std::string(v.name);
    if (!known) {
      return SetLastError(Status::InvalidArgument(
          std::string("unknown variable '") + name + "' (did you mean " +
          sluice::Config::ClosestName(name) + "?)"));
    }
    const std::string v =
        ctx->rep->GetConfig(name, dataset ? dataset : "").value;
    return sluice::CopyString(v, buf, cap, len,
                              "the value of " + std::string(name));
  })
}

int sluice_dataset_open(sluice_context_t* ctx, const char* name, int64_t id,
                        int flags, sluice_dataset_t** ds) {
  SLUICE_C_GUARD({
    if (!ds) return Null("dataset pointer");
    *ds = nullptr;
    if (!ctx || !name) return Null("argument");
    std::unique_ptr<sluice::Dataset> d;
    Status s = ctx->rep->OpenDataset(name, id, flags, &d);
    if (!s.ok()) return SetLastError(s);
    *ds = new sluice_dataset_t{std::move(d)};
    return SLUICE_OK;
  })
}

int sluice_dataset_id(const sluice_dataset_t* ds, int64_t* id) {
  SLUICE_C_GUARD({
    if (!ds || !id) return Null("argument");
    *id = ds->rep->id();
    return SetLastError(Status::OK());
  })
}

int sluice_dataset_close(sluice_dataset_t* ds) {
  SLUICE_C_GUARD({
    if (!ds) return SetLastError(Status::OK());
    std::unique_ptr<sluice_dataset_t> owned(ds);
    return SetLastError(ds->rep->Close());
  })
}

int sluice_dataset_unlink(sluice_context_t* ctx, const char* name,
                          int64_t id) {
  SLUICE_C_GUARD({
    if (!ctx || !name) return Null("argument");
    return SetLastError(ctx->rep->UnlinkId(name, id));
  })
}

int sluice_dataset_list(sluice_context_t* ctx, const char* name,
                        sluice_dataset_id_info_t* out, size_t cap,
                        size_t* count) {
  SLUICE_C_GUARD({
    if (!ctx || !name || !count || (cap && !out)) return Null("argument");
    std::vector<sluice::DatasetIdInfo> ids;
    Status s = ctx->rep->ListIds(name, &ids);
    if (!s.ok()) return SetLastError(s);
    *count = ids.size();
    for (size_t i = 0; i < ids.size() && i < cap; ++i) {
      out[i].id = ids[i].id;
      out[i].state = static_cast<int>(ids[i].state);
      out[i].bytes = ids[i].bytes;
      out[i].commit_time_ns = ids[i].commit_time_ns;
      out[i].ranks = ids[i].ranks;
      out[i].writers = ids[i].writers;
    }
    if (ids.size() > cap) {
      SetLastError(Status::InvalidArgument(
          std::string(name) + " has " + std::to_string(ids.size()) +
          " ids; the array holds " + std::to_string(cap)));
      return SLUICE_BUFFER_TOO_SMALL;
    }
    return SetLastError(Status::OK());
  })
}

int sluice_dataset_should_checkpoint(sluice_context_t* ctx, const char* name,
                                     int* now) {
  SLUICE_C_GUARD({
    if (!ctx || !name || !now) return Null("argument");
    bool yes = false;
    Status s = ctx->rep->ShouldCheckpoint(name, &yes);
    *now = yes ? 1 : 0;
    return SetLastError(s);
  })
}

namespace {

void ToC(const sluice::DrainState& st, sluice_drain_state_t* out) {
  memset(out, 0, sizeof *out);
  out->phase = static_cast<int>(st.phase);
  out->root = st.root;
  out->bytes_done = st.bytes_done;
  out->bytes_total = st.bytes_total;
  out->bytes_resumed = st.bytes_resumed;
  out->error = static_cast<int>(st.error.code());
  const std::string& m = st.error.message();
  const size_t n = std::min(m.size(), sizeof out->message - 1);
  memcpy(out->message, m.data(), n);
  out->message[n] = '\0';
}

}  // namespace

int sluice_dataset_drain_state(sluice_context_t* ctx, const char* name,
                               int64_t id, sluice_drain_state_t* out) {
  SLUICE_C_GUARD({
    if (!ctx || !name || !out) return Null("argument");
    sluice::DrainState st;
    Status s = ctx->rep->GetDrainState(name, id, &st);
    ToC(st, out);
    return SetLastError(s);
  })
}

int sluice_dataset_drain_wait(sluice_context_t* ctx, const char* name,
                              int64_t id, sluice_drain_state_t* out) {
  SLUICE_C_GUARD({
    if (!ctx || !name || !out) return Null("argument");
    sluice::DrainState st;
    Status s = ctx->rep->DrainWait(name, id, &st);
    ToC(st, out);
    return SetLastError(s);
  })
}

int sluice_dataset_root(const sluice_dataset_t* ds, char* buf, size_t cap,
                        size_t* len) {
  SLUICE_C_GUARD({
    if (!ds || (!buf && cap > 0)) return Null("argument");
    const sluice::DatasetStats st = ds->rep->stats();
    const std::string& root =
        st.read_root.empty() ? st.root : st.read_root;
    return sluice::CopyString(root, buf, cap, len, "the data root");
  })
}

int sluice_perf_get(sluice_context_t* ctx, const char* name, int64_t id,
                    sluice_perf_t* out) {
  SLUICE_C_GUARD({
    if (!ctx || !out) return Null("argument");
    sluice::DatasetStats st;
    if (name) {
      Status s = ctx->rep->IdStats(name, id, &st);
      if (!s.ok()) return SetLastError(s);
    } else {
      st = ctx->rep->TotalStats();
    }
    auto copy = [](sluice_phase_t* to, const sluice::PhaseStats& from) {
      to->calls = from.calls;
      to->bytes = from.bytes;
      to->nanos = from.nanos;
    };
    copy(&out->open, st.open);
    copy(&out->write, st.write);
    copy(&out->sync, st.sync);
    copy(&out->commit, st.commit);
    copy(&out->read, st.read);
    copy(&out->close, st.close);
    out->fallback_reads = st.fallback_reads;
    return SLUICE_OK;
  })
}

int sluice_element_open(sluice_dataset_t* ds, const char* name, int kind,
                        sluice_element_t** el) {
  SLUICE_C_GUARD({
    if (!el) return Null("element pointer");
    *el = nullptr;
    if (!ds || !name) return Null("argument");
    sluice::ElementKind k;
    if (int rc = Kind(kind, &k)) return rc;
    std::unique_ptr<sluice::Element> e;
    Status s = ds->rep->OpenElement(name, k, &e);
    if (!s.ok()) return SetLastError(s);
    *el = new sluice_element_t{std::move(e)};
    return SLUICE_OK;
  })
}

int sluice_element_open_rank(sluice_dataset_t* ds, const char* name, int rank,
                             sluice_element_t** el) {
  SLUICE_C_GUARD({
    if (!el) return Null("element pointer");
    *el = nullptr;
    if (!ds || !name) return Null("argument");
    std::unique_ptr<sluice::Element> e;
    Status s =
        ds->rep->OpenElement(name, sluice::ElementKind::kUnique, &e, rank);
    if (!s.ok()) return SetLastError(s);
    *el = new sluice_element_t{std::move(e)};
    return SLUICE_OK;
  })
}

int sluice_element_close(sluice_element_t* el) {
  SLUICE_C_GUARD({
    if (!el) return SetLastError(Status::OK());
    std::unique_ptr<sluice_element_t> owned(el);
    return SetLastError(el->rep->Close());
  })
}

int sluice_element_size(sluice_element_t* el, uint64_t* size) {
  SLUICE_C_GUARD({
    if (!el || !size) return Null("argument");
    *size = el->rep->size();
    return SLUICE_OK;
  })
}

int sluice_element_write(sluice_element_t* el, uint64_t offset,
                         const void* buf, size_t n) {
  SLUICE_C_GUARD({
    if (!el || (n && !buf)) return Null("argument");
    return SetLastError(el->rep->Write(offset, buf, n));
  })
}

int sluice_element_write_strided(sluice_element_t* el, uint64_t offset,
                                 const void* buf, size_t count, size_t block,
                                 uint64_t stride) {
  SLUICE_C_GUARD({
    if (!el || (count && block && !buf)) return Null("argument");
    return SetLastError(el->rep->WriteStrided(offset, buf, count, block,
                                              stride));
  })
}

int sluice_element_read(sluice_element_t* el, uint64_t offset, void* buf,
                        size_t n, size_t* got) {
  SLUICE_C_GUARD({
    if (!el || !got || (n && !buf)) return Null("argument");
    return SetLastError(el->rep->Read(offset, buf, n, got));
  })
}

int sluice_element_read_strided(sluice_element_t* el, uint64_t offset,
                                void* buf, size_t count, size_t block,
                                uint64_t stride, size_t* got) {
  SLUICE_C_GUARD({
    if (!el || !got || (count && block && !buf)) return Null("argument");
    return SetLastError(
        el->rep->ReadStrided(offset, buf, count, block, stride, got));
  })
}

int sluice_element_write_nb(sluice_element_t* el, uint64_t offset,
                            const void* buf, size_t n,
                            sluice_request_t** req) {
  SLUICE_C_GUARD({
    if (!el || !req || (n && !buf)) return Null("argument");
    std::unique_ptr<sluice::Request> r;
    Status s = el->rep->WriteNb(offset, buf, n, &r);
    return NewRequest(s, std::move(r), req);
  })
}

int sluice_element_write_strided_nb(sluice_element_t* el, uint64_t offset,
                                    const void* buf, size_t count,
                                    size_t block, uint64_t stride,
                                    sluice_request_t** req) {
  SLUICE_C_GUARD({
    if (!el || !req || (count && block && !buf)) return Null("argument");
    std::unique_ptr<sluice::Request> r;
    Status s = el->rep->WriteStridedNb(offset, buf, count, block, stride, &r);
    return NewRequest(s, std::move(r), req);
  })
}

int sluice_element_read_nb(sluice_element_t* el, uint64_t offset, void* buf,
                           size_t n, sluice_request_t** req) {
  SLUICE_C_GUARD({
    if (!el || !req || (n && !buf)) return Null("argument");
    std::unique_ptr<sluice::Request> r;
    Status s = el->rep->ReadNb(offset, buf, n, &r);
    return NewRequest(s, std::move(r), req);
  })
}

int sluice_element_read_strided_nb(sluice_element_t* el, uint64_t offset,
                                   void* buf, size_t count, size_t block,
                                   uint64_t stride, sluice_request_t** req) {
  SLUICE_C_GUARD({
    if (!el || !req || (count && block && !buf)) return Null("argument");
    std::unique_ptr<sluice::Request> r;
    Status s = el->rep->ReadStridedNb(offset, buf, count, block, stride, &r);
    return NewRequest(s, std::move(r), req);
  })
}

int sluice_request_wait(sluice_request_t** req, size_t* got) {
  SLUICE_C_GUARD({
    if (!req) return Null("request pointer");
    if (!*req) {  // as MPI_Wait of MPI_REQUEST_NULL
      if (got) *got = 0;
      return SetLastError(Status::OK());
    }
    std::unique_ptr<sluice_request_t> owned(*req);
    *req = nullptr;
    return SetLastError(owned->rep->Wait(got));
  })
}

int sluice_request_test(sluice_request_t** req, int* done, size_t* got) {
  SLUICE_C_GUARD({
    if (!req || !done) return Null("argument");
    if (!*req) {  // as MPI_Test of MPI_REQUEST_NULL
      *done = 1;
      if (got) *got = 0;
      return SetLastError(Status::OK());
    }
    bool d = false;
    Status s = (*req)->rep->Test(&d, got);
    *done = d ? 1 : 0;
    if (!d) return SLUICE_OK;
    delete *req;
    *req = nullptr;
    return SetLastError(s);
  })
}

}  // extern "C"
