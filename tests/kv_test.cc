// The K/V API on every backend configuration: the same test cases,
// parameterised, never copied.
#include "sluice/kv.h"

#include <xxhash.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "test_util.h"

namespace sluice {
namespace {

using test::Pattern;
using test::TempDir;

struct Config {
  const char* name;
  const char* options;  // StoreOptions::SetAll list
};

// Both backends, and the code paths their options select: LevelDB without a
// log buffers updates in Sluice; with a log it writes straight through and
// appends by read-modify-write; RocksDB with blob files separates values.
// Each backend also with the lsm layout (values in the tree, as LSMIO keeps
// them) and the value log without O_DIRECT (as on tmpfs) and with tiny log
// files, so that pointers cross files; and written with O_DIRECT but read
// through the page cache (the interposer's default).
const Config kConfigs[] = {
    {"rocksdb", "backend=rocksdb"},
    {"rocksdb_lsm", "backend=rocksdb,layout=lsm"},
    {"rocksdb_vlog_buffered", "backend=rocksdb,vlog_direct_io=0,"
                              "vlog_file_bytes=1m,write_buffer_size=256k"},
    {"rocksdb_vlog_cached_reads", "backend=rocksdb,vlog_direct_reads=0,"
                                  "vlog_file_bytes=1m"},
    {"rocksdb_blob", "backend=rocksdb,layout=lsm,blob_files=1,direct_io_flush=1"},
    {"leveldb", "backend=leveldb"},
    {"leveldb_lsm", "backend=leveldb,layout=lsm"},
    {"leveldb_wal", "backend=leveldb,wal=1"},
};

void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

class KVTest : public ::testing::TestWithParam<Config> {
 protected:
  StoreOptions Options() const {
    StoreOptions o;
    Status s = o.SetAll(GetParam().options);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return o;
  }
  void OpenStore(std::unique_ptr<Store>* store) {
    ASSERT_OK(Store::Open(Options(), path_, store));
  }
  void Reopen() {
    if (store_) ASSERT_OK(store_->Close());
    store_.reset();
    OpenStore(&store_);
  }
  // Closes the store and opens it again with `o`.
  void ReopenWith(const StoreOptions& o) {
    if (store_) ASSERT_OK(store_->Close());
    store_.reset();
    ASSERT_OK(Store::Open(o, path_, &store_));
  }
  void SetUp() override {
    path_ = dir_.Sub("store");
    OpenStore(&store_);
  }
  void TearDown() override {
    if (store_) EXPECT_OK(store_->Close());
  }
  void ExpectValue(const std::string& key, const std::string& want) {
    std::string got;
    Status s = store_->Get(key, &got);
    ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
    ASSERT_EQ(got.size(), want.size()) << key;
    ASSERT_TRUE(got == want) << key << ": value differs";
  }
  // Closes the store, then runs kv_helper CMD on it with ARGS in another
  // process; its exit code, and its output in *out.
  int RunHelper(const std::string& cmd, const std::string& args,
                std::string* out) {
    if (store_) EXPECT_OK(store_->Close());
    store_.reset();
    return test::RunCommand(std::string(KV_HELPER) + " " + cmd + " " + path_ +
                                " " + GetParam().options + " " + args,
                            out);
  }
  void ExpectMissing(const std::string& key) {
    std::string got;
    Status s = store_->Get(key, &got);
    EXPECT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

const size_t kSizes[] = {0, 1, 64u << 10, 1u << 20, 16u << 20};

TEST_P(KVTest, PutGetAppendDeleteRoundTrip) {
  for (size_t size : kSizes) {
    const std::string key = "key-" + std::to_string(size);
    const std::string v = Pattern(size, size);
    ASSERT_OK(store_->Put(key, v));
    ExpectValue(key, v);
    const std::string tail = Pattern(size + 1, size);
    ASSERT_OK(store_->Append(key, tail));
    ExpectValue(key, v + tail);
    ASSERT_OK(store_->Delete(key));
    ExpectMissing(key);
    // Append to a missing key starts from empty.
    ASSERT_OK(store_->Append(key, tail));
    ExpectValue(key, tail);
  }
}

TEST_P(KVTest, OverwriteReplacesValue) {
  ASSERT_OK(store_->Put("k", Pattern(1, 1000)));
  ASSERT_OK(store_->Put("k", "short"));
  ExpectValue("k", "short");
}

TEST_P(KVTest, KeysAndValuesMayHoldZeroBytes) {
  const std::string key("a\0b", 3), value("x\0\0y", 4);
  ASSERT_OK(store_->Put(key, value));
  ExpectValue(key, value);
  ExpectMissing(std::string("a\0c", 3));
}

TEST_P(KVTest, NotFoundIsDistinctAndNamesKeyAndStore) {
  std::string v = "unchanged";
  Status s = store_->Get("no-such-key", &v);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("no-such-key"), std::string::npos);
  EXPECT_NE(s.message().find(path_), std::string::npos);
  ASSERT_OK(store_->Delete("no-such-key"));  // deleting nothing is fine
}

// Puts (every size), an append and a delete, then a barrier, by a process
// that ends right after it without closing the store (a Close would
// flush everything itself): the barrier alone must have made them durable.
TEST_P(KVTest, PersistsAcrossReopenAfterBarrier) {
  std::string sizes, out;
  for (size_t size : kSizes) sizes += " " + std::to_string(size);
  ASSERT_EQ(RunHelper("persist", sizes, &out), 0) << out;
  OpenStore(&store_);
  for (size_t size : kSizes) {
    if (size == 0) {
      ExpectMissing("p0");
    } else if (size == 1) {
      ExpectValue("p1", Pattern(1, 1) + "+tail");
    } else {
      ExpectValue("p" + std::to_string(size), Pattern(size, size));
    }
  }
}

TEST_P(KVTest, BarrierSurvivesProcessExitWithoutClose) {
  std::string out;
  ASSERT_EQ(RunHelper("crash", "40", &out), 0) << out;
  OpenStore(&store_);
  for (int i = 0; i < 40; ++i) {
    ExpectValue("k" + std::to_string(i), Pattern(i, 100000));
  }
}

// Asynchronous puts, appends and a delete, then a barrier, by a process
// that ends right after it without closing the store: the barrier must
// have applied every queued update and made it durable.
TEST_P(KVTest, AsyncWritesAllVisibleAfterBarrier) {
  const int n = 2000;
  std::string out;
  ASSERT_EQ(RunHelper("async", std::to_string(n), &out), 0) << out;
  const std::string counts = "put=" + std::to_string(n) +
                             " append=" + std::to_string(n) + " delete=1\n";
  EXPECT_NE(out.find(counts), std::string::npos) << out;  // counted by then
  OpenStore(&store_);
  for (int i = 0; i < n; ++i) {
    if (i == 7) {
      ExpectMissing("a7");
    } else {
      ExpectValue("a" + std::to_string(i), Pattern(i, 4096) + "!");
    }
  }
}

TEST_P(KVTest, SyncCallsSeeEarlierAsyncWrites) {
  ASSERT_OK(store_->Put("x", "1", WriteMode::kAsync));
  ASSERT_OK(store_->Put("x", "2", WriteMode::kAsync));
  ExpectValue("x", "2");  // Get waits for the queue
  ASSERT_OK(store_->Put("x", "3", WriteMode::kAsync));
  ASSERT_OK(store_->Put("x", "4"));  // ordered after the async "3"
  ASSERT_OK(store_->WriteBarrier());
  ExpectValue("x", "4");
}

TEST_P(KVTest, FourThreadsDisjointKeys) {
  const int kThreads = 4, kKeys = 300;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        const uint64_t seed = t * 100000 + i;
        WriteMode mode = (i % 3 == 0) ? WriteMode::kAsync : WriteMode::kSync;
        if (!store_->Put(key, Pattern(seed, 16384), mode).ok()) ++failures;
        if (!store_->Append(key, Pattern(seed + 1, 100), mode).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  // Read back from four threads too.
  threads.clear();
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        const uint64_t seed = t * 100000 + i;
        std::string got;
        if (!store_->Get(key, &got).ok() ||
            got != Pattern(seed, 16384) + Pattern(seed + 1, 100)) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(mismatches.load(), 0);
  ASSERT_OK(store_->WriteBarrier());
  Reopen();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kKeys; i += 37) {
      const uint64_t seed = t * 100000 + i;
      ExpectValue("t" + std::to_string(t) + "-" + std::to_string(i),
                  Pattern(seed, 16384) + Pattern(seed + 1, 100));
    }
  }
}

TEST_P(KVTest, ConcurrentAppendsToOneKeyLoseNothing) {
  const int kThreads = 4, kAppends = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppends; ++i) {
        EXPECT_OK(store_->Append("shared", std::string(1, 'a' + t)));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::string got;
  ASSERT_OK(store_->Get("shared", &got));
  ASSERT_EQ(got.size(), static_cast<size_t>(kThreads * kAppends));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(std::count(got.begin(), got.end(), 'a' + t), kAppends);
  }
}

TEST_P(KVTest, BatchIsReadableBeforeStopAndDurableAfter) {
  ASSERT_OK(store_->StartBatch());
  EXPECT_EQ(store_->StartBatch().code(), Code::kInvalidArgument);
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(store_->Put("b" + std::to_string(i), Pattern(i, 10000)));
  }
  ASSERT_OK(store_->Append("b1", "+"));
  ASSERT_OK(store_->Delete("b2"));
  ExpectValue("b1", Pattern(1, 10000) + "+");
  ExpectMissing("b2");
  ASSERT_OK(store_->StopBatch());
  EXPECT_EQ(store_->StopBatch().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->GetStats()[Op::kBatch].ops, 1u);
  ASSERT_OK(store_->WriteBarrier());
  Reopen();
  ExpectValue("b0", Pattern(0, 10000));
  ExpectValue("b1", Pattern(1, 10000) + "+");
  ExpectMissing("b2");
}

