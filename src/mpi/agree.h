// The agreement of every collective call of libsluice_mpi: each rank
// passes its own outcome; OK on every rank when all are OK, else every
// rank gets the lowest failing rank's code and "WHAT failed on rank R: its
// message". Collective over `comm`.
#ifndef SLUICE_MPI_AGREE_H_
#define SLUICE_MPI_AGREE_H_

#include <mpi.h>

#include <string>

#include "sluice/status.h"

namespace sluice {
namespace mpi {

Status Agree(MPI_Comm comm, const Status& local, const std::string& what);

}  // namespace mpi
}  // namespace sluice

#endif  // SLUICE_MPI_AGREE_H_
