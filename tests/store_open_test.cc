// Opening and creating stores: what a creation that did not finish leaves
// behind, and headers that do not match the store.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <vector>
#include <memory>
#include <string>

#include "sluice/iterator.h"
#include "sluice/kv.h"
#include "test_util.h"

namespace sluice {
namespace {

void Touch(const std::string& path, const std::string& data = "junk") {
  std::ofstream(path) << data;
}

// A process killed while it created a store leaves the lock, the header's
// temporary and the backend's directory, but no header: nothing in it was
// ever acknowledged, and the next open creates the store afresh.
TEST(StoreOpenTest, AnUnfinishedCreationIsFinishedByTheNextOpen) {
  for (const char* backend : {"rocksdb", "leveldb"}) {
    test::TempDir dir;
    const std::string path = dir.path() + "/store";
    ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
    Touch(path + "/SLUICE.lock", "");
    Touch(path + "/SLUICE.tmp");
    ASSERT_EQ(mkdir((path + "/" + backend).c_str(), 0755), 0);
    Touch(path + "/" + backend + "/CURRENT", "MANIFEST-000009\n");
    ASSERT_EQ(mkdir((path + "/vlog").c_str(), 0755), 0);

    StoreOptions options;
    ASSERT_OK(options.Set("backend", backend));
    options.read_only = true;
    std::unique_ptr<Store> store;
    Status s = Store::Open(options, path, &store);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    EXPECT_NE(s.message().find("did not finish"), std::string::npos)
        << s.ToString();

    options.read_only = false;
    ASSERT_OK(Store::Open(options, path, &store));
    ASSERT_OK(store->Put("k", std::string(10000, 'v')));
    ASSERT_OK(store->Close());
    ASSERT_OK(Store::Open(options, path, &store));
    std::string v;
    ASSERT_OK(store->Get("k", &v));
    EXPECT_EQ(v, std::string(10000, 'v'));
    ASSERT_OK(store->Close());
  }
}

// Anything a creation does not make means the directory is someone else's.
TEST(StoreOpenTest, ADirectoryWithOtherFilesIsNotAStore) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  Touch(path + "/SLUICE.lock", "");
  ASSERT_EQ(mkdir((path + "/rocksdb").c_str(), 0755), 0);
  Touch(path + "/results.dat");
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), path, &store);
  EXPECT_EQ(s.code(), Code::kNotAStore) << s.ToString();
  struct stat st;
  EXPECT_EQ(stat((path + "/rocksdb").c_str(), &st), 0) << "nothing is removed";
  EXPECT_EQ(stat((path + "/results.dat").c_str(), &st), 0);
}

// A store whose header was lost is not an unfinished creation: its barrier
// record says it was written, and nothing of it is removed. Nor is a
// directory holding only names a creation uses, without the lock a
// creation takes first.
TEST(StoreOpenTest, ALostHeaderIsCorruptionNotAFreshStore) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  StoreOptions o;
  {
    std::unique_ptr<Store> store;
    ASSERT_OK(Store::Open(o, path, &store));
    ASSERT_OK(store->Put("k", std::string(10000, 'v')));
    ASSERT_OK(store->Close());
  }
  ASSERT_EQ(unlink((path + "/SLUICE").c_str()), 0);
  std::unique_ptr<Store> store;
  Status s = Store::Open(o, path, &store);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  struct stat st;
  EXPECT_EQ(stat((path + "/rocksdb").c_str(), &st), 0) << "nothing is removed";
  EXPECT_EQ(stat((path + "/vlog").c_str(), &st), 0);

  const std::string other = dir.path() + "/other";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((other + "/vlog").c_str(), 0755), 0);
  Touch(other + "/vlog/data");
  s = Store::Open(o, other, &store);
  EXPECT_EQ(s.code(), Code::kNotAStore) << s.ToString();
  EXPECT_EQ(stat((other + "/vlog/data").c_str(), &st), 0);
}

// The creation time in the header of the store at `path`.
uint64_t CreatedOf(const std::string& path) {
  std::ifstream in(path + "/SLUICE", std::ios::binary);
  std::string h((std::istreambuf_iterator<char>(in)), {});
  uint64_t created = 0;
  if (h.size() >= 32) memcpy(&created, h.data() + 24, 8);
  return created;
}

// A checksum-valid header of `version`, `layout` and `flags` for the store
// at `path` (its backend and creation time kept).
void RewriteHeader(const std::string& path, uint32_t version, uint32_t layout,
                   uint32_t flags = 0) {
  std::ifstream in(path + "/SLUICE", std::ios::binary);
  std::string h((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(h.size(), 64u);
  memcpy(&h[8], &version, 4);
  memcpy(&h[20], &flags, 4);
  memcpy(&h[32], &layout, 4);
  const uint64_t sum = XXH64(h.data(), 56, 0);
  memcpy(&h[56], &sum, 8);
  Touch(path + "/SLUICE", h);
}

// A store of `options` with a few barriers' worth of small and large
// values, closed.
void Fill(const std::string& path, const StoreOptions& options) {
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(options, path, &store));
  for (int b = 0; b < 4; ++b) {
    for (int i = 0; i < 20; ++i) {
      const std::string k = "k" + std::to_string(b) + "/" + std::to_string(i);
      ASSERT_OK(store->Put(k, std::string(i % 2 ? 100 : 20000, 'a' + b)));
    }
    ASSERT_OK(store->WriteBarrier());
  }
  ASSERT_OK(store->Close());
}

std::vector<std::string> FilesMatching(const std::string& dir,
                                       const std::string& part) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) {
      if (std::string(e->d_name).find(part) != std::string::npos) {
        out.push_back(dir + "/" + e->d_name);
      }
    }
    closedir(d);
  }
  return out;
}