TEST_P(KVTest, ReusedBatchKeepsEveryRoundsValuesApart) {
  // One batch, cleared and refilled, reuses its large values' memory: no
  // round may see another round's bytes. Values are put from parts.
  WriteBatch b;
  std::map<std::string, std::string> want;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 3; ++i) {
      const std::string key = "r" + std::to_string(round) + "k" + std::to_string(i);
      const std::string head = "head" + std::to_string(round * 10 + i);
      // Sizes shrink and grow, so reused memory is both larger and smaller.
      const std::string body = Pattern(round * 10 + i, ((round % 3) + 1) * 70000 + i);
      b.Put(key, {head, body});
      want[key] = head + body;
    }
    const std::string big = Pattern(100 + round, 150000);
    b.Put("replaced", Pattern(200 + round, 90000));
    b.Put("replaced", big);  // the last update of a key wins
    want["replaced"] = big;
    ASSERT_OK(store_->Write(b));
    b.Clear();
    EXPECT_TRUE(b.empty());
    for (const auto& [key, value] : want) ExpectValue(key, value);
  }
  ASSERT_OK(store_->WriteBarrier());
  Reopen();
  for (const auto& [key, value] : want) ExpectValue(key, value);
}

TEST_P(KVTest, CloseInsideBatchDiscardsItAndSaysSo) {
  ASSERT_OK(store_->Put("before", "kept"));
  ASSERT_OK(store_->StartBatch());
  ASSERT_OK(store_->Put("inside", "dropped"));
  Status s = store_->Close();
  EXPECT_EQ(s.code(), Code::kIncomplete) << s.ToString();
  store_.reset();
  OpenStore(&store_);
  ExpectValue("before", "kept");
  ExpectMissing("inside");
}

