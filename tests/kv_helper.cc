// A second process for the K/V tests (lock and crash scenarios need one).
//   kv_helper hold  DIR OPTIONS   open, print "ready", wait for stdin EOF
//   kv_helper crash DIR OPTIONS N put N keys, barrier, one more put, _exit
//   kv_helper overwrite DIR OPTIONS  put "B" (100 KB of 'a'), barrier,
//                                 put "B" (100 KB of 'b'), then enough small
//                                 values that the tree flushes on its own,
//                                 wait, _exit
//   kv_helper spill DIR OPTIONS N SIZE
//                                 put "s<i>" (Pattern(i, SIZE)) for i < N,
//                                 stopping after the put that made the
//                                 tree write its log (a *.log file in DIR's
//                                 backend directory no longer empty),
//                                 _exit: no barrier, no close
//   kv_helper persist DIR OPTIONS SIZE...
//                                 put "p<SIZE>" (Pattern(SIZE, SIZE)) for
//                                 each SIZE, append "+tail" to p1, delete
//                                 p0, barrier, _exit
//   kv_helper async DIR OPTIONS N for i < N: asynchronous put of "a<i>"
//                                 (Pattern(i, 4096)) and append of "!";
//                                 asynchronous delete of a7; barrier;
//                                 prints "put=P append=A delete=D" (the
//                                 store's counts), _exit
//   kv_helper stats DIR OPTIONS   a few updates, then close
//   kv_helper peak DIR OPTIONS N  a delete, and a put of N bytes if N > 0,
//                                 close; prints the peak RSS (VmHWM, KiB)
//   kv_helper huge DIR OPTIONS N  a put of N bytes, close; prints the
//                                 process's anonymous huge pages (KiB)
// OPTIONS is a StoreOptions::SetAll list ("-" for none).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "sluice/kv.h"
#include "test_util.h"

using sluice::Status;

// Whether a log of the store's tree (DIR/leveldb or DIR/rocksdb) holds bytes.
static bool TreeLogWritten(const std::string& dir) {
  for (const char* tree : {"/leveldb", "/rocksdb"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir + tree, ec)) {
      if (e.path().extension() == ".log" && e.file_size(ec) > 0) return true;
    }
  }
  return false;
}

static int Fail(const Status& s) {
  fprintf(stderr, "kv_helper: %s\n", s.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: kv_helper hold|crash|overwrite|spill|persist|async|stats|"
                    "peak|huge DIR OPTIONS [N...]\n");
    return 2;
  }
  const std::string cmd = argv[1], dir = argv[2], opts = argv[3];
  sluice::StoreOptions options;
  Status s;
  if (opts != "-") s = options.SetAll(opts);
  std::unique_ptr<sluice::Store> store;
  if (s.ok()) s = sluice::Store::Open(options, dir, &store);
  if (!s.ok()) return Fail(s);
  if (cmd == "hold") {
    printf("ready\n");
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    s = store->Close();
    return s.ok() ? 0 : Fail(s);
  }
  if (cmd == "crash" && argc == 5) {
    const int n = atoi(argv[4]);
    for (int i = 0; s.ok() && i < n; ++i) {
      s = store->Put("k" + std::to_string(i), sluice::test::Pattern(i, 100000));
    }
    if (s.ok()) s = store->WriteBarrier();
    if (s.ok()) s = store->Put("after-barrier", "maybe lost");
    if (!s.ok()) return Fail(s);
    _exit(0);  // no Close: what the barrier made durable must survive
  }
  if (cmd == "overwrite") {
    s = store->Put("B", std::string(100000, 'a'));
    if (s.ok()) s = store->WriteBarrier();
    if (s.ok()) s = store->Put("B", std::string(100000, 'b'));
    for (int i = 0; s.ok() && i < 4000; ++i) {
      s = store->Put("small" + std::to_string(i), std::string(1500, 'x'));
    }
    if (!s.ok()) return Fail(s);
    usleep(300000);  // the tree's own flush completes
    _exit(0);        // no barrier, no close
  }
  if (cmd == "spill" && argc == 6) {
    const int n = atoi(argv[4]);
    const size_t size = static_cast<size_t>(atol(argv[5]));
    for (int i = 0; s.ok() && i < n && !TreeLogWritten(dir); ++i) {
      s = store->Put("s" + std::to_string(i), sluice::test::Pattern(i, size));
    }
    if (!s.ok()) return Fail(s);
    _exit(0);
  }
  // No Close after the barrier: what it made durable must survive.
  if (cmd == "persist") {
    for (int i = 4; s.ok() && i < argc; ++i) {
      const size_t size = static_cast<size_t>(atol(argv[i]));
      s = store->Put("p" + std::string(argv[i]), sluice::test::Pattern(size, size));
    }
    if (s.ok()) s = store->Append("p1", "+tail");
    if (s.ok()) s = store->Delete("p0");
    if (s.ok()) s = store->WriteBarrier();
    if (!s.ok()) return Fail(s);
    _exit(0);
  }
  if (cmd == "async" && argc == 5) {
    const int n = atoi(argv[4]);
    const auto async = sluice::WriteMode::kAsync;
    for (int i = 0; s.ok() && i < n; ++i) {
      const std::string key = "a" + std::to_string(i);
      s = store->Put(key, sluice::test::Pattern(i, 4096), async);
      if (s.ok()) s = store->Append(key, "!", async);
    }
    if (s.ok()) s = store->Delete("a7", async);
    if (s.ok()) s = store->WriteBarrier();
    if (!s.ok()) return Fail(s);
    const sluice::StoreStats stats = store->GetStats();
    printf("put=%llu append=%llu delete=%llu\n",
           static_cast<unsigned long long>(stats[sluice::Op::kPut].ops),
           static_cast<unsigned long long>(stats[sluice::Op::kAppend].ops),
           static_cast<unsigned long long>(stats[sluice::Op::kDelete].ops));
    fflush(stdout);
    _exit(0);
  }
  if (cmd == "stats") {
    for (int i = 0; s.ok() && i < 3; ++i) s = store->Put("k", "value");
    std::string v;
    if (s.ok()) s = store->Get("k", &v);
    if (s.ok()) s = store->Close();
    return s.ok() ? 0 : Fail(s);
  }
  if (cmd == "peak" && argc == 5) {
    const size_t n = static_cast<size_t>(atol(argv[4]));
    s = store->Delete("k");
    if (s.ok() && n > 0) s = store->Put("k", sluice::test::Pattern(1, n));
    if (s.ok()) s = store->Close();
    if (!s.ok()) return Fail(s);
    const long kib = sluice::test::ProcKib("/proc/self/status", "VmHWM:");
    if (kib < 0) return 1;
    printf("%ld\n", kib);
    return 0;
  }
  if (cmd == "huge" && argc == 5) {
    const size_t n = static_cast<size_t>(atol(argv[4]));
    s = store->Put("k", sluice::test::Pattern(1, n));
    if (s.ok()) s = store->Close();  // the buffers stay, in the process's pool
    if (!s.ok()) return Fail(s);
    const long kib = sluice::test::ProcKib("/proc/self/smaps_rollup", "AnonHugePages:");
    if (kib < 0) return 1;
    printf("%ld\n", kib);
    return 0;
  }
  fprintf(stderr, "kv_helper: bad command %s\n", cmd.c_str());
  return 2;
}
