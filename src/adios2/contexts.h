// The dataset contexts the ADIOS2 engine opens, kept from one engine's
// Close to the next engine's open: a context's start (its store opened,
// the uncommitted ids reclaimed) costs tens of milliseconds a rank, which
// an application opening an output per checkpoint would pay at every one.
// They end together: collectively at MPI_Finalize (the deletion of an
// attribute of MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize,
// while every rank can still communicate), or at exit for contexts of one
// process. An error then (a drain that failed) can reach no caller: it is
// printed on stderr.
#ifndef SLUICE_ADIOS2_CONTEXTS_H_
#define SLUICE_ADIOS2_CONTEXTS_H_

#include <functional>
#include <memory>
#include <string>

#include "sluice/dataset.h"

namespace sluice {
namespace adios2_engine {

// The context under `key`, opened with `open` the first time (or after
// the contexts ended). Thread-safe.
Status AcquireContext(const std::string& key, bool over_mpi,
                      const std::function<Status(std::unique_ptr<Context>*)>& open,
                      std::shared_ptr<Context>* out);

}  // namespace adios2_engine
}  // namespace sluice

#endif  // SLUICE_ADIOS2_CONTEXTS_H_