// A header that says layout lsm (or version 1, which means lsm) on a vlog
// store would return the tree's tagged locations as data.
TEST(StoreOpenTest, AHeaderThatLiesAboutTheLayoutIsCorruption) {
  for (const char* backend : {"rocksdb", "leveldb"}) {
    test::TempDir dir;
    const std::string path = dir.path() + "/store";
    StoreOptions o;
    ASSERT_OK(o.Set("backend", backend));
    Fill(path, o);
    std::unique_ptr<Store> store;
    for (uint32_t version : {3u, 1u}) {
      RewriteHeader(path, version, 1);  // lsm
      Status s = Store::Open(StoreOptions(), path, &store);
      EXPECT_EQ(s.code(), Code::kCorruption) << backend << " v" << version
                                             << ": " << s.ToString();
    }
    // Without its value log directory the tree's own record still tells.
    ASSERT_EQ(rename((path + "/vlog").c_str(), (path + "/moved").c_str()), 0);
    RewriteHeader(path, 3, 1);
    ASSERT_EQ(unlink((path + "/moved/00000001.vlog").c_str()), 0);
    Status s = Store::Open(StoreOptions(), path, &store);
    EXPECT_EQ(s.code(), Code::kCorruption) << backend << ": " << s.ToString();
    EXPECT_NE(s.message().find("layout"), std::string::npos) << s.ToString();
  }
  // And an lsm store whose header says vlog.
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  StoreOptions o;
  o.layout = StoreLayout::kLsm;
  Fill(path, o);
  RewriteHeader(path, 3, 2);
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), path, &store);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
}

TEST(StoreOpenTest, UnknownHeaderFlagsAreRefused) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  Fill(path, StoreOptions());
  RewriteHeader(path, 3, 2, 0x4);
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), path, &store);
  EXPECT_EQ(s.code(), Code::kNotSupported) << s.ToString();
  EXPECT_NE(s.message().find("flags"), std::string::npos) << s.ToString();
}

// The backend's own metadata cut short or removed: the store must say the
// data of completed barriers is missing, not open with the keys gone.
TEST(StoreOpenTest, ABackendThatComesBackWithLessIsCorruption) {
  struct Case {
    const char* options;
    const char* file;  // a file of the backend's to damage
    bool remove;       // else truncate to half
  };
  for (const Case& c : {Case{"backend=rocksdb", "MANIFEST-", false},
                        Case{"backend=rocksdb,layout=lsm", "MANIFEST-", false},
                        Case{"backend=leveldb", ".log", false},
                        Case{"backend=leveldb", ".log", true},
                        Case{"backend=leveldb,layout=lsm", ".log", true}}) {
    test::TempDir dir;
    const std::string path = dir.path() + "/store";
    StoreOptions o;
    ASSERT_OK(o.SetAll(c.options));
    Fill(path, o);
    const std::string backend_dir =
        path + (std::string(c.options).find("leveldb") != std::string::npos
                    ? "/leveldb"
                    : "/rocksdb");
    std::vector<std::string> files = FilesMatching(backend_dir, c.file);
    ASSERT_FALSE(files.empty()) << c.options;
    for (const std::string& f : files) {
      if (c.remove) {
        ASSERT_EQ(unlink(f.c_str()), 0);
      } else {
        struct stat st;
        ASSERT_EQ(stat(f.c_str(), &st), 0);
        ASSERT_EQ(truncate(f.c_str(), st.st_size / 2), 0);
      }
    }
    std::unique_ptr<Store> store;
    Status s = Store::Open(o, path, &store);
    EXPECT_EQ(s.code(), Code::kCorruption)
        << c.options << (c.remove ? " without " : " with half of ") << c.file
        << ": " << s.ToString();
  }
}

TEST(StoreOpenTest, AMissingOrForeignBarrierRecordIsCorruption) {
  test::TempDir dir;
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  Fill(a, StoreOptions());
  Fill(b, StoreOptions());
  std::unique_ptr<Store> store;
  // Another store's record (another creation time).
  ASSERT_EQ(rename((a + "/SLUICE.barrier").c_str(), (dir.path() + "/keep").c_str()), 0);
  ASSERT_EQ(link((b + "/SLUICE.barrier").c_str(), (a + "/SLUICE.barrier").c_str()), 0);
  Status s = Store::Open(StoreOptions(), a, &store);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  ASSERT_EQ(unlink((a + "/SLUICE.barrier").c_str()), 0);
  s = Store::Open(StoreOptions(), a, &store);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.ToString();
  ASSERT_EQ(rename((dir.path() + "/keep").c_str(), (a + "/SLUICE.barrier").c_str()), 0);
  ASSERT_OK(Store::Open(StoreOptions(), a, &store));
  std::string v;
  ASSERT_OK(store->Get("k3/1", &v));
  EXPECT_EQ(v, std::string(100, 'd'));
  ASSERT_OK(store->Close());
}

