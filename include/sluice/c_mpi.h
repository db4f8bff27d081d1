/* MPI entry points of the C API. Kept apart from sluice.h so serial users
 * never need mpi.h. Link with sluice::sluice_mpi (pkg-config: sluice-mpi). */
#ifndef SLUICE_C_MPI_H_
#define SLUICE_C_MPI_H_

#include <mpi.h>

#include "sluice/sluice.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over comm: every rank's sluice_write_barrier, then agreement.
 * Returns SLUICE_OK on every rank only if all ranks succeeded; otherwise
 * every rank returns the first failing rank's code and sluice_errmsg()
 * names that rank. */
SLUICE_EXPORT int sluice_write_barrier_all(sluice_store_t* store,
                                           MPI_Comm comm);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_C_MPI_H_ */
