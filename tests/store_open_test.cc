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

}  // namespace
}  // namespace sluice