// Table files carry a Bloom filter unless bloom_bits=0 (the value log looks
// up every key it replaces; without filters each miss reads a block of every
// level-0 table). Both backends name their filter policy in the table.
TEST_P(KVTest, TableFilesCarryABloomFilterUnlessTurnedOff) {
  for (int bits : {10, 0}) {
    SCOPED_TRACE("bloom_bits=" + std::to_string(bits));
    ASSERT_OK(store_->Close());
    store_.reset();
    std::filesystem::remove_all(path_);
    StoreOptions o = Options();
    o.bloom_bits = bits;
    ASSERT_OK(Store::Open(o, path_, &store_));
    for (int i = 0; i < 200; ++i) {
      ASSERT_OK(store_->Put("b" + std::to_string(i), Pattern(i, 100)));
    }
    ASSERT_OK(store_->WriteBarrier());
    // LevelDB writes its first table when it reopens and replays its log.
    ReopenWith(o);
    ReopenWith(o);
    int tables = 0, filtered = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path_)) {
      const std::string ext = e.path().extension();
      if (ext != ".sst" && ext != ".ldb") continue;
      ++tables;
      std::ifstream in(e.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      if (bytes.find("BuiltinBloomFilter") != std::string::npos) ++filtered;
    }
    ASSERT_GT(tables, 0);
    EXPECT_EQ(filtered, bits > 0 ? tables : 0) << tables << " table files";
    ExpectValue("b199", Pattern(199, 100));
    ExpectMissing("b200");
  }
}

int CountTables(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".sst") ++n;
  }
  return n;
}