// The record's key is the store's: refused to callers, never listed.
TEST(StoreOpenTest, TheBarrierKeyIsReserved) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  Fill(path, StoreOptions());
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(StoreOptions(), path, &store));
  const std::string key("\0sluice:barrier", 15);
  EXPECT_EQ(store->Put(key, "x").code(), Code::kInvalidArgument);
  EXPECT_EQ(store->Delete(key).code(), Code::kInvalidArgument);
  std::string v;
  EXPECT_EQ(store->Get(key, &v).code(), Code::kInvalidArgument);
  int n = 0;
  std::unique_ptr<Iterator> it = store->NewIterator("", "");
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_NE(it->key(), key);
    ++n;
  }
  ASSERT_OK(it->status());
  EXPECT_EQ(n, 80);
  int back = 0;
  for (it->SeekForPrev("k0"); it->Valid(); it->Prev()) ++back;
  EXPECT_EQ(back, 0) << "nothing sorts before k0 but the record";
  it.reset();
  ASSERT_OK(store->Close());
}

// A barriered value overwritten, then the tree flushed on its own (its
// write buffer full of small values) while the new value still waited in
// the value log's memory, then a crash: the key must read as the old value
// or the new one, never as neither.
class CrashAfterOverwriteTest : public ::testing::TestWithParam<const char*> {};

// Runs `kv_helper CMD PATH OPTIONS ARGS` (which ends without closing the
// store), then opens the store it left.
void RunHelperThenOpen(const std::string& cmd, const std::string& path,
                       const std::string& options, const std::string& args,
                       std::unique_ptr<Store>* store) {
  std::string out;
  ASSERT_EQ(test::RunCommand(std::string(KV_HELPER) + " " + cmd + " " + path +
                                 " " + options + args,
                             &out),
            0)
      << out;
  StoreOptions o;
  ASSERT_OK(o.SetAll(options));
  ASSERT_OK(Store::Open(o, path, store));
}

TEST_P(CrashAfterOverwriteTest, ReadsTheOldValueOrTheNew) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  std::unique_ptr<Store> store;
  ASSERT_NO_FATAL_FAILURE(RunHelperThenOpen(
      "overwrite", path, std::string(GetParam()) + ",write_buffer_size=256k",
      "", &store));
  std::string v;
  ASSERT_OK(store->Get("B", &v));
  EXPECT_TRUE(v == std::string(100000, 'a') || v == std::string(100000, 'b'))
      << "B reads " << v.size() << " bytes that are neither value";
  ASSERT_OK(store->Close());
}

// Values for the value log, no barrier, then a crash right after the tree
// has first written its log on its own (LevelDB writes the records it
// holds once an eighth of a write buffer waits; with wal=1 each update is
// logged). The last values would then still be in the value log's memory
// had the log not been synced before the tree's: a location must never be
// written before its value. Every key the store has reads its value.
class CrashAfterSpillTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CrashAfterSpillTest, EveryKeyTheTreeKeptReadsItsValue) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  const int n = 20000;  // the helper stops long before
  const size_t size = 8192;
  std::unique_ptr<Store> store;
  ASSERT_NO_FATAL_FAILURE(RunHelperThenOpen(
      "spill", path, std::string(GetParam()) + ",write_buffer_size=256k",
      " " + std::to_string(n) + " " + std::to_string(size), &store));
  int found = 0, wrong = 0;
  for (int i = 0; i < n; ++i) {
    std::string v;
    Status s = store->Get("s" + std::to_string(i), &v);
    if (s.IsNotFound()) continue;
    EXPECT_TRUE(s.ok()) << "s" << i << ": " << s.ToString();
    if (s.ok()) ++found;
    if (!s.ok() || v != test::Pattern(i, size)) ++wrong;
  }
  EXPECT_GT(found, 0) << "the tree wrote nothing of its log: nothing tested";
  EXPECT_EQ(wrong, 0) << "of " << found << " keys found";
  ASSERT_OK(store->Close());
}

INSTANTIATE_TEST_SUITE_P(Configs, CrashAfterSpillTest,
                         ::testing::Values("backend=leveldb",
                                           "backend=rocksdb,wal=1",
                                           "backend=leveldb,wal=1"),
                         test::OptionsParamName());

INSTANTIATE_TEST_SUITE_P(Configs, CrashAfterOverwriteTest,
                         ::testing::Values("backend=rocksdb", "backend=leveldb",
                                           "backend=rocksdb,wal=1",
                                           "backend=leveldb,wal=1"),
                         test::OptionsParamName());

}  // namespace
}  // namespace sluice
