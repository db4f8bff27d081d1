// The fault-injection Env itself (what a power loss keeps, what a fault
// does), and the store over it: a power loss keeps every barrier, an
// injected error is never reported as success.
#include "fault_env.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sluice/kv.h"
#include "sluice/write_batch.h"
#include "test_util.h"

namespace sluice {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Installs a FaultEnv as the default for a test's lifetime.
class FaultEnvTest : public ::testing::Test {
 protected:
  FaultEnvTest() : env_(dir_.Sub("stash")) { old_ = Env::SetDefault(&env_); }
  ~FaultEnvTest() override { Env::SetDefault(old_); }
  void WriteAt(int fd, const std::string& data, off_t at) {
    ASSERT_EQ(env_.Pwrite(fd, data.data(), data.size(), at),
              static_cast<ssize_t>(data.size()));
  }

  test::TempDir dir_;
  test::FaultEnv env_;
  Env* old_;
};

TEST_F(FaultEnvTest, PowerLossKeepsWhatWasSyncedAndNothingElse) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b");
  int fd = env_.Open(a.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  WriteAt(fd, "synced-synced", 0);
  ASSERT_EQ(env_.Fdatasync(fd), 0);
  WriteAt(fd, "LOST", 0);        // overwrite
  WriteAt(fd, "-appended", 13);  // grow
  ASSERT_EQ(env_.Close(fd), 0);
  int fb = env_.Open(b.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fb, 0);
  WriteAt(fb, "never synced", 0);
  ASSERT_EQ(env_.Close(fb), 0);
  ASSERT_EQ(Slurp(a), "LOSTed-synced-appended");
  ASSERT_TRUE(env_.DropUnsynced().ok());
  EXPECT_EQ(Slurp(a), "synced-synced");
  EXPECT_FALSE(Exists(b)) << "a file created after the last sync survived";
  // The machine is off: every call fails.
  EXPECT_LT(env_.Open(a.c_str(), O_RDONLY | O_CLOEXEC, 0), 0);
  EXPECT_EQ(errno, EIO);
}

TEST_F(FaultEnvTest, PowerLossUndoesNameOperationsAfterTheLastSync) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b"), c = dir_.Sub("c");
  for (const std::string& p : {a, b}) {
    int fd = env_.Open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    WriteAt(fd, "content of " + p, 0);
    ASSERT_EQ(env_.Fsync(fd), 0);
    ASSERT_EQ(env_.Close(fd), 0);
  }
  ASSERT_EQ(env_.Rename(a.c_str(), b.c_str()), 0);  // replaces b
  ASSERT_EQ(env_.Mkdir(c.c_str(), 0755), 0);
  ASSERT_TRUE(env_.DropUnsynced().ok());
  EXPECT_EQ(Slurp(a), "content of " + a);
  EXPECT_EQ(Slurp(b), "content of " + b);
  EXPECT_FALSE(Exists(c));
}