// With compaction off, each barrier adds a level-0 table. A writer that
// closes a store of many small tables merges them (tidy_tables); tables that
// hold more than one write buffer of data are left as they are.
TEST(RocksDBTables, AWriterMergesManySmallTablesAtClose) {
  struct Case {
    const char* options;
    int tables_after;  // of 20
  } cases[] = {
      {"backend=rocksdb", 1},
      {"backend=rocksdb,tidy_tables=0", 20},
      {"backend=rocksdb,tidy_tables=21", 20},
      {"backend=rocksdb,layout=lsm,write_buffer_size=256k", 20},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    TempDir dir;
    const std::string path = dir.Sub("s");
    StoreOptions o;
    ASSERT_OK(o.SetAll(c.options));
    const size_t size = o.layout == StoreLayout::kLsm ? (64u << 10) : 100;
    std::unique_ptr<Store> store;
    ASSERT_OK(Store::Open(o, path, &store));
    for (int i = 0; i < 20; ++i) {
      ASSERT_OK(store->Put("t" + std::to_string(i), Pattern(i, size)));
      ASSERT_OK(store->WriteBarrier());
    }
    ASSERT_EQ(CountTables(path), 20);
    ASSERT_OK(store->Close());
    EXPECT_EQ(CountTables(path), c.tables_after);
    store.reset();
    ASSERT_OK(Store::Open(o, path, &store));
    for (int i = 0; i < 20; ++i) {
      std::string v;
      ASSERT_OK(store->Get("t" + std::to_string(i), &v));
      EXPECT_TRUE(v == Pattern(i, size)) << i;
    }
    ASSERT_OK(store->Close());
  }
}

TEST_P(KVTest, ManyFlushesDoNotStall) {
  // More write buffers than RocksDB's default level-0 stop trigger (36):
  // with compaction off, writes must still go on.
  StoreOptions o = Options();
  o.write_buffer_size = 256u << 10;
  ReopenWith(o);
  const std::string v = Pattern(9, 256u << 10);
  for (int i = 0; i < 60; ++i) {
    ASSERT_OK(store_->Put("f" + std::to_string(i), v));
  }
  ASSERT_OK(store_->WriteBarrier());
  ExpectValue("f59", v);
}

TEST_P(KVTest, CountersCountOpsBytesAndTime) {
  ASSERT_OK(store_->Put("c", std::string(1000, 'x')));
  ASSERT_OK(store_->Put("d", std::string(24, 'y')));
  ASSERT_OK(store_->Append("c", std::string(10, 'z')));
  std::string v;
  ASSERT_OK(store_->Get("c", &v));
  ASSERT_TRUE(store_->Get("nope", &v).IsNotFound());
  ASSERT_OK(store_->Delete("d"));
  ASSERT_OK(store_->WriteBarrier());
  StoreStats s = store_->GetStats();
  EXPECT_EQ(s[Op::kPut].ops, 2u);
  EXPECT_EQ(s[Op::kPut].bytes, 1024u);
  EXPECT_EQ(s[Op::kAppend].ops, 1u);
  EXPECT_EQ(s[Op::kAppend].bytes, 10u);
  EXPECT_EQ(s[Op::kGet].ops, 2u);
  EXPECT_EQ(s[Op::kGet].bytes, 1010u);
  EXPECT_EQ(s[Op::kDelete].ops, 1u);
  EXPECT_EQ(s[Op::kBarrier].ops, 1u);
  EXPECT_EQ(s[Op::kBarrier].bytes, 1034u);
  EXPECT_GT(s[Op::kPut].nanos, 0u);
  EXPECT_GT(s[Op::kBarrier].nanos, 0u);
  const std::string line = s.ToString();
  EXPECT_NE(line.find("put=2 ops"), std::string::npos) << line;
  EXPECT_NE(line.find("barrier=1 ops"), std::string::npos) << line;
}

