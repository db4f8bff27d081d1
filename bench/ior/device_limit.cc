#include "ior/device_limit.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "ior/fio_output.h"
#include "ior/fio_run.h"

namespace sluice {
namespace bench {

namespace {

constexpr uint64_t kBlock = 4u << 20;
constexpr uint64_t kAlign = 4096;  // O_DIRECT
constexpr int kDepth = 32;

// fio's block size and file size for a run moving `bytes`.
struct Job {
  uint64_t block = 0, size = 0;
};

Job Plan(uint64_t bytes, uint64_t transfer) {
  Job job;
  job.block = std::max(kBlock, (transfer + kAlign - 1) / kAlign * kAlign);
  if (bytes < job.block) job.block = std::max(kAlign, bytes / kAlign * kAlign);
  job.size = (bytes + job.block - 1) / job.block * job.block;
  return job;
}

std::string JobFile(const Params& p) {
  return FioDir(p.path) + "/sluice-device.0.0";
}

// rank 0: fio's output for one phase, true when it ran.
bool Fio(const Params& p, const Job& job, const char* rw,
         std::string* out) {
  return RunFio("--name=sluice-device --directory=" +
                    ShellQuote(FioDir(p.path)) + " --rw=" + rw +
                    " --bs=" + std::to_string(job.block) +
                    " --size=" + std::to_string(job.size) +
                    " --numjobs=1 --ioengine=libaio --iodepth=" +
                    std::to_string(kDepth) + " --direct=1 --end_fsync=1",
                out);
}

}  // namespace

void RunDeviceLimit(const Params& p, int tasks, TestResult* test) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  test->api = "DEVICE-LIMIT";
  const Job job = Plan(p.block * p.segments * uint64_t(tasks), p.transfer);
  test->note = "fio on rank 0, the device's limit: libaio, iodepth=" +
               std::to_string(kDepth) + ", direct=1, bs=" +
               HumanSize(job.block) + ", one job moving the run's " +
               HumanSize(job.size) +
               ", sequential write then read, a new file every repetition";
  // 0: can run; 1: no fio; 2: fio without libaio.
  int state = 0;
  if (rank == 0) state = !HaveFio() ? 1 : !FioHasEngine("libaio") ? 2 : 0;
  MPI_Bcast(&state, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (state == 1) {
    test->skipped = "fio not found (apt-get install fio)";
    return;
  }
  if (state == 2) {
    test->skipped = "this fio has no libaio engine (fio --enghelp does not "
                    "list it), and the device's limit needs queued "
                    "asynchronous I/O: install a fio built with libaio";
    return;
  }
  for (int rep = 0; rep < p.reps; ++rep) {
    for (const char* rw : {"write", "read"}) {
      double bw = 0, latency = 0;
      std::string out;
      if (rank == 0) {
        if (std::string(rw) == "write") unlink(JobFile(p).c_str());
        const bool ok = Fio(p, job, rw, &out);
        bw = ok ? FioBandwidth(out, rw) : -1;
        latency = FioMeanLatency(out, rw);
      }
      MPI_Bcast(&bw, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      MPI_Bcast(&latency, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (bw <= 0) {
        if (rank == 0) {
          fprintf(stderr, "DEVICE-LIMIT: fio failed: %s\n",
                  out.substr(0, 400).c_str());
          unlink(JobFile(p).c_str());
        }
        test->skipped = "fio failed: " + FioFirstLine(out);
        return;
      }
      IterResult r;
      r.access = rw;
      r.iter = rep;
      r.bytes = job.size;
      r.transfers = job.size / job.block;
      r.io = r.total = job.size / bw;
      r.latency = std::max(latency, 0.0);
      r.block_size = job.size;
      r.transfer_size = job.block;
      test->iters.push_back(r);
    }
  }
  if (rank == 0) unlink(JobFile(p).c_str());
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace bench
}  // namespace sluice
