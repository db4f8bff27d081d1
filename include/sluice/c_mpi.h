/* MPI entry points of the C API. Kept apart from sluice.h so serial users
 * never need mpi.h. Link with sluice::sluice_mpi (pkg-config: sluice-mpi). */
#ifndef SLUICE_C_MPI_H_
#define SLUICE_C_MPI_H_

#include <mpi.h>

#include "sluice/sluice.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over comm: every rank's sluice_kv_write_barrier, then
 * agreement.
 * Returns SLUICE_OK on every rank only if all ranks succeeded; otherwise
 * every rank returns the first failing rank's code and sluice_errmsg()
 * names that rank. */
SLUICE_EXPORT int sluice_kv_write_barrier_all(sluice_store_t* store,
                                              MPI_Comm comm);

/* A checkpoint context over the ranks of `comm` (sluice.h): rank 0 reads
 * the configuration and hands it to every rank. Collective. */
SLUICE_EXPORT int sluice_init_mpi(MPI_Comm comm, const char* name,
                                  const char* config_file,
                                  sluice_context_t** ctx);
/* The same for Fortran, whose communicators are integers
 * (MPI_Comm_f2c). */
SLUICE_EXPORT int sluice_init_mpi_f(MPI_Fint comm, const char* name,
                                    const char* config_file,
                                    sluice_context_t** ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_C_MPI_H_ */