TEST_P(KVTest, StatsLinePrintedAtCloseWithEnvVariable) {
  ASSERT_OK(store_->Close());
  store_.reset();
  std::string out;
  ASSERT_EQ(test::RunCommand("SLUICE_STATS=1 " + std::string(KV_HELPER) +
                                 " stats " + path_ + " " + GetParam().options,
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("sluice-stats store=" + path_), std::string::npos) << out;
  EXPECT_NE(out.find("put=3 ops"), std::string::npos) << out;
  EXPECT_NE(out.find("get=1 ops"), std::string::npos) << out;
  ASSERT_EQ(test::RunCommand(std::string(KV_HELPER) + " stats " + path_ + " " +
                                 GetParam().options,
                             &out),
            0);
  EXPECT_EQ(out.find("sluice-stats"), std::string::npos) << out;
}

TEST_P(KVTest, SecondWriterProcessIsBusyAndNamed) {
  ASSERT_OK(store_->Close());
  store_.reset();
  test::Child holder({KV_HELPER, "hold", path_, GetParam().options});
  ASSERT_EQ(holder.ReadLine(), "ready");
  std::unique_ptr<Store> second;
  Status s = Store::Open(Options(), path_, &second);
  EXPECT_EQ(s.code(), Code::kBusy) << s.ToString();
  EXPECT_NE(s.message().find(path_), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("open for writing"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(second, nullptr);
  StoreOptions ro = Options();
  ro.read_only = true;
  s = Store::Open(ro, path_, &second);
  EXPECT_EQ(s.code(), Code::kBusy) << s.ToString();
  EXPECT_EQ(holder.Wait(), 0);
  // Released when the holder exits.
  ASSERT_OK(Store::Open(Options(), path_, &store_));
}

// snapshot_reads: a reader of a RocksDB store opens it while a writer has
// it, sees what was durable when it opened, takes no lock (a writer then
// opens beside it); LevelDB stores stay Busy, as LevelDB cannot be read
// while written.
TEST_P(KVTest, SnapshotReaderOpensAStoreAWriterHolds) {
  ASSERT_OK(store_->Put("before", "kept"));
  ASSERT_OK(store_->Close());
  store_.reset();
  const bool rocksdb = Options().backend == BackendKind::kRocksDB;
  StoreOptions snap = Options();
  snap.read_only = true;
  snap.snapshot_reads = true;
  std::unique_ptr<Store> reader;
  {
    test::Child holder({KV_HELPER, "hold", path_, GetParam().options});
    ASSERT_EQ(holder.ReadLine(), "ready");
    Status s = Store::Open(snap, path_, &reader);
    if (rocksdb) {
      ASSERT_OK(s);
      std::string v;
      ASSERT_OK(reader->Get("before", &v));
      EXPECT_EQ(v, "kept");
    } else {
      EXPECT_EQ(s.code(), Code::kBusy) << s.ToString();
    }
    // Without snapshot_reads, a reader still waits for the writer.
    StoreOptions ro = Options();
    ro.read_only = true;
    std::unique_ptr<Store> plain_reader;
    EXPECT_EQ(Store::Open(ro, path_, &plain_reader).code(), Code::kBusy);
    EXPECT_EQ(holder.Wait(), 0);
  }
  if (!rocksdb) return;
  // The snapshot reader holds no lock: a writer opens while it is open,
  // and the reader keeps its view.
  ASSERT_OK(Store::Open(Options(), path_, &store_));
  ASSERT_OK(store_->Put("after", "new"));
  ASSERT_OK(store_->WriteBarrier());
  std::string v;
  ASSERT_OK(reader->Get("before", &v));
  EXPECT_TRUE(reader->Get("after", &v).IsNotFound());
  ASSERT_OK(reader->Close());
}

// RocksDB lists its directory when it opens and logs an error for a log
// file that is gone when it looks at its size: a snapshot reader meets
// that whenever the writer's next open deletes a log in between (an old
// log; RocksDB then reads on without it). A dangling link stands for that
// log here. The reader's open succeeds and prints nothing: a line on
// stderr from an open that worked would tell the user of a tool that
// something failed. An open that fails in the end still prints its lines.
TEST_P(KVTest, SnapshotReaderSaysNothingOfALogDeletedAsItOpens) {
  if (Options().backend != BackendKind::kRocksDB) {
    GTEST_SKIP() << "LevelDB stores are not read while written";
  }
  ASSERT_OK(store_->Put("durable", "yes"));
  ASSERT_OK(store_->WriteBarrier());
  const std::string gone = path_ + "/rocksdb/000001.log";
  ASSERT_FALSE(std::filesystem::exists(gone));
  std::filesystem::create_symlink(path_ + "/rocksdb/no-such-file", gone);
  StoreOptions snap = Options();
  snap.read_only = true;
  snap.snapshot_reads = true;
  std::unique_ptr<Store> reader;
  testing::internal::CaptureStderr();
  Status s = Store::Open(snap, path_, &reader);
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_OK(s);
  EXPECT_EQ(said, "");
  std::string v;
  ASSERT_OK(reader->Get("durable", &v));
  EXPECT_EQ(v, "yes");
  ASSERT_OK(reader->Close());
  // The store's own log, gone: the open fails, and says what it met.
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(path_ + "/rocksdb")) {
    if (e.path().extension() == ".log" && e.path() != gone) {
      logs.push_back(e.path().string());
    }
  }
  ASSERT_EQ(logs.size(), 1u);
  std::filesystem::rename(logs[0], logs[0] + ".away");
  std::filesystem::create_symlink(path_ + "/rocksdb/no-such-file", logs[0]);
  testing::internal::CaptureStderr();
  s = Store::Open(snap, path_, &reader);
  const std::string failed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(failed.find("sluice: rocksdb: "), std::string::npos) << failed;
  std::filesystem::remove(logs[0]);
  std::filesystem::rename(logs[0] + ".away", logs[0]);
  std::filesystem::remove(gone);
}

TEST_P(KVTest, ReadOnlyRejectsUpdatesAndReads) {
  ASSERT_OK(store_->Put("r", "value"));
  ASSERT_OK(store_->Close());
  store_.reset();
  StoreOptions ro = Options();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path_, &store_));
  ExpectValue("r", "value");
  Status s = store_->Put("r", "x");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("read-only"), std::string::npos);
}

