/* Checks for the C programs run under mpiexec (tests, probes): a failed
 * check names the rank, the place and the call, and ends the whole job.
 * The includer defines `static int rank;` (its MPI rank) before using them. */
#ifndef SLUICE_TESTS_MPI_CHECK_H_
#define SLUICE_TESTS_MPI_CHECK_H_

#include <mpi.h>
#include <stdio.h>

#include "sluice/sluice.h"

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, "\n");                                         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                  \
    }                                                                \
  } while (0)
#define OK(call)                                                        \
  do {                                                                  \
    int rc_ = (call);                                                   \
    CHECK(rc_ == SLUICE_OK, "%s: %s (%s)", #call, sluice_strerror(rc_), \
          sluice_errmsg());                                             \
  } while (0)

#endif /* SLUICE_TESTS_MPI_CHECK_H_ */
