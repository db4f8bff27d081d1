// Collective K/V calls over MPI. Built into libsluice_mpi only when MPI is
// found, so the core library never needs mpi.h.
#include <string>
#include <vector>

#include "c/c_api.h"
#include "sluice/c_mpi.h"
#include "sluice/mpi.h"

namespace sluice {
namespace mpi {

Status WriteBarrierAll(Store* store, MPI_Comm comm) {
  Status local = store ? store->WriteBarrier()
                       : Status::InvalidArgument("NULL store");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The lowest failing rank, or `size` if every rank succeeded.
  int mine = local.ok() ? size : rank;
  int first = size;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
    return Status::IOError("MPI_Allreduce failed in write barrier");
  }
  if (first == size) return Status::OK();
  // The failing rank tells every rank its code and message.
  int code = static_cast<int>(local.code());
  std::string msg = local.message();
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  msg.resize(static_cast<size_t>(len));
  MPI_Bcast(len ? &msg[0] : nullptr, len, MPI_CHAR, first, comm);
  return Status(static_cast<Code>(code),
                "write barrier failed on rank " + std::to_string(first) + ": " +
                    msg);
}

}  // namespace mpi
}  // namespace sluice

extern "C" int sluice_write_barrier_all(sluice_store_t* store, MPI_Comm comm) {
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
