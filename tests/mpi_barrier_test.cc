// The collective write barrier under mpiexec: every rank writes its own
// store, the barrier succeeds everywhere, and the restart half reads every
// rank's data back. Then one rank's barrier fails (its store is closed), and
// every rank must see the failure, naming that rank.
// Usage: mpi_barrier_test DIR (the same DIR on every rank).
#include <mpi.h>

#include <cstdio>
#include <string>

#include "sluice/c_mpi.h"
#include "sluice/mpi.h"
#include "test_util.h"

using sluice::Status;

static int Check(bool ok, const char* what, int rank, int* failures) {
  if (!ok) {
    fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    ++*failures;
  }
  return ok;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpi_barrier_test DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string path = std::string(argv[1]) + "/rank" + std::to_string(rank);
  sluice::StoreOptions options;
  {
    std::unique_ptr<sluice::Store> store;
    Status s = sluice::Store::Open(options, path, &store);
    Check(s.ok(), "open", rank, &failures);
    for (int i = 0; s.ok() && i < 16; ++i) {
      s = store->Put("block" + std::to_string(i),
                     sluice::test::Pattern(rank * 1000 + i, 1 << 20),
                     sluice::WriteMode::kAsync);
    }
    Check(s.ok(), ("puts: " + s.ToString()).c_str(), rank, &failures);
    s = sluice::mpi::WriteBarrierAll(store.get(), MPI_COMM_WORLD);
    Check(s.ok(), ("collective barrier: " + s.ToString()).c_str(), rank,
          &failures);
    Check(store->Close().ok(), "close", rank, &failures);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {  // restart half: read back what this rank wrote
    std::unique_ptr<sluice::Store> store;
    Status s = sluice::Store::Open(options, path, &store);
    for (int i = 0; s.ok() && i < 16; ++i) {
      std::string v;
      s = store->Get("block" + std::to_string(i), &v);
      Check(s.ok() && v == sluice::test::Pattern(rank * 1000 + i, 1 << 20),
            "read back", rank, &failures);
    }
    // One rank fails its barrier: its store is closed already.
    const int bad = size - 1;
    if (rank == bad) store->Close();
    s = sluice::mpi::WriteBarrierAll(store.get(), MPI_COMM_WORLD);
    Check(!s.ok(), "barrier must fail on every rank", rank, &failures);
    Check(s.message().find("rank " + std::to_string(bad)) != std::string::npos,
          ("message names the failing rank: " + s.message()).c_str(), rank,
          &failures);
  }
  {  // the C entry point
    sluice_store_t* store = nullptr;
    int rc = sluice_kv_open(path.c_str(), nullptr, &store);
    Check(rc == SLUICE_OK, "C open", rank, &failures);
    rc = sluice_kv_write_barrier_all(store, MPI_COMM_WORLD);
    Check(rc == SLUICE_OK, "C collective barrier", rank, &failures);
    sluice_kv_close(store);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("mpi_barrier_test: %d ranks, %d failure(s)\n", size, total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
