#include "ior/runner.h"

#include <fcntl.h>
#include <mpi.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <numeric>
#include <random>
#include <vector>

#include "ior/api.h"
#include "ior/device_limit.h"
#include "ior/fio_limit.h"
#include "ior/pattern.h"
#include "ior/report.h"

namespace sluice {
namespace bench {
namespace {

int rank = 0, tasks = 1;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Timestamp() {
  time_t t = time(nullptr);
  char buf[64];
  strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", localtime(&t));
  return buf;
}

[[noreturn]] void Abort(const Status& s) {
  fprintf(stderr, "sluice-bench: rank %d: ERROR: %s\n", rank,
          s.ToString().c_str());
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  abort();
}

double Max(double v) {
  double out;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}
double Min(double v) {
  double out;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return out;
}
double Sum(double v) {
  double out;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

// Drops the page cache (rank 0; one node shares one cache). False if it
// could not (not root), and then says so once.
bool DropCaches() {
  int ok = 1;
  if (rank == 0) {
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    ok = fd >= 0 && write(fd, "3", 1) == 1;
    if (fd >= 0) close(fd);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok != 0;
}

// Faults in and frees `bytes` of memory on rank 0 (one node). On a VM that
// hands freed memory back to its host (free page reporting), memory freed
// more than about a second ago faults in slowly again, so buffered I/O is
// 3-7x slower when it starts after a pause than right after other work.
// Warming before every timed phase gives every API the same start.
// Peak resident memory of this process since the last ResetPeak, in MiB.
double PeakRssMiB() {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  double kib = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "VmHWM: %lf", &kib) == 1) break;
  }
  fclose(f);
  return kib / 1024;
}

// Resets the kernel's high-water mark of resident memory (Linux >= 4.0).
void ResetPeakRss() {
  int fd = open("/proc/self/clear_refs", O_WRONLY);
  if (fd >= 0) {
    if (write(fd, "5", 1) != 1) {
      // Older kernel: the peak then includes earlier work.
    }
    close(fd);
  }
}

// The peak resident memory of the API under test, excluding warm-ups.
double api_peak_rss = 0;

// Writes and unlinks a scratch file of `bytes` beside the test file, on
// rank 0 (one node). The page cache pages it frees are the ones the next
// phase's buffered I/O (and the memory it allocates) will reuse; unlinking
// before writeback discards them without device I/O.
void WarmMemory(const std::string& test_path, uint64_t bytes) {
  if (rank == 0) {
    api_peak_rss = std::max(api_peak_rss, PeakRssMiB());
    size_t slash = test_path.rfind('/');
    std::string path = (slash == std::string::npos ? std::string(".")
                                                    : test_path.substr(0, slash)) +
                       "/.sluice-bench-warm";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      std::vector<char> buf(4u << 20, 1);
      for (uint64_t done = 0; done < bytes; done += buf.size()) {
        if (write(fd, buf.data(), buf.size()) < 0) break;
      }
      close(fd);
      unlink(path.c_str());
    }
    ResetPeakRss();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// An aligned, reused, pre-faulted transfer buffer (O_DIRECT needs 4 KiB).
class Buffer {
 public:
  explicit Buffer(uint64_t size) : size_(size) {
    if (posix_memalign(&p_, 4096, size ? size : 1) != 0) {
      Abort(Status::IOError("out of memory for the transfer buffer"));
    }
    std::fill_n(static_cast<char*>(p_), size, 0);
  }
  ~Buffer() { free(p_); }
  char* data() { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  uint64_t size_;
};

struct Layout {
  const Params& p;
  // Offset in the logical file of transfer `i` of segment `s` of `d`'s data.
  uint64_t Offset(int d, uint64_t s, uint64_t i) const {
    if (p.file_per_proc) return s * p.block + i * p.transfer;
    return s * uint64_t(tasks) * p.block + uint64_t(d) * p.block + i * p.transfer;
  }
  uint64_t RankOffset(uint64_t s, uint64_t i) const {
    return s * p.block + i * p.transfer;
  }
  OpenInfo Info(Access access, int d) const {
    OpenInfo info;
    info.access = access;
    info.shared = !p.file_per_proc;
    info.data_rank = d;
    info.rank_bytes = p.block * p.segments;
    if (p.file_per_proc) {
      char suffix[16];
      snprintf(suffix, sizeof suffix, ".%08d", d);
      info.path = p.path + suffix;
      info.comm = MPI_COMM_SELF;
      info.file_size = info.rank_bytes;
    } else {
      info.path = p.path;
      info.comm = MPI_COMM_WORLD;
      info.file_size = info.rank_bytes * uint64_t(tasks);
    }
    return info;
  }
  // Transfer order within a block: sequential, or a permutation (-z) that
  // depends only on the seed, the data rank and the segment.
  std::vector<uint64_t> Order(int d, uint64_t s) const {
    std::vector<uint64_t> order(p.block / p.transfer);
    std::iota(order.begin(), order.end(), 0);
    if (p.random) {
      std::mt19937_64 rng(p.seed * 1000003 + uint64_t(d) * 7919 + s);
      std::shuffle(order.begin(), order.end(), rng);
    }
    return order;
  }
};

// Per-transfer durations of this rank, kept for -O latencyFile.
struct Latencies {
  struct Row {
    std::string api, access;
    int iter;
    std::vector<double> seconds;
  };
  std::vector<Row> rows;
};

// One phase of one repetition. Returns the aggregate result; counts bad
// bytes into *errors when verifying.
IterResult Phase(Api* api, const std::string& api_name, const Params& p,
                 Access access, int iter, bool verify, bool reorder,
                 Buffer* buf, uint64_t* errors, Latencies* lat) {
  Layout layout{p};
  const int d = access == Access::kRead && reorder
                    ? (rank + p.reorder_shift) % tasks
                    : rank;
  const OpenInfo info = layout.Info(access, d);
  const Pattern pattern(p.seed, p.file_per_proc ? uint64_t(d) : 0);
  std::vector<double> durations;
  durations.reserve(p.segments * (p.block / p.transfer));

  if (p.warm_memory) {
    WarmMemory(p.path,
               p.block * p.segments * uint64_t(tasks) * 5 / 4 + (64u << 20));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double cpu0 = CpuSeconds();
  const double t0 = Now();
  Status s = api->Open(info);
  if (!s.ok()) Abort(s);
  const double t1 = Now();
  for (uint64_t seg = 0; seg < p.segments; ++seg) {
    for (uint64_t i : layout.Order(d, seg)) {
      const uint64_t off = layout.Offset(d, seg, i);
      if (access == Access::kWrite) pattern.Fill(buf->data(), p.transfer, off);
      const double x0 = Now();
      s = api->Xfer(access, buf->data(), p.transfer, off,
                    layout.RankOffset(seg, i));
      durations.push_back(Now() - x0);
      if (!s.ok()) Abort(s);
      uint64_t bad_offset = 0, bad_bytes = 0;
      if (verify && access == Access::kRead &&
          !pattern.Verify(buf->data(), p.transfer, off, &bad_offset,
                          &bad_bytes)) {
        fprintf(stderr,
                "sluice-bench: rank %d: %s: data check failed reading %s: %llu "
                "bad byte(s) in the transfer at offset %llu; first bad byte at "
                "offset %llu\n",
                rank, api_name.c_str(), info.path.c_str(),
                (unsigned long long)bad_bytes, (unsigned long long)off,
                (unsigned long long)bad_offset);
        *errors += bad_bytes;
      }
    }
  }
  if (access == Access::kWrite && p.fsync) {
    s = api->Fsync();
    if (!s.ok()) Abort(s);
  }
  const double t2 = Now();
  s = api->Close();
  if (!s.ok()) Abort(s);
  const double t3 = Now();
  const double cpu = CpuSeconds() - cpu0;
  // Durable on the slow root: at Close for the APIs that write straight to
  // it (with -e, which the tiers require), else once WaitDurable returns.
  const bool tiered_write = p.tiers() && access == Access::kWrite;
  double t4 = t3;
  if (tiered_write && api->Tiered()) {
    s = api->WaitDurable();
    if (!s.ok()) Abort(s);
    t4 = Now();
  }

  IterResult r;
  r.cpu = Sum(cpu);
  r.access = access == Access::kWrite ? "write" : "read";
  r.iter = iter;
  r.open = Max(t1 - t0);
  r.io = Max(t2 - t1);
  r.close = Max(t3 - t2);
  r.total = Max(t3) - Min(t0);
  if (tiered_write) {
    r.waited = r.total;
    r.durable = Max(t4) - Min(t0);
  }
  r.bytes = p.block * p.segments * uint64_t(tasks);
  r.transfers = r.bytes / p.transfer;
  double mean = 0;
  for (double x : durations) mean += x;
  r.latency = Max(durations.empty() ? 0 : mean / durations.size());
  if (lat != nullptr) {
    lat->rows.push_back({api_name, r.access, iter, std::move(durations)});
  }
  return r;
}

void RemoveFiles(Api* api, const Params& p) {
  Layout layout{p};
  MPI_Barrier(MPI_COMM_WORLD);
  if (p.file_per_proc || api->PerWriterStorage()) {
    api->Remove(layout.Info(Access::kWrite, rank));
  } else if (rank == 0) {
    api->Remove(layout.Info(Access::kWrite, 0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void RunApi(const Params& p, const std::string& name, TestResult* test,
            Latencies* lat, bool* warned_drop) {
  test->api = name;
  std::string why_not;
  std::unique_ptr<Api> api = MakeApi(name, p, &why_not);
  if (!api) {
    test->skipped = why_not;
    return;
  }
  test->note = api->Note();
  ResetPeakRss();
  api_peak_rss = 0;
  const bool reorder = p.reorder && tasks > 1 && p.reorder_shift % tasks != 0;
  if (p.reorder && !reorder && rank == 0 && name == p.apis.front()) {
    printf("note: -C with shift %d on %d task(s) reads back each rank's own "
           "data\n", p.reorder_shift, tasks);
  }
  Buffer buf(p.transfer);
  double cpu_write = 0;  // all ranks
  uint64_t errors = 0;
  if (rank == 0) printf("%s", TextIterHeader(p).c_str());
  for (int rep = 0; rep < p.reps; ++rep) {
    if (p.write) {
      IterResult r = Phase(api.get(), name, p, Access::kWrite, rep, false,
                           false, &buf, &errors, lat);
      cpu_write += r.cpu;
      test->iters.push_back(r);
      if (rank == 0) printf("%s", TextIter(r, p).c_str());
      if (p.check_write) {  // untimed read-back of what was just written
        Phase(api.get(), name, p, Access::kRead, rep, true, reorder, &buf,
              &errors, nullptr);
      }
    }
    if (p.read) {
      if (p.drop_caches && !DropCaches() && !*warned_drop && rank == 0) {
        printf("note: could not drop the page cache (not root?): reads may be "
               "served from memory; use -O direct=1 where the API allows\n");
        *warned_drop = true;
      }
      IterResult r = Phase(api.get(), name, p, Access::kRead, rep,
                           p.check_read, reorder, &buf, &errors, lat);
      test->iters.push_back(r);
      if (rank == 0) printf("%s", TextIter(r, p).c_str());
    }
    if (!p.keep) RemoveFiles(api.get(), p);
    fflush(stdout);
  }
  test->peak_rss_mib = Max(std::max(api_peak_rss, PeakRssMiB()));
  const double written = double(p.block) * p.segments * tasks * p.reps;
  test->cpu_seconds_per_gib = p.write ? cpu_write / (written / (1u << 30)) : 0;
  test->data_errors = static_cast<uint64_t>(Sum(double(errors)));
}

// The nodes of the run (shared-memory domains) and the ranks on rank 0's.
void CountNodes(int* nodes, int* tasks_per_node) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                      MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  int leader = node_rank == 0;
  MPI_Allreduce(&leader, nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  *tasks_per_node = node_size;
  MPI_Bcast(tasks_per_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

void WriteLatencies(const Params& p, const Latencies& lat) {
  FILE* f = nullptr;
  if (rank == 0) {
    f = fopen(p.latency_file.c_str(), "w");
    if (f == nullptr) {
      Abort(Status::IOError("cannot create " + p.latency_file));
    }
    fprintf(f, "api,access,rank,iter,seconds\n");
  }
  for (const auto& row : lat.rows) {  // every rank has the same rows
    int n = static_cast<int>(row.seconds.size());
    std::vector<int> counts(tasks), displs(tasks);
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<double> all;
    if (rank == 0) {
      for (int i = 0, at = 0; i < tasks; ++i) {
        displs[i] = at;
        at += counts[i];
      }
      all.resize(displs[tasks - 1] + counts[tasks - 1]);
    }
    MPI_Gatherv(row.seconds.data(), n, MPI_DOUBLE, all.data(), counts.data(),
                displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      for (int r = 0; r < tasks; ++r) {
        for (int i = 0; i < counts[r]; ++i) {
          fprintf(f, "%s,%s,%d,%d,%.9g\n", row.api.c_str(), row.access.c_str(),
                  r, row.iter, all[displs[r] + i]);
        }
      }
    }
  }
  if (f != nullptr) fclose(f);
}

}  // namespace

int Run(const Params& p) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &tasks);
  Report report;
  report.params = p;
  report.tasks = tasks;
  report.began = Timestamp();
  utsname u;
  uname(&u);
  report.machine = std::string(u.sysname) + " " + u.nodename + " " + u.release;
  CountNodes(&report.nodes, &report.tasks_per_node);
  if (rank == 0) {
    for (const auto& n : p.notes) printf("note: %s\n", n.c_str());
    printf("%s", TextHeader(report).c_str());
    fflush(stdout);
  }
  Latencies lat;
  bool warned_drop = false;
  for (const auto& name : p.apis) {
    TestResult test;
    test.started = Timestamp();
    if (rank == 0) printf("\n=== %s\n", name.c_str());
    if (IsFioMeasurement(name)) {
      if (name == "DEVICE-LIMIT") {
        RunDeviceLimit(p, tasks, &test);
      } else {
        RunFioSync(p, tasks, name == "FIO-OVERWRITE", &test);
      }
      if (rank == 0) {
        printf("%s", TextIterHeader(p).c_str());
        for (const auto& r : test.iters) printf("%s", TextIter(r, p).c_str());
      }
    } else {
      RunApi(p, name, &test, p.latency_file.empty() ? nullptr : &lat,
             &warned_drop);
    }
    if (rank == 0) {
      if (!test.skipped.empty()) {
        printf("skipped: %s: %s\n", name.c_str(), test.skipped.c_str());
      } else if (!test.note.empty()) {
        printf("note: %s\n", test.note.c_str());
      }
      fflush(stdout);
    }
    report.tests.push_back(std::move(test));
  }
  report.finished = Timestamp();
  Summarise(&report);
  uint64_t errors = 0;
  for (const auto& t : report.tests) errors += t.data_errors;
  if (rank == 0) {
    printf("%s", TextSummary(report).c_str());
    if (errors > 0) {
      printf("ERROR: data check failed: %llu bad byte(s)\n",
             (unsigned long long)errors);
    }
    printf("Finished            : %s\n", report.finished.c_str());
    if (p.summary_format == "json") {
      const std::string json = Json(report);
      if (p.summary_file.empty()) {
        printf("%s", json.c_str());
      } else {
        FILE* f = fopen(p.summary_file.c_str(), "w");
        if (f == nullptr || fwrite(json.data(), 1, json.size(), f) != json.size()) {
          Abort(Status::IOError("cannot write " + p.summary_file));
        }
        fclose(f);
      }
    }
    fflush(stdout);
  }
  if (!p.latency_file.empty()) WriteLatencies(p, lat);
  return errors > 0 ? 1 : 0;
}

}  // namespace bench
}  // namespace sluice