TEST_P(KVTest, CallsAfterCloseFailCleanly) {
  ASSERT_OK(store_->Close());
  ASSERT_OK(store_->Close());  // idempotent
  std::string v;
  EXPECT_EQ(store_->Put("k", "v").code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Get("k", &v).code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->WriteBarrier().code(), Code::kInvalidArgument);
  store_.reset();
}

// The threads of this process, by name.
std::vector<std::string> ThreadNames() {
  std::vector<std::string> names;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return names;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  closedir(d);
  return names;
}

// A closed store leaves no thread of its backend behind, so a child forked
// after it (a shell's subshell, Python's os.fork) can open the store, run
// its backend's flushes and compactions, and exit. With the engines' own
// process-wide thread pools, the child waited forever for work that no
// thread of its ran, or in exit() for the parent's threads.
TEST_P(KVTest, ClosedStoreLeavesNoThreadsAndAForkedChildUsesIt) {
  StoreOptions o = Options();
  o.write_buffer_size = 64u << 10;  // background flushes (and compactions)
  ReopenWith(o);
  // Barriers in between: a store that buffers updates writes a batch at
  // each, and the batches fill several memtables.
  const std::string v = Pattern(5, 32u << 10);
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(store_->Put("p" + std::to_string(i), v));
    if (i % 4 == 3) ASSERT_OK(store_->WriteBarrier());
  }
  ASSERT_OK(store_->Close());
  store_.reset();
  // A joined thread may stay listed for a moment after pthread_join
  // returned (its tid is cleared before the kernel lets the task go).
  std::vector<std::string> threads = ThreadNames();
  for (int t = 0; t < 200 && threads.size() > 1; ++t) {
    usleep(10000);
    threads = ThreadNames();
  }
  std::string listed;
  for (const std::string& t : threads) listed += " " + t;
  ASSERT_EQ(threads.size(), 1u) << "threads left after Close:" << listed;

  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << strerror(errno);
  if (pid == 0) {
    // Exit codes name the step that failed; exit() (not _exit) runs the
    // libraries' static destructors, as a subshell's exit does.
    std::unique_ptr<Store> store;
    if (!Store::Open(o, path_, &store).ok()) _exit(10);
    std::string got;
    if (!store->Get("p39", &got).ok() || got != v) _exit(11);
    for (int i = 0; i < 40; ++i) {
      if (!store->Put("c" + std::to_string(i), v).ok()) _exit(12);
      if (i % 4 == 3 && !store->WriteBarrier().ok()) _exit(13);
    }
    if (!store->Close().ok()) _exit(14);
    store.reset();
    exit(0);
  }
  int status = 0;
  pid_t done = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    usleep(20000);
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the forked child did not finish within 60 s";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "child failed at step (exit code)";
  OpenStore(&store_);
  ExpectValue("c39", v);
  ExpectValue("p0", v);
}

INSTANTIATE_TEST_SUITE_P(Backends, KVTest, ::testing::ValuesIn(kConfigs),
                         [](const auto& info) { return info.param.name; });

// ---- opening errors: each has its code and a message naming the path ----

class OpenErrorTest : public ::testing::TestWithParam<Config> {
 protected:
  StoreOptions Options() const {
    StoreOptions o;
    EXPECT_OK(o.SetAll(GetParam().options));
    return o;
  }
  Status OpenAt(const std::string& path, std::unique_ptr<Store>* store) {
    return Store::Open(Options(), path, store);
  }
  TempDir dir_;
};

