// sluice-ckpt-bench: a checkpoint written and read back through each API,
// side by side in one run, on local directories.
//
// Scenarios (each rank writes its own checkpoint; with MPI, all ranks at
// once, timed from the first rank's start to the last rank's end):
//   POSIX      one file per rank, write() of each transfer, fsync, close.
//              The baseline: what an application does today.
//   KV-ROCKSDB the K/V API, one key per transfer, RocksDB backend, LSMIO's
//              tuning (no WAL, no compression, no cache, no compaction);
//              write_barrier at the end makes it durable.
//   KV-LEVELDB the same with LevelDB (updates batched, log fsync'ed at the
//              barrier).
// Reads: after every API has written, the page cache is dropped (root
// only; the output says when it could not be), then each checkpoint is read
// back transfer by transfer and every byte is compared with what was
// written. A mismatch is an error naming the API, rank and offset.
// Each scenario runs --reps times; the table shows medians, and each
// bandwidth as a ratio of POSIX's in the same run.
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifdef SLUICE_BENCH_MPI
#include <mpi.h>
#endif

#include "sluice/kv.h"
#include "sluice/options.h"

namespace {

struct Config {
  std::string dir = "/tmp/sluice-bench";
  size_t bytes = 256u << 20;     // per rank
  size_t transfer = 1u << 20;
  int reps = 3;
  std::vector<std::string> apis = {"POSIX", "KV-ROCKSDB", "KV-LEVELDB"};
  std::string store_options;
  bool keep = false;
};

int rank = 0, nranks = 1;

void Barrier() {
#ifdef SLUICE_BENCH_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}
double MaxAll(double v) {
#ifdef SLUICE_BENCH_MPI
  double out;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
#else
  return v;
#endif
}
int SumAll(int v) {
#ifdef SLUICE_BENCH_MPI
  int out;
  MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return out;
#else
  return v;
#endif
}
[[noreturn]] void Die(const std::string& msg) {
  fprintf(stderr, "sluice-ckpt-bench: rank %d: %s\n", rank, msg.c_str());
#ifdef SLUICE_BENCH_MPI
  MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  exit(1);
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The bytes of transfer `i` of `rank`: a cheap pattern, distinct for every
// (rank, transfer, word), written into a reused buffer.
void Fill(std::vector<uint64_t>* buf, int r, size_t i) {
  uint64_t x = (uint64_t(r) << 40) ^ (uint64_t(i) << 20) ^ 0x5bd1e995;
  for (auto& w : *buf) w = ++x * 0x9E3779B97F4A7C15ull;
}

std::string RankPath(const Config& c, const std::string& api) {
  return c.dir + "/" + api + ".rank" + std::to_string(rank);
}

void RemoveTree(const std::string& path) {
  std::string cmd = "rm -rf '" + path + "'";
  if (system(cmd.c_str()) != 0) Die("cannot remove " + path);
}

void Check(const sluice::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

sluice::StoreOptions KvOptions(const Config& c, const std::string& api) {
  sluice::StoreOptions o;
  Check(o.Set("backend", api == "KV-LEVELDB" ? "leveldb" : "rocksdb"),
        "backend");
  if (!c.store_options.empty()) Check(o.SetAll(c.store_options), "--options");
  return o;
}

std::string Key(size_t i) {
  char k[32];
  snprintf(k, sizeof k, "ckpt/%012zu", i);
  return k;
}

// Writes one checkpoint of this rank; returns seconds.
double Write(const Config& c, const std::string& api) {
  const size_t n = c.bytes / c.transfer;
  std::vector<uint64_t> buf(c.transfer / 8);
  const std::string path = RankPath(c, api);
  RemoveTree(path);
  Barrier();
  const double t0 = Now();
  if (api == "POSIX") {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) Die("open " + path + ": " + strerror(errno));
    for (size_t i = 0; i < n; ++i) {
      Fill(&buf, rank, i);
      if (write(fd, buf.data(), c.transfer) != ssize_t(c.transfer)) {
        Die("write " + path + ": " + strerror(errno));
      }
    }
    if (fsync(fd) != 0) Die("fsync " + path + ": " + strerror(errno));
    close(fd);
  } else {
    std::unique_ptr<sluice::Store> store;
    Check(sluice::Store::Open(KvOptions(c, api), path, &store), "open");
    for (size_t i = 0; i < n; ++i) {
      Fill(&buf, rank, i);
      Check(store->Put(Key(i), std::string_view(reinterpret_cast<char*>(
                                                    buf.data()),
                                                c.transfer)),
            "put");
    }
    Check(store->WriteBarrier(), "write barrier");
    Check(store->Close(), "close");
  }
  const double t = Now() - t0;
  Barrier();
  return t;
}

// Reads this rank's checkpoint back, verifying every byte; returns seconds.
double Read(const Config& c, const std::string& api) {
  const size_t n = c.bytes / c.transfer;
  std::vector<uint64_t> want(c.transfer / 8);
  std::string got(c.transfer, '\0');
  const std::string path = RankPath(c, api);
  Barrier();
  const double t0 = Now();
  auto verify = [&](size_t i) {
    Fill(&want, rank, i);
    if (memcmp(got.data(), want.data(), c.transfer) != 0) {
      size_t off = 0;
      while (got[off] == reinterpret_cast<char*>(want.data())[off]) ++off;
      Die(api + ": data check failed at byte " +
          std::to_string(i * c.transfer + off) + " of " + path);
    }
  };
  if (api == "POSIX") {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) Die("open " + path + ": " + strerror(errno));
    for (size_t i = 0; i < n; ++i) {
      if (read(fd, &got[0], c.transfer) != ssize_t(c.transfer)) {
        Die("short read of " + path);
      }
      verify(i);
    }
    close(fd);
  } else {
    sluice::StoreOptions o = KvOptions(c, api);
    o.read_only = true;
    std::unique_ptr<sluice::Store> store;
    Check(sluice::Store::Open(o, path, &store), "open");
    for (size_t i = 0; i < n; ++i) {
      Check(store->Get(Key(i), &got), "get " + Key(i));
      if (got.size() != c.transfer) Die(api + ": value of wrong size");
      verify(i);
    }
    Check(store->Close(), "close");
  }
  const double t = Now() - t0;
  Barrier();
  return t;
}

bool DropCaches() {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
  if (fd < 0) return false;
  bool ok = write(fd, "3", 1) == 1;
  close(fd);
  return ok;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void Usage(FILE* out) {
  fprintf(out,
          "usage: [mpiexec -n N] sluice-ckpt-bench [options]\n"
          "Writes a checkpoint per rank through POSIX and the Sluice K/V API\n"
          "(RocksDB, LevelDB), fsync'ed, then reads it back verified, and\n"
          "prints median bandwidths side by side.\n\n"
          "  -d, --dir DIR        where to write (default /tmp/sluice-bench)\n"
          "  -s, --size SIZE      bytes per rank (default 256m)\n"
          "  -t, --transfer SIZE  bytes per write/value (default 1m)\n"
          "  -r, --reps N         repetitions, median reported (default 3)\n"
          "  -a, --apis LIST      comma list of POSIX,KV-ROCKSDB,KV-LEVELDB\n"
          "  -o, --options LIST   store options, e.g. write_buffer_size=64m\n"
          "  -k, --keep           keep the files\n"
          "  -h, --help           this text\n"
          "Sizes take k, m, g suffixes. Exit status 1 on any error or data\n"
          "mismatch, 2 on bad arguments.\n");
}

size_t SizeArg(const char* flag, const char* text) {
  size_t v = 0;
  sluice::Status s = sluice::ParseSize(text, &v);
  if (!s.ok() || v == 0) {
    fprintf(stderr, "sluice-ckpt-bench: %s: %s\n", flag,
            s.ok() ? "must be > 0" : s.message().c_str());
    exit(2);
  }
  return v;
}

Config Parse(int argc, char** argv) {
  Config c;
  static const option longs[] = {
      {"dir", required_argument, nullptr, 'd'},
      {"size", required_argument, nullptr, 's'},
      {"transfer", required_argument, nullptr, 't'},
      {"reps", required_argument, nullptr, 'r'},
      {"apis", required_argument, nullptr, 'a'},
      {"options", required_argument, nullptr, 'o'},
      {"keep", no_argument, nullptr, 'k'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "d:s:t:r:a:o:kh", longs, nullptr)) !=
         -1) {
    switch (ch) {
      case 'd': c.dir = optarg; break;
      case 's': c.bytes = SizeArg("--size", optarg); break;
      case 't': c.transfer = SizeArg("--transfer", optarg); break;
      case 'r': c.reps = atoi(optarg); break;
      case 'a': {
        c.apis.clear();
        std::string list = optarg;
        size_t pos = 0;
        while (pos <= list.size()) {
          size_t end = list.find(',', pos);
          if (end == std::string::npos) end = list.size();
          std::string api = list.substr(pos, end - pos);
          if (api != "POSIX" && api != "KV-ROCKSDB" && api != "KV-LEVELDB") {
            fprintf(stderr, "sluice-ckpt-bench: unknown API '%s'\n",
                    api.c_str());
            exit(2);
          }
          c.apis.push_back(api);
          pos = end + 1;
        }
        break;
      }
      case 'o': c.store_options = optarg; break;
      case 'k': c.keep = true; break;
      case 'h': Usage(stdout); exit(0);
      default: Usage(stderr); exit(2);
    }
  }
  if (optind < argc || c.reps < 1 || c.transfer % 8 != 0 ||
      c.bytes % c.transfer != 0) {
    fprintf(stderr,
            "sluice-ckpt-bench: --reps must be >= 1, --transfer a multiple "
            "of 8 and --size a multiple of --transfer\n");
    exit(2);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef SLUICE_BENCH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
#endif
  Config c = Parse(argc, argv);
  if (rank == 0 && mkdir(c.dir.c_str(), 0755) != 0 && errno != EEXIST) {
    Die("cannot create " + c.dir + ": " + strerror(errno));
  }
  Barrier();
  std::map<std::string, std::vector<double>> wt, rt;
  bool dropped = true;
  for (int rep = 0; rep < c.reps; ++rep) {
    for (const auto& api : c.apis) wt[api].push_back(MaxAll(Write(c, api)));
    int ok = rank == 0 ? DropCaches() : 1;  // one node: one drop is enough
    dropped = dropped && SumAll(ok) == nranks;
    for (const auto& api : c.apis) rt[api].push_back(MaxAll(Read(c, api)));
    if (rank == 0) {
      printf("# rep %d/%d done\n", rep + 1, c.reps);
      fflush(stdout);
    }
  }
  if (rank == 0) {
    const double mib = double(c.bytes) * nranks / 1048576.0;
    printf("# sluice-ckpt-bench: %d rank(s) x %zu MiB, %zu KiB transfers, "
           "%d rep(s), dir %s%s\n",
           nranks, c.bytes >> 20, c.transfer >> 10, c.reps, c.dir.c_str(),
           dropped ? ", page cache dropped before reads"
                   : ", page cache NOT dropped (not root): reads may be cached");
    printf("%-12s %12s %12s %10s %10s\n", "api", "write MiB/s", "read MiB/s",
           "write/POSIX", "read/POSIX");
    double pw = wt.count("POSIX") ? mib / Median(wt["POSIX"]) : 0;
    double pr = rt.count("POSIX") ? mib / Median(rt["POSIX"]) : 0;
    for (const auto& api : c.apis) {
      double w = mib / Median(wt[api]), r = mib / Median(rt[api]);
      printf("%-12s %12.0f %12.0f", api.c_str(), w, r);
      if (pw > 0) {
        printf(" %10.2f %10.2f\n", w / pw, r / pr);
      } else {
        printf(" %10s %10s\n", "-", "-");
      }
    }
  }
  if (!c.keep) {
    for (const auto& api : c.apis) RemoveTree(RankPath(c, api));
  }
#ifdef SLUICE_BENCH_MPI
  MPI_Finalize();
#endif
  return 0;
}
