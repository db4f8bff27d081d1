// sluice-bench: an IOR-style benchmark of checkpoint I/O, every baseline
// side by side in one run. Flags are IOR's (see -h).
//
// Scenarios, each on N ranks under mpiexec:
//   POSIX      pwrite/pread per transfer, fsync with -e (IOR's POSIX).
//   MPIIO      MPI_File_write_at[_all], MPI_File_sync (IOR's MPIIO).
//   HDF5       parallel HDF5 through the MPI-IO driver; one dataset.
//   ADIOS2     the BP5 engine; one serial writer per rank (no MPI in the
//              ADIOS2 build available here).
//   SLUICE-KV  Sluice's K/V API, one key per transfer, a store per writer;
//              -e ends the write with a write barrier.
//   SLUICE-STREAM  sluice::ofstream/ifstream over the file layer: one
//              logical file, a store per writer, merged on read.
//   FIO-LIMIT  fio, O_DIRECT, sequential, bs = transfer size, same bytes:
//              the device's limit, to which later results are compared.
// Layout: IOR's. Shared file: segment s of rank r is at s*N*b + r*b. File
// per process (-F): <file>.<rank>. -C shifts readers by -Q ranks. -z
// shuffles the transfers within each block. -W/-R verify every byte
// (offset-stamped pattern, see ior/pattern.h) and name the first bad offset.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ior/params.h"
#include "ior/runner.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<std::string> args(argv + 1, argv + argc);
  sluice::bench::Params params;
  std::string message;
  int rc = sluice::bench::ParseArgs(args, &params, &message);
  if (rc == 1) {
    if (rank == 0) printf("%s", message.c_str());
    rc = 0;
  } else if (rc == 2) {
    if (rank == 0) fprintf(stderr, "sluice-bench: %s\n", message.c_str());
  } else {
    params.command_line = "sluice-bench " + params.command_line;
    rc = sluice::bench::Run(params);
  }
  MPI_Finalize();
  return rc;
}
