// MPI entry points of the K/V API (C++). Kept apart from kv.h so serial
// users never need mpi.h. Link with sluice::sluice_mpi.
//
// Thread-safety: as MPI's own for the communicator passed (the calls are
// collective over it and must be made in the same order on every rank).
#ifndef SLUICE_MPI_H_
#define SLUICE_MPI_H_

#include <mpi.h>

#include "sluice/export.h"
#include <memory>
#include <string>

#include "sluice/dataset.h"
#include "sluice/kv.h"

namespace sluice {
namespace mpi {

// Collective over `comm`: every rank makes its own store's updates durable
// (Store::WriteBarrier), then all ranks agree on the outcome. Returns OK on
// every rank only if every rank succeeded; otherwise every rank returns an
// error, and the message names the first failing rank and its error.
SLUICE_EXPORT Status WriteBarrierAll(Store* store, MPI_Comm comm);

// A dataset context over the ranks of `comm` (sluice/dataset.h): rank 0
// reads the configuration (`config_file` may be empty; the environment's
// SLUICE_* variables) and hands it to every rank. Collective over `comm`;
// the context keeps a duplicate of it.
SLUICE_EXPORT Status InitContext(MPI_Comm comm, const std::string& name,
                                 const std::string& config_file,
                                 std::unique_ptr<Context>* out);
// The same with variables already set by the API (Config::Set): rank 0's
// settings, which beat the environment and the file, count on every rank.
SLUICE_EXPORT Status InitContext(MPI_Comm comm, const std::string& name,
                                 const Config& settings,
                                 std::unique_ptr<Context>* out);

}  // namespace mpi
}  // namespace sluice

#endif  // SLUICE_MPI_H_
