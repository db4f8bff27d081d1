// Collective K/V calls over MPI. Built into libsluice_mpi only when MPI is
// found, so the core library never needs mpi.h.
#include <string>
#include <vector>

#include "c/c_api.h"
#include "mpi/agree.h"
#include "sluice/c_mpi.h"
#include "sluice/mpi.h"

namespace sluice {
namespace mpi {

Status WriteBarrierAll(Store* store, MPI_Comm comm) {
  Status local = store ? store->WriteBarrier()
                       : Status::InvalidArgument("NULL store");
  return Agree(comm, local, "write barrier");
}

}  // namespace mpi
}  // namespace sluice

extern "C" int sluice_kv_write_barrier_all(sluice_store_t* store,
                                           MPI_Comm comm) {
  SLUICE_C_GUARD({
    return sluice::SetLastError(sluice::mpi::WriteBarrierAll(
        store ? store->rep.get() : nullptr, comm));
  })
}

extern "C" int sluice_init_mpi(MPI_Comm comm, const char* name,
                               const char* config_file,
                               sluice_context_t** ctx) {
  SLUICE_C_GUARD({
    if (!ctx || !name) {
      return sluice::SetLastError(
          sluice::Status::InvalidArgument("NULL argument"));
    }
    *ctx = nullptr;
    std::unique_ptr<sluice::Context> c;
    sluice::Status s = sluice::mpi::InitContext(
        comm, name, config_file ? config_file : "", &c);
    if (!s.ok()) return sluice::SetLastError(s);
    *ctx = new sluice_context_t{std::move(c)};
    return SLUICE_OK;
  })
}

extern "C" int sluice_init_mpi_f(MPI_Fint comm, const char* name,
                                 const char* config_file,
                                 sluice_context_t** ctx) {
  return sluice_init_mpi(MPI_Comm_f2c(comm), name, config_file, ctx);
}
