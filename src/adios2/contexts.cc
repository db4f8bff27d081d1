#include "adios2/contexts.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#if SLUICE_ADIOS2_WITH_MPI
#include <mpi.h>
#endif

namespace sluice {
namespace adios2_engine {
namespace {

struct Registry {
  std::mutex mu;
  // In the order opened: they end in that order on every rank.
  std::vector<std::pair<std::string, std::shared_ptr<Context>>> contexts;
  bool hooked_exit = false;
  bool hooked_mpi = false;
};

// Never destroyed: contexts may end after static destructors began.
Registry& Reg() {
  static Registry* r = new Registry;
  return *r;
}

void EndAll() {
  std::vector<std::pair<std::string, std::shared_ptr<Context>>> all;
  {
    Registry& r = Reg();
    std::lock_guard<std::mutex> lock(r.mu);
    all.swap(r.contexts);
  }
  for (auto& [key, ctx] : all) {
    Status s = ctx->Fini();
    if (!s.ok()) {
      fprintf(stderr, "sluice ADIOS2 engine: ending context %s: %s\n",
              ctx->name().c_str(), s.ToString().c_str());
    }
  }
}

#if SLUICE_ADIOS2_WITH_MPI
int EndAtFinalize(MPI_Comm, int, void*, void*) {
  EndAll();
  return MPI_SUCCESS;
}
#endif

}  // namespace

Status AcquireContext(const std::string& key, bool over_mpi,
                      const std::function<Status(std::unique_ptr<Context>*)>& open,
                      std::shared_ptr<Context>* out) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [k, ctx] : r.contexts) {
    if (k == key) {
      *out = ctx;
      return Status::OK();
    }
  }
  std::unique_ptr<Context> ctx;
  Status s = open(&ctx);
  if (!s.ok()) return s;
#if SLUICE_ADIOS2_WITH_MPI
  if (over_mpi && !r.hooked_mpi) {
    int keyval = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, EndAtFinalize, &keyval,
                               nullptr) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) != MPI_SUCCESS) {
      ctx->Fini();
      return Status::IOError("cannot hook the end of the context to MPI_Finalize");
    }
    r.hooked_mpi = true;
  }
#else
  (void)over_mpi;
#endif
  if (!r.hooked_exit) {
    atexit(EndAll);
    r.hooked_exit = true;
  }
  r.contexts.emplace_back(key, std::shared_ptr<Context>(std::move(ctx)));
  *out = r.contexts.back().second;
  return Status::OK();
}

}  // namespace adios2_engine
}  // namespace sluice