TEST_F(FaultEnvTest, ASyncMakesEarlierNameOperationsDurable) {
  const std::string a = dir_.Sub("a"), b = dir_.Sub("b");
  int fd = env_.Open(a.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  WriteAt(fd, "data", 0);
  ASSERT_EQ(env_.Fsync(fd), 0);
  ASSERT_EQ(env_.Close(fd), 0);
  ASSERT_EQ(env_.Unlink(a.c_str()), 0);
  int fb = env_.Open(b.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_EQ(env_.Fsync(fb), 0);  // commits the unlink and the create
  ASSERT_EQ(env_.Close(fb), 0);
  ASSERT_TRUE(env_.DropUnsynced().ok());
  EXPECT_FALSE(Exists(a));
  EXPECT_TRUE(Exists(b));
}

TEST_F(FaultEnvTest, InjectsTheNthCallAndCutsWritesShort) {
  const std::string a = dir_.Sub("a");
  int fd = env_.Open(a.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  env_.InjectAt(1, test::FaultEnv::kWrite, ENOSPC, /*short_write=*/true);
  WriteAt(fd, "first", 0);
  EXPECT_EQ(env_.Pwrite(fd, "0123456789", 10, 5), 5);  // cut short
  EXPECT_EQ(env_.Pwrite(fd, "56789", 5, 10), -1);      // then the error
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_EQ(env_.injected(), 1u);
  WriteAt(fd, "56789", 10);  // one fault only
  EXPECT_EQ(Slurp(a), "first0123456789");
  env_.InjectAt(0, test::FaultEnv::kSync, EIO);
  EXPECT_EQ(env_.Fsync(fd), -1);
  EXPECT_EQ(errno, EIO);
  ASSERT_EQ(env_.Close(fd), 0);
}

class StoreOverFaultEnv : public FaultEnvTest,
                          public ::testing::WithParamInterface<const char*> {
 protected:
  StoreOptions Options() {
    StoreOptions o;
    EXPECT_TRUE(o.SetAll(GetParam()).ok());
    o.write_buffer_size = 256 << 10;
    return o;
  }
};

// The LevelDB logs of the store at `path`, as "/leveldb/NAME" (a fault's
// path filter).
std::vector<std::string> LevelDBLogs(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path + "/leveldb")) {
    if (e.path().extension() == ".log") {
      out.push_back("/leveldb/" + e.path().filename().string());
    }
  }
  return out;
}

// Values large enough for the value log, small ones for the tree, and
// enough of them that the tree flushes on its own.
std::string Value(int i, int gen) {
  return test::Pattern(i * 1000 + gen, i % 3 == 0 ? 20000 : 100);
}

TEST_P(StoreOverFaultEnv, APowerLossKeepsTheLastBarrier) {
  const std::string path = dir_.Sub("store");
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
    for (int i = 0; i < 200; ++i) {
      ASSERT_TRUE(store->Put("k" + std::to_string(i), Value(i, 0)).ok());
    }
    ASSERT_TRUE(store->WriteBarrier().ok());
    for (int i = 0; i < 200; ++i) {  // overwrites, never made durable
      ASSERT_TRUE(store->Put("k" + std::to_string(i), Value(i, 1)).ok());
    }
    ASSERT_TRUE(env_.DropUnsynced().ok());
    store->Close();  // fails: the machine is off
  }
  Env::SetDefault(old_);
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), path, &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int i = 0; i < 200; ++i) {
    std::string v;
    s = store->Get("k" + std::to_string(i), &v);
    ASSERT_TRUE(s.ok()) << "k" << i << ": " << s.ToString();
    EXPECT_TRUE(v == Value(i, 0) || v == Value(i, 1)) << "k" << i;
  }
}

TEST_P(StoreOverFaultEnv, AnInjectedErrorIsNeverASuccessfulBarrier) {
  const std::string path = dir_.Sub("store");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
  const uint64_t before = env_.calls(test::FaultEnv::kWrite);
  env_.InjectAt(0, test::FaultEnv::kWrite | test::FaultEnv::kSync, EIO);
  Status s;
  for (int i = 0; i < 50 && s.ok(); ++i) {
    s = store->Put("k" + std::to_string(i), Value(i, 0));
  }
  if (s.ok()) s = store->WriteBarrier();
  EXPECT_GT(env_.calls(test::FaultEnv::kWrite), before);
  EXPECT_EQ(env_.injected(), 1u);
  EXPECT_FALSE(s.ok()) << "the fault was swallowed";
  EXPECT_FALSE(store->WriteBarrier().ok()) << "a later barrier forgot it";
}

