// Runs the tests a Params describes, under MPI, and reports them.
#ifndef SLUICE_BENCH_IOR_RUNNER_H_
#define SLUICE_BENCH_IOR_RUNNER_H_

#include "ior/params.h"

namespace sluice {
namespace bench {

// Collective over MPI_COMM_WORLD. Returns the exit status: 0, or 1 when a
// data check failed (I/O errors abort the job with status 1).
int Run(const Params& params);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_RUNNER_H_
