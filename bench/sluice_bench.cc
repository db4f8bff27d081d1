// sluice-bench: an IOR-style benchmark of checkpoint I/O, every baseline
// side by side in one run. Flags are IOR's (see -h).
//
// Scenarios, each on N ranks under mpiexec:
//   POSIX      pwrite/pread per transfer, fsync with -e (IOR's POSIX).
//   MPIIO      MPI_File_write_at[_all], MPI_File_sync (IOR's MPIIO).
//   HDF5       parallel HDF5 through the MPI-IO driver; one dataset.
//   ADIOS2     the BP5 engine; one serial writer per rank (no MPI in the
//              ADIOS2 build available here).
//   ADIOS2-BB  the BP4 engine with BurstBufferPath = --fast-root, output on
//              --slow-root: BP4 writes to the fast root and its drainer
//              thread copies to the slow one (Close waits for the drain);
//              sluice-bench fsyncs the drained files (ior/api_adios2.cc).
//   SLUICE-KV  Sluice's K/V API, one key per transfer, a store per writer;
//              -e ends the write with a write barrier.
//   SLUICE-STREAM  sluice::ofstream/ifstream over the file layer: one
//              logical file, a store per writer, merged on read.
//   SLUICE-DATASET  the dataset API: one dataset id per repetition (a
//              shared element, or a unique one per rank with -F),
//              committed atomically at close.
//   SLUICE-POSIX  POSIX's calls, unchanged, under the LD_PRELOAD
//              interposer (libsluice_preload.so) on files under its mount:
//              the file layer reached by an unmodified program.
//   DEVICE-LIMIT  fio on rank 0 with libaio, iodepth 32, O_DIRECT, 4 MiB
//              blocks, one job moving the run's bytes: the device's
//              physical limit (ior/device_limit.h); every result is also
//              shown as a fraction of it.
//   FIO-SYNC   fio, one synchronous job (psync, O_DIRECT) per rank,
//              sequential, bs = transfer size, the same bytes: what the
//              device gives IOR's POSIX pattern without the page cache;
//              every result is also shown as a fraction of it. Called
//              FIO-LIMIT before (still accepted, with a note).
//   FIO-OVERWRITE  FIO-SYNC's job overwriting files laid out before it.
// Two tiers (--fast-root, --slow-root, with -e): every file goes under the
// slow root, and each write repetition reports waited_s (open until close
// or commit returned) and durable_s (open until durable on the slow root);
// APIs without tiers write straight to the slow root, so waited == durable.
// Layout: IOR's. Shared file: segment s of rank r is at s*N*b + r*b. File
// per process (-F): <file>.<rank>. -C shifts readers by -Q ranks. -z
// shuffles the transfers within each block. -W/-R verify every byte
// (offset-stamped pattern, see ior/pattern.h) and name the first bad offset.
#include <limits.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ior/params.h"
#include "ior/runner.h"

namespace {

std::string Dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// libsluice_preload.so: SLUICE_PRELOAD_LIB, else installed beside the
// program (bin/../lib), else in the build tree.
std::string FindInterposer() {
  if (const char* e = getenv("SLUICE_PRELOAD_LIB")) return e;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::vector<std::string> tries;
  if (n > 0) {
    self[n] = '\0';
    const std::string bin = Dir(self);
    tries.push_back(bin + "/../" SLUICE_BENCH_LIBDIR "/libsluice_preload.so");
    tries.push_back(bin + "/../libsluice_preload.so");  // build tree
  }
  tries.push_back(SLUICE_BENCH_PRELOAD_BUILT);
  for (const auto& t : tries) {
    if (access(t.c_str(), R_OK) == 0) return t;
  }
  return "";
}

// SLUICE-POSIX needs the interposer loaded from the start: before MPI_Init,
// the program re-executes itself once with it in LD_PRELOAD (the pid, and
// so mpiexec's view of the rank, stays the same). When that cannot be done
// the API is reported as skipped, with the reason, by MakeApi.
void ExecUnderInterposer(const sluice::bench::Params& p, char** argv) {
  const auto& apis = p.apis;
  if (std::find(apis.begin(), apis.end(), "SLUICE-POSIX") == apis.end()) return;
  if (getenv("SLUICE_BENCH_INTERPOSED")) return;  // this is the re-execution
  const std::string lib = FindInterposer();
  if (lib.empty()) return;
  std::string path = p.path;
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return;
    path = std::string(cwd) + "/" + path;
  }
  const char* pre = getenv("LD_PRELOAD");
  const std::string preload = lib + (pre && *pre ? ":" + std::string(pre) : "");
  setenv("LD_PRELOAD", preload.c_str(), 1);
  if (!getenv("SLUICE_MOUNT")) {
    setenv("SLUICE_MOUNT", (path + ".mnt").c_str(), 1);
    setenv("SLUICE_ROOT", (path + ".sluiceposix").c_str(), 1);
  }
  std::string options;
  for (const auto& [k, v] : p.store_options) {
    options += (options.empty() ? "" : ",") + k + "=" + v;
  }
  if (!options.empty()) setenv("SLUICE_OPTIONS", options.c_str(), 1);
  // Reads may be of other ranks' data (-C): the merged view, which every
  // rank can open once the writers have closed, as at a restart.
  setenv("SLUICE_MERGED_READS", "1", 1);
  setenv("SLUICE_BENCH_INTERPOSED", "1", 1);
  execv("/proc/self/exe", argv);
  perror("sluice-bench: re-executing under libsluice_preload.so");
}

}  // namespace

int main(int argc, char** argv) {
  {
    sluice::bench::Params early;
    std::string ignored;
    if (sluice::bench::ParseArgs(std::vector<std::string>(argv + 1, argv + argc),
                                 &early, &ignored) == 0) {
      ExecUnderInterposer(early, argv);
    }
  }
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
