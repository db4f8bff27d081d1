#include "ior/device_limit.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

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

// fio's buffers in huge pages. A request's buffer in 4 KiB pages is
// scattered over physical memory, and the block layer splits the request
// at the device's segment limit (max_segments, 254 on this project's virtio
// disk: about 1 MiB): fio then measures the splitting, not the device
// (1.0-1.3 GiB/s here, where 2 MiB pages, as the value log's buffers are,
// read and wrote 2.0 GiB/s). Huge pages must be reserved (vm.nr_hugepages);
// as root, the pages missing are added for the run and given back after.
class HugePages {
 public:
  ~HugePages() { Restore(); }
  // Makes room for `bytes` of buffers in huge pages; false, with *why,
  // when that cannot be done (fio then uses ordinary pages).
  bool Reserve(uint64_t bytes, std::string* why) {
    long total = 0, free = 0, kib = 0;
    if (!Meminfo(&total, &free, &kib) || kib <= 0) {
      *why = "no huge pages in /proc/meminfo";
      return false;
    }
    page_kib_ = kib;
    const long need = static_cast<long>((bytes / 1024 + kib - 1) / kib) + 2;
    if (free < need) {
      if (!WriteNr(total + need - free)) {
        *why = "cannot raise vm.nr_hugepages (" + std::to_string(free) +
               " huge pages free, " + std::to_string(need) +
               " needed; as root it is raised for the run)";
        return false;
      }
      raised_from_ = total;
      if (!Meminfo(&total, &free, &kib) || free < need) {
        Restore();
        *why = "the kernel gave " + std::to_string(free) + " of the " +
               std::to_string(need) + " huge pages asked for";
        return false;
      }
    }
    return true;
  }
  long page_kib() const { return page_kib_; }
  void Restore() {
    if (raised_from_ >= 0) WriteNr(raised_from_);
    raised_from_ = -1;
  }

 private:
  static bool Meminfo(long* total, long* free, long* kib) {
    std::ifstream in("/proc/meminfo");
    std::string line;
    int found = 0;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string key;
      long v = 0;
      f >> key >> v;
      if (key == "HugePages_Total:") *total = v, ++found;
      if (key == "HugePages_Free:") *free = v, ++found;
      if (key == "Hugepagesize:") *kib = v, ++found;
    }
    return found == 3;
  }
  static bool WriteNr(long n) {
    std::ofstream out("/proc/sys/vm/nr_hugepages");
    out << n << "\n";
    out.close();
    return !out.fail();
  }
  long raised_from_ = -1;
  long page_kib_ = 0;
};

// rank 0: fio's output for one phase, true when it ran.
bool Fio(const Params& p, const Job& job, const char* rw, long huge_kib,
         std::string* out) {
  return RunFio("--name=sluice-device --directory=" +
                    ShellQuote(FioDir(p.path)) + " --rw=" + rw +
                    " --bs=" + std::to_string(job.block) +
                    " --size=" + std::to_string(job.size) +
                    " --numjobs=1 --ioengine=libaio --iodepth=" +
                    std::to_string(kDepth) + " --direct=1 --end_fsync=1" +
                    (huge_kib > 0 ? " --mem=mmaphuge --hugepage-size=" +
                                        std::to_string(huge_kib) + "k"
                                  : ""),
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
  // rank 0: the buffers' pages, said in the note.
  HugePages huge;
  long huge_kib = 0;
  if (rank == 0) {
    std::string why;
    if (huge.Reserve(job.block * kDepth, &why)) {
      huge_kib = huge.page_kib();
      test->note += ", buffers in huge pages of " + HumanSize(huge_kib * 1024);
    } else {
      test->note += ", buffers in 4 KiB pages (" + why +
                    "): requests split at the device's segment limit may "
                    "show less than the device can do";
    }
  }
  for (int rep = 0; rep < p.reps; ++rep) {
    for (const char* rw : {"write", "read"}) {
      double bw = 0, latency = 0;
      std::string out;
      if (rank == 0) {
        if (std::string(rw) == "write") unlink(JobFile(p).c_str());
        const bool ok = Fio(p, job, rw, huge_kib, &out);
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
