#include "ior/fio_limit.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>

#include "ior/fio_output.h"
#include "ior/fio_run.h"

namespace sluice {
namespace bench {

namespace {

// Runs fio on rank 0; returns bytes/s, or -1 with *error set.
double Fio(const Params& p, int tasks, const char* rw, std::string* error) {
  const uint64_t per_job = p.block * p.segments;
  std::string out;
  const bool ok = RunFio(
      "--name=sluice-fio-sync --directory=" + ShellQuote(FioDir(p.path)) +
          " --rw=" + rw + " --bs=" + std::to_string(p.transfer) +
          " --size=" + std::to_string(per_job) +
          " --numjobs=" + std::to_string(tasks) +
          " --direct=1 --ioengine=psync --end_fsync=1 --group_reporting",
      &out);
  const double bw = FioBandwidth(out, rw);
  if (!ok || bw <= 0) {
    *error = out.substr(0, 400);
    return -1;
  }
  return bw;
}

// fio's files: <dir>/sluice-fio-sync.<job>.0.
void RemoveJobFiles(const Params& p, int tasks) {
  for (int j = 0; j < tasks; ++j) {
    unlink((FioDir(p.path) + "/sluice-fio-sync." + std::to_string(j) + ".0")
               .c_str());
  }
}

// Collective: rank 0's bw broadcast; on failure prints fio's output and
// sets test->skipped.
bool Check(double bw, const std::string& error, TestResult* test) {
  MPI_Bcast(&bw, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (bw > 0) return true;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    fprintf(stderr, "%s: fio failed: %s\n", test->api.c_str(), error.c_str());
  }
  test->skipped = "fio failed (its output is on stderr)";
  return false;
}

}  // namespace

void RunFioSync(const Params& p, int tasks, bool overwrite,
                TestResult* test) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  test->api = overwrite ? "FIO-OVERWRITE" : "FIO-SYNC";
  test->note = "fio, one synchronous job (psync) per rank at the transfer "
               "size: sequential write/read, direct=1, bs=" +
               HumanSize(p.transfer) + ", " + std::to_string(tasks) +
               " job(s) of " + HumanSize(p.block * p.segments) +
               (overwrite ? ", overwriting files laid out before the first "
                            "repetition (not timed)"
                          : ", new files every repetition");
  int have_fio = rank == 0 && HaveFio();
  MPI_Bcast(&have_fio, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!have_fio) {
    test->skipped = "fio not found (apt-get install fio)";
    return;
  }
  const uint64_t bytes = p.block * p.segments * uint64_t(tasks);
  if (rank == 0) RemoveJobFiles(p, tasks);
  if (overwrite) {  // lay the files out once, untimed
    double bw = 0;
    std::string error;
    if (rank == 0) bw = Fio(p, tasks, "write", &error);
    if (!Check(bw, error, test)) return;
  }
  for (int rep = 0; rep < p.reps; ++rep) {
    for (const char* rw : {"write", "read"}) {
      double bw = 0;
      std::string error;
      // Every API writes new files each repetition (they are removed after
      // it), so FIO-SYNC does too: on a thin-provisioned virtual disk, or
      // an SSD after discard, overwriting blocks that are already allocated
      // runs up to 2x faster than writing new ones. FIO-OVERWRITE measures
      // that case on its own.
      if (rank == 0 && !overwrite && std::string(rw) == "write") {
        RemoveJobFiles(p, tasks);
      }
      if (rank == 0) bw = Fio(p, tasks, rw, &error);
      if (!Check(bw, error, test)) {
        if (rank == 0) RemoveJobFiles(p, tasks);
        return;
      }
      IterResult r;
      r.access = rw;
      r.iter = rep;
      r.bytes = bytes;
      r.transfers = bytes / p.transfer;
      r.io = r.total = bytes / bw;
      r.latency = r.io / (bytes / p.transfer / tasks);
      test->iters.push_back(r);
    }
  }
  if (rank == 0) RemoveJobFiles(p, tasks);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace bench
}  // namespace sluice