void ExpectError(const Status& s, Code code, const std::string& path) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos)
      << "message does not name " << path << ": " << s.ToString();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

TEST_P(OpenErrorTest, DirectoryThatIsNotAStore) {
  const std::string path = dir_.Sub("notastore");
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  WriteFile(path + "/precious.dat", "user data");
  std::unique_ptr<Store> store;
  ExpectError(OpenAt(path, &store), Code::kNotAStore, path);
  EXPECT_EQ(store, nullptr);
  // Nothing was added to the directory, and its file is intact.
  std::string out;
  test::RunCommand("ls -A " + path, &out);
  EXPECT_EQ(out, "precious.dat\n");
}

TEST_P(OpenErrorTest, RegularFileIsNotAStore) {
  const std::string path = dir_.Sub("file");
  WriteFile(path, "x");
  std::unique_ptr<Store> store;
  ExpectError(OpenAt(path, &store), Code::kNotAStore, path);
}

TEST_P(OpenErrorTest, PathThatCannotBeCreated) {
  const std::string file = dir_.Sub("file");
  WriteFile(file, "x");
  const std::string path = file + "/store";  // under a regular file
  std::unique_ptr<Store> store;
  ExpectError(OpenAt(path, &store), Code::kIOError, path);
  ExpectError(OpenAt("/proc/sluice-cannot-exist/store", &store),
              Code::kIOError, "/proc/sluice-cannot-exist/store");
}

TEST_P(OpenErrorTest, MissingStoreWithoutCreate) {
  StoreOptions o = Options();
  o.create_if_missing = false;
  const std::string path = dir_.Sub("missing");
  std::unique_ptr<Store> store;
  ExpectError(Store::Open(o, path, &store), Code::kNotFound, path);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "must not be created";
}

// Writes a header per the format in src/store/header.h, independently of
// the library's encoder.
std::string MakeHeader(uint32_t version, uint32_t backend, uint32_t size = 64,
                       uint32_t layout = 0, uint64_t created = 0) {
  std::string h(size, '\0');
  memcpy(&h[0], "SLUICEKV", 8);
  memcpy(&h[8], &version, 4);
  memcpy(&h[12], &size, 4);
  memcpy(&h[16], &backend, 4);
  memcpy(&h[24], &created, 8);
  memcpy(&h[32], &layout, 4);
  uint64_t sum = XXH64(h.data(), size - 8, 0);
  memcpy(&h[size - 8], &sum, 8);
  return h;
}

// The creation time in the header of the store at `path`: the store's
// barrier record carries it too, so a rewritten header must keep it.
uint64_t CreatedOf(const std::string& path) {
  std::ifstream in(path + "/SLUICE", std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  uint64_t created = 0;
  if (data.size() >= 32) memcpy(&created, data.data() + 24, 8);
  return created;
}

TEST_P(OpenErrorTest, HeaderMatchesTheDocumentedFormat) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(OpenAt(path, &store));
  BackendKind kind = store->backend();
  ASSERT_OK(store->Close());
  std::ifstream in(path + "/SLUICE", std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(data.size(), 64u);
  std::string want = MakeHeader(3, static_cast<uint32_t>(kind), 64,
                                static_cast<uint32_t>(store->layout()));
  // Bytes 24..31 hold the creation time; compare everything else.
  EXPECT_EQ(data.substr(0, 24), want.substr(0, 24));
  EXPECT_EQ(data.substr(32, 24), want.substr(32, 24));
  EXPECT_EQ(XXH64(data.data(), 56, 0),
            *reinterpret_cast<const uint64_t*>(data.data() + 56));
}

TEST_P(OpenErrorTest, StoreOfNewerFormatVersion) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(OpenAt(path, &store));
  BackendKind kind = store->backend();
  ASSERT_OK(store->Put("k", "v"));
  ASSERT_OK(store->Close());
  store.reset();
  // A future version with a longer header: still verifiable, refused.
  WriteFile(path + "/SLUICE",
            MakeHeader(4, static_cast<uint32_t>(kind), 96, 2));
  Status s = OpenAt(path, &store);
  ExpectError(s, Code::kVersionTooNew, path);
  EXPECT_NE(s.message().find("version 4"), std::string::npos) << s.ToString();
}

