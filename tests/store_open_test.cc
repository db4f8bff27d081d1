// Opening and creating stores: what a creation that did not finish leaves
// behind, and headers that do not match the store.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

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

// A barriered value overwritten, then the tree flushed on its own (its
// write buffer full of small values) while the new value still waited in
// the value log's memory, then a crash: the key must read as the old value
// or the new one, never as neither.
class CrashAfterOverwriteTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CrashAfterOverwriteTest, ReadsTheOldValueOrTheNew) {
  test::TempDir dir;
  const std::string path = dir.path() + "/store";
  const std::string options = std::string(GetParam()) + ",write_buffer_size=256k";
  std::string out;
  ASSERT_EQ(test::RunCommand(std::string(KV_HELPER) + " overwrite " + path +
                                 " " + options,
                             &out),
            0)
      << out;
  StoreOptions o;
  ASSERT_OK(o.SetAll(options));
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(o, path, &store));
  std::string v;
  ASSERT_OK(store->Get("B", &v));
  EXPECT_TRUE(v == std::string(100000, 'a') || v == std::string(100000, 'b'))
      << "B reads " << v.size() << " bytes that are neither value";
  ASSERT_OK(store->Close());
}

INSTANTIATE_TEST_SUITE_P(Configs, CrashAfterOverwriteTest,
                         ::testing::Values("backend=rocksdb", "backend=leveldb",
                                           "backend=rocksdb,wal=1",
                                           "backend=leveldb,wal=1"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace sluice