// A write the tree could not finish (its log, or a table) is an error of
// that call and of every later barrier, and what earlier barriers made
// durable is still there after a power loss. LevelDB's log writer counts
// a failed record as written: a later barrier that succeeded made records
// that a restart could not read past.
TEST_P(StoreOverFaultEnv, AFailedTreeWriteFailsEveryLaterBarrier) {
  const std::string path = dir_.Sub("store");
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(store->Put("k" + std::to_string(i), Value(i, 0)).ok());
    }
    ASSERT_TRUE(store->WriteBarrier().ok());
    const std::string tree =
        std::string(GetParam()).find("leveldb") != std::string::npos
            ? "/leveldb/"
            : "/rocksdb/";
    env_.InjectAt(0, test::FaultEnv::kWrite, EIO, false, tree);
    Status s;
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 200; ++i) {
        store->Put("k" + std::to_string(i), Value(i, 1 + round)).ok();
      }
      s = store->WriteBarrier();
      if (env_.injected() > 0) break;
    }
    ASSERT_EQ(env_.injected(), 1u) << "no write of the tree was made";
    // The barrier that met the fault, or the next one, fails; none after.
    if (s.ok()) s = store->WriteBarrier();
    EXPECT_FALSE(s.ok()) << env_.fault();
    for (int i = 0; i < 20; ++i) store->Put("z" + std::to_string(i), "v").ok();
    EXPECT_FALSE(store->WriteBarrier().ok()) << "a barrier after the failed "
                                                "write succeeded: "
                                             << env_.fault();
    ASSERT_TRUE(env_.DropUnsynced().ok());
    store->Close();
  }
  Env::SetDefault(old_);
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), path, &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int i = 0; i < 20; ++i) {
    std::string v;
    s = store->Get("k" + std::to_string(i), &v);
    ASSERT_TRUE(s.ok()) << "k" << i << ": " << s.ToString();
    EXPECT_TRUE(v == Value(i, 0) || v == Value(i, 1) || v == Value(i, 2) ||
                v == Value(i, 3))
        << "k" << i;
  }
}

// A batch whose write fails is not applied, then or later: neither a read
// nor a later barrier finds its updates, so a caller that saw the error
// (the file layer, which then does not count the extent it wrote as
// stored) agrees with the store. LevelDB without a log buffers updates and
// writes them when the buffer fills; the batch that filled it was left in
// the buffer when that write failed, and went out with the next one.
TEST_P(StoreOverFaultEnv, AFailedBatchIsNeverApplied) {
  const std::string path = dir_.Sub("store");
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
  ASSERT_TRUE(store->Put("a", "before").ok());
  ASSERT_TRUE(store->WriteBarrier().ok());
  env_.InjectAt(0, test::FaultEnv::kWrite, ENOSPC);
  int failed = -1;
  Status s;
  for (int i = 0; i < 400 && failed < 0; ++i) {
    WriteBatch b;
    b.Put("b" + std::to_string(i), Value(i, 0));
    b.Put("c" + std::to_string(i), Value(i + 1, 0));
    s = store->Write(b);
    if (!s.ok()) failed = i;
  }
  if (failed < 0) s = store->WriteBarrier();  // the fault shows here
  env_.StopInjecting();
  ASSERT_EQ(env_.injected(), 1u);
  ASSERT_FALSE(s.ok()) << "the fault was swallowed";
  if (failed < 0) return;  // no batch failed: the barrier said so
  auto missing = [&](const std::string& when) {
    for (const char* k : {"b", "c"}) {
      std::string v;
      const Status g = store->Get(k + std::to_string(failed), &v);
      EXPECT_TRUE(g.IsNotFound())
          << when << ": " << k << failed << " of the failed batch: "
          << g.ToString();
    }
  };
  missing("after the error");
  store->WriteBarrier().ok();  // may fail: the fault may stay
  missing("after a barrier");
  std::string v;
  ASSERT_TRUE(store->Get("a", &v).ok());
  EXPECT_EQ(v, "before");
}