TEST_P(OpenErrorTest, VersionOneHeaderMeansLsmLayout) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  StoreOptions o = Options();
  o.layout = StoreLayout::kLsm;
  ASSERT_OK(Store::Open(o, path, &store));
  BackendKind kind = store->backend();
  ASSERT_OK(store->Put("k", std::string(10000, 'v')));
  ASSERT_OK(store->Close());
  store.reset();
  // Version 1 had no layout field: zero there is the lsm layout.
  const uint64_t created = CreatedOf(path);
  WriteFile(path + "/SLUICE",
            MakeHeader(1, static_cast<uint32_t>(kind), 64, 0, created));
  ASSERT_OK(OpenAt(path, &store));
  EXPECT_EQ(store->layout(), StoreLayout::kLsm);
  std::string v;
  ASSERT_OK(store->Get("k", &v));
  EXPECT_EQ(v, std::string(10000, 'v'));
  ASSERT_OK(store->Close());
  store.reset();
  // An unknown layout id is refused by name.
  WriteFile(path + "/SLUICE",
            MakeHeader(2, static_cast<uint32_t>(kind), 64, 9, created));
  Status s = OpenAt(path, &store);
  ExpectError(s, Code::kNotSupported, path);
  EXPECT_NE(s.message().find("layout"), std::string::npos) << s.ToString();
}

TEST_P(OpenErrorTest, WrongLayoutIsRefused) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(OpenAt(path, &store));
  EXPECT_EQ(store->layout(), StoreLayout::kVlog);  // the default
  ASSERT_OK(store->Close());
  store.reset();
  StoreOptions o = Options();
  o.layout = StoreLayout::kLsm;
  Status s = Store::Open(o, path, &store);
  ExpectError(s, Code::kInvalidArgument, path);
  EXPECT_NE(s.message().find("layout vlog"), std::string::npos) << s.ToString();
  o.layout = StoreLayout::kDefault;
  ASSERT_OK(Store::Open(o, path, &store));
}

TEST_P(OpenErrorTest, CorruptOrTruncatedHeader) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(OpenAt(path, &store));
  BackendKind kind = store->backend();
  const uint32_t layout = static_cast<uint32_t>(store->layout());
  ASSERT_OK(store->Close());
  store.reset();
  const uint64_t created = CreatedOf(path);
  std::string h = MakeHeader(3, static_cast<uint32_t>(kind), 64, layout, created);
  h[20] ^= 1;  // a flipped bit in the flags
  WriteFile(path + "/SLUICE", h);
  ExpectError(OpenAt(path, &store), Code::kCorruption, path);
  WriteFile(path + "/SLUICE", h.substr(0, 30));
  ExpectError(OpenAt(path, &store), Code::kCorruption, path);
  WriteFile(path + "/SLUICE",
            MakeHeader(3, static_cast<uint32_t>(kind), 64, layout, created));
  ASSERT_OK(OpenAt(path, &store));  // repaired header opens again
}

TEST_P(OpenErrorTest, WrongBackendIsRefused) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(OpenAt(path, &store));
  BackendKind other = store->backend() == BackendKind::kRocksDB
                          ? BackendKind::kLevelDB
                          : BackendKind::kRocksDB;
  ASSERT_OK(store->Close());
  store.reset();
  StoreOptions o = Options();
  o.backend = other;
  ExpectError(Store::Open(o, path, &store), Code::kInvalidArgument, path);
  o.backend = BackendKind::kDefault;  // default opens whatever it is
  ASSERT_OK(Store::Open(o, path, &store));
}

TEST_P(OpenErrorTest, BadOptionsAreRefusedBeforeTouchingDisk) {
  StoreOptions o = Options();
  o.sync_writes = true;
  o.wal = false;
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  EXPECT_EQ(Store::Open(o, path, &store).code(), Code::kInvalidArgument);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

const Config kBackendsOnly[] = {
    {"rocksdb", "backend=rocksdb"},
    {"leveldb", "backend=leveldb"},
};
INSTANTIATE_TEST_SUITE_P(Backends, OpenErrorTest,
                         ::testing::ValuesIn(kBackendsOnly),
                         [](const auto& info) { return info.param.name; });

TEST(LevelDBOptions, UnsupportedOptionsAreNamed) {
  TempDir dir;
  StoreOptions o;
  o.backend = BackendKind::kLevelDB;
  o.blob_files = true;
  std::unique_ptr<Store> store;
  Status s = Store::Open(o, dir.Sub("s"), &store);
  EXPECT_EQ(s.code(), Code::kNotSupported);
  EXPECT_NE(s.message().find("blob_files"), std::string::npos) << s.ToString();
  EXPECT_NE(access(dir.Sub("s").c_str(), F_OK), 0)
      << "a refused store must not be created";
}

}  // namespace
}  // namespace sluice