// LevelDB switches to a new log when its memtable is full and leaves the
// old memtable to a compaction in the background. It lets go of the old
// log without syncing it, and a barrier syncs only the new one: until the
// compaction has written its table, a power loss would take away the old
// log's tail, updates a barrier had acknowledged. The compaction is held
// before its table here, as a full disk or a slow one holds it.
TEST_P(StoreOverFaultEnv, AMemtableSwitchLosesNoBarrier) {
  if (std::string(GetParam()).find("leveldb") == std::string::npos) {
    GTEST_SKIP() << "RocksDB's barrier waits for its memtable's flush";
  }
  const std::string path = dir_.Sub("store");
  // Small values, about 300 KB: one memtable and a bit (a second full one
  // would wait for the held compaction).
  const int n = 300;
  auto value = [](int i) { return test::Pattern(i, 1000); };
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
    env_.StallOpens(".ldb");
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(store->Put("k" + std::to_string(i), value(i)).ok());
    }
    Status s = store->WriteBarrier();
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int t = 0; t < 500 && env_.stalls() == 0; ++t) usleep(10000);
    ASSERT_GT(env_.stalls(), 0u) << "the memtable was never switched";
    ASSERT_TRUE(env_.DropUnsynced().ok());
    env_.Unstall();
    store->Close();  // fails: the machine is off
  }
  Env::SetDefault(old_);
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), path, &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int lost = 0;
  for (int i = 0; i < n; ++i) {
    std::string v;
    s = store->Get("k" + std::to_string(i), &v);
    if (!s.ok() || v != value(i)) ++lost;
  }
  EXPECT_EQ(lost, 0) << "of " << n << " keys of the barrier";
}

// The log LevelDB let go of is synced before the next log's records are
// written (with wal=1 by the next write, else by the barrier); when that
// sync fails, the write or barrier fails, and so does every later one (the
// log may have lost what it held), and what the barrier before had made
// durable stays.
TEST_P(StoreOverFaultEnv, ARotatedLogThatCannotBeSyncedFailsTheBarrier) {
  if (std::string(GetParam()).find("leveldb") == std::string::npos) {
    GTEST_SKIP() << "RocksDB's barrier waits for its memtable's flush";
  }
  const std::string path = dir_.Sub("store");
  const int n = 300;
  auto value = [](int i, int round) { return test::Pattern(i + round, 1000); };
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(Options(), path, &store).ok());
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(store->Put("k" + std::to_string(i), value(i, 0)).ok());
    }
    ASSERT_TRUE(store->WriteBarrier().ok());
    auto logs = [&path] { return LevelDBLogs(path); };
    // The log written now is the one the memtable switch will let go of.
    const std::vector<std::string> first = logs();
    ASSERT_EQ(first.size(), 1u);
    const std::string log = first[0];
    env_.StallOpens(".ldb");
    env_.InjectAt(0, test::FaultEnv::kSync, EIO, false, log);
    Status s;
    int put = 0;  // the updates acknowledged
    for (; put < n && s.ok(); ++put) {
      s = store->Put("k" + std::to_string(put), value(put, 1));
    }
    if (s.ok()) s = store->WriteBarrier();
    EXPECT_FALSE(s.ok()) << "a write or barrier succeeded over a log it "
                            "could not sync";
    // (The held compaction may not even begin: LevelDB skips it once the
    // failed sync is its background error.)
    const std::vector<std::string> now = logs();
    ASSERT_TRUE(std::find_if(now.begin(), now.end(), [&log](const auto& l) {
                  return l != log;
                }) != now.end())
        << "the memtable was never switched";
    ASSERT_EQ(env_.injected(), 1u) << "the rotated log was never synced";
    (void)store->Put("z", "v");  // may fail already: the error is kept
    EXPECT_FALSE(store->WriteBarrier().ok()) << "a later barrier succeeded";
    ASSERT_TRUE(env_.DropUnsynced().ok());
    env_.Unstall();
    store->Close();
  }
  Env::SetDefault(old_);
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), path, &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // The first barrier's keys, then a prefix of the later updates (the new
  // log's, synced before the failure, must not outlive the old one's).
  int updated = 0;  // keys of the later updates found, in their order
  for (int i = 0; i < n; ++i) {
    std::string v;
    s = store->Get("k" + std::to_string(i), &v);
    if (i < 20) {
      ASSERT_TRUE(s.ok()) << "k" << i << ": " << s.ToString();
      EXPECT_TRUE(v == value(i, 0) || v == value(i, 1)) << "k" << i;
    } else {
      ASSERT_TRUE(s.ok() || s.IsNotFound()) << "k" << i << ": " << s.ToString();
      if (s.ok()) ASSERT_EQ(v, value(i, 1)) << "k" << i;
    }
    if (s.ok() && v == value(i, 1)) {
      EXPECT_EQ(updated, i) << "k" << i << " is there, k" << updated
                            << " (written before it) is not";
      updated = i + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, StoreOverFaultEnv,
                         ::testing::Values("backend=rocksdb", "backend=leveldb",
                                           "backend=rocksdb,wal=1",
                                           "backend=leveldb,wal=1",
                                           "backend=rocksdb,layout=lsm"),
                         test::OptionsParamName());

// LevelDB with wal=false holds its log's records in memory. A store with a
// barrier of "k<i>" (Value(i, 0), i < kBarriered), then a writer of "n<i>"
// (Value(i, 1)) on a thread of its own until a put fails, held where the
// memtable switch opens its new log.
class HeldLogTest : public StoreOverFaultEnv {
 protected:
  static constexpr int kBarriered = 20;
  void SetUp() override {
    path_ = dir_.Sub("store");
    ASSERT_TRUE(Store::Open(Options(), path_, &store_).ok());
    for (int i = 0; i < kBarriered; ++i) {
      ASSERT_TRUE(store_->Put("k" + std::to_string(i), Value(i, 0)).ok());
    }
    ASSERT_TRUE(store_->WriteBarrier().ok());
  }
  void TearDown() override {
    env_.Unstall();
    if (writer_.joinable()) writer_.join();
  }
  std::vector<std::string> Logs() const { return LevelDBLogs(path_); }
  // Starts the writer; true once the switch is held (the open of the new
  // log waits), false if it never came.
  bool WriteUntilTheSwitch() {
    env_.StallOpens(".log");
    writer_ = std::thread([this] {
      for (int i = 0; i < 20000; ++i) {
        failed_ = store_->Put("n" + std::to_string(i), Value(i, 1));
        if (!failed_.ok()) return;
        written_ = i + 1;
      }
    });
    for (int t = 0; t < 1000 && env_.stalls() == 0; ++t) usleep(10000);
    return env_.stalls() > 0;
  }
  // The store gone, opens it again with the real Env: the barrier's keys
  // read their values.
  void Reopen(std::unique_ptr<Store>* store) {
    Env::SetDefault(old_);
    Status s = Store::Open(Options(), path_, store);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (int i = 0; i < kBarriered; ++i) {
      std::string v;
      s = (*store)->Get("k" + std::to_string(i), &v);
      ASSERT_TRUE(s.ok()) << "k" << i << ": " << s.ToString();
      EXPECT_EQ(v, Value(i, 0)) << "k" << i;
    }
  }

  std::string path_;
  std::unique_ptr<Store> store_;
  std::thread writer_;
  Status failed_;  // the writer's first failure (read after it ended)
  std::atomic<int> written_{0};
};

// The values the held records point at are made durable when the records
// are written (at a barrier, or when enough wait) and before the table of
// a memtable switched away from is written. When the value log cannot be
// synced there (a full disk under it), the compaction must not write a
// table of locations whose values may be lost: after a power loss every
// key reads its barrier's value, a later one, or nothing -- never an error.
TEST_P(HeldLogTest, ATableNeverPointsAtValuesThatFailedToSync) {
  ASSERT_TRUE(WriteUntilTheSwitch()) << "the memtable never switched";
  env_.InjectAt(0, test::FaultEnv::kSync, EIO, false, ".vlog");
  env_.Unstall();
  writer_.join();
  ASSERT_EQ(env_.injected(), 1u) << "the value log was never synced";
  EXPECT_FALSE(failed_.ok()) << "the writer never met the failed sync";
  // The compaction of the switched memtable deletes the old log once its
  // table and the MANIFEST are synced, had it written its table.
  for (int t = 0; t < 100 && Logs().size() > 1; ++t) usleep(20000);
  ASSERT_TRUE(env_.DropUnsynced().ok());
  store_->Close();  // fails: the machine is off
  std::unique_ptr<Store> store;
  ASSERT_NO_FATAL_FAILURE(Reopen(&store));
  int errors = 0;
  for (int i = 0; i < written_; ++i) {
    std::string v;
    Status s = store->Get("n" + std::to_string(i), &v);
    if (s.IsNotFound()) continue;
    if (!s.ok() || v != Value(i, 1)) ++errors;
    EXPECT_TRUE(s.ok()) << "n" << i << ": " << s.ToString();
  }
  EXPECT_EQ(errors, 0) << "of " << written_ << " keys written after the barrier";
}

// The records a memtable switch left waiting in the old log are written
// before the new log's (unless the old memtable's table came first: the
// compaction is held here). When that write fails, no later record may
// reach a file -- not the rest of that write, not a barrier's, not the
// close's -- or a restart would replay the new log's records without the
// old log's: not a prefix of the updates.
TEST_P(HeldLogTest, NoLogRecordIsWrittenAfterAFailedOne) {
  const std::vector<std::string> before = Logs();
  ASSERT_EQ(before.size(), 1u);
  const std::string old_log = before[0];
  ASSERT_TRUE(WriteUntilTheSwitch()) << "the memtable never switched";
  env_.InjectAt(0, test::FaultEnv::kWrite, EIO, false, old_log);
  env_.StallOpens(".ldb");  // lets the log go on, holds the compaction
  writer_.join();
  ASSERT_FALSE(failed_.ok()) << "the writer never met the failed write";
  ASSERT_EQ(env_.injected(), 1u) << "the old log's records were never written";
  env_.Unstall();
  EXPECT_FALSE(store_->WriteBarrier().ok());
  store_->Close();  // fails; what it writes stays (a SIGKILL, not a power cut)
  for (const std::string& log : Logs()) {
    if (log == old_log) continue;
    EXPECT_EQ(std::filesystem::file_size(path_ + log), 0u)
        << log << " was written after the failed write of " << old_log;
  }
  std::unique_ptr<Store> store;
  ASSERT_NO_FATAL_FAILURE(Reopen(&store));
  int prefix = 0;  // the later keys found, in their order
  for (int i = 0; i < written_; ++i) {
    std::string v;
    Status s = store->Get("n" + std::to_string(i), &v);
    ASSERT_TRUE(s.ok() || s.IsNotFound()) << "n" << i << ": " << s.ToString();
    if (s.ok()) {
      ASSERT_EQ(v, Value(i, 1)) << "n" << i;
      EXPECT_EQ(prefix, i) << "n" << i << " is there, n" << prefix
                           << " (written before it) is not";
      prefix = i + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, HeldLogTest,
                         ::testing::Values("backend=leveldb"),
                         test::OptionsParamName());

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A read of a table that fails (as a bad sector does) is an error of the
// call that met it, and takes nothing away: the writer then ends without
// closing, and everything of its last barrier is there.
class ReadFaultTest : public FaultEnvTest,
                      public ::testing::WithParamInterface<const char*> {};

TEST_P(ReadFaultTest, AFailedTableReadLosesNoBarrier) {
  const std::string path = dir_.Sub("store");
  StoreOptions o;
  ASSERT_TRUE(o.SetAll(GetParam()).ok());
  o.write_buffer_size = 256 << 10;
  std::map<std::string, std::string> model;
  {
    Env::SetDefault(old_);
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(o, path, &store).ok());
    for (int round = 0; round < 6; ++round) {
      for (int i = 0; i < 300; ++i) {
        const std::string k = "k" + std::to_string(i);
        model[k] = Value(i, round);
        ASSERT_TRUE(store->Put(k, model[k]).ok());
      }
      ASSERT_TRUE(store->WriteBarrier().ok());
    }
    ASSERT_TRUE(store->Close().ok());
  }
  for (uint64_t n = 0; n < 40; ++n) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      Env::SetDefault(&env_);
      env_.InjectAt(n, test::FaultEnv::kRead, EIO, false, ".sst");
      std::unique_ptr<Store> store;
      if (!Store::Open(o, path, &store).ok()) _exit(0);
      for (int i = 0; i < 300; ++i) {
        const std::string k = "k" + std::to_string(i);
        std::string v;
        Status s = store->Get(k, &v);
        if (s.ok() && v != model[k]) _exit(3);  // a wrong value
        s = store->Append(k, "+");
        if (!s.ok()) _exit(0);
      }
      _exit(store->WriteBarrier().ok() ? 1 : 0);  // ends without closing
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "n=" << n;
    ASSERT_NE(WEXITSTATUS(status), 3) << "n=" << n << ": a wrong value read";
    if (WEXITSTATUS(status) == 1) {
      for (auto& [k, v] : model) v += "+";  // that barrier succeeded
    }
    std::unique_ptr<Store> store;
    Status s = Store::Open(o, path, &store);
    ASSERT_TRUE(s.ok()) << "n=" << n << ": " << s.ToString();
    int lost = 0;
    for (auto& [k, v] : model) {
      std::string got;
      s = store->Get(k, &got);
      if (!s.ok() || got != v) {
        // Appends after the barrier that ended the child may be there.
        if (s.ok() && got == v + "+") {
          v = got;
          continue;
        }
        ++lost;
      }
    }
    ASSERT_EQ(lost, 0) << "n=" << n << ": keys of the last barrier lost";
    ASSERT_TRUE(store->Close().ok());
  }
}

// An asynchronous update that fails stops the ones issued after it: the
// store holds a prefix of the updates, not the updates minus one. (An
// append reads the value it extends, so a failed table read fails it.)
TEST_P(ReadFaultTest, NothingIsAppliedBehindAFailedAsynchronousUpdate) {
  const std::string path = dir_.Sub("store");
  StoreOptions o;
  ASSERT_TRUE(o.SetAll(GetParam()).ok());
  o.write_buffer_size = 256 << 10;
  // Every append's look-up reads its table block, so that the 100th read
  // falls among them (a block cache would serve most from memory).
  o.block_cache_bytes = 0;
  Env::SetDefault(old_);
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(o, path, &store).ok());
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(store->Put("k" + std::to_string(i), Value(i, 0)).ok());
    }
    ASSERT_TRUE(store->Close().ok());
  }
  Env::SetDefault(&env_);
  {
    std::unique_ptr<Store> store;
    ASSERT_TRUE(Store::Open(o, path, &store).ok());
    env_.InjectAt(100, test::FaultEnv::kRead, EIO, false,
                  std::string(GetParam()).find("leveldb") != std::string::npos
                      ? ".ldb"
                      : ".sst");
    for (int i = 0; i < 300; ++i) {
      ASSERT_TRUE(
          store->Append("k" + std::to_string(i), "+", WriteMode::kAsync).ok());
    }
    Status z = store->Put("z", "after");
    ASSERT_EQ(env_.injected(), 1u) << "no table read failed";
    EXPECT_FALSE(z.ok()) << "a synchronous update went past the failed one";
    EXPECT_FALSE(store->WriteBarrier().ok());
    store->Close();
  }
  Env::SetDefault(old_);
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(o, path, &store).ok());
  std::string v;
  int updated = 0;
  bool gap = false;
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(store->Get("k" + std::to_string(i), &v).ok());
    if (v == Value(i, 0) + "+") {
      EXPECT_FALSE(gap) << "k" << i << " was updated after a failed update";
      ++updated;
    } else {
      ASSERT_EQ(v, Value(i, 0));
      gap = true;
    }
  }
  EXPECT_TRUE(gap) << "the failed update was applied";
  EXPECT_TRUE(store->Get("z", &v).IsNotFound());
}

INSTANTIATE_TEST_SUITE_P(Configs, ReadFaultTest,
                         ::testing::Values("backend=rocksdb",
                                           "backend=leveldb"),
                         test::OptionsParamName());

}  // namespace
}  // namespace sluice
