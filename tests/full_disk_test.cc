// A full data root, on every configuration: the writer gets NoSpace, never
// an abort, and what its last barrier made durable survives.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "sluice/kv.h"
#include "test_util.h"

namespace sluice {
namespace {

class FullDiskTest : public ::testing::TestWithParam<const char*> {};

// In a child process, so that an abort shows as the child's death: writes
// values of `size` with barriers until the root is full, then keeps
// calling barrier and close, as a program that retries would.
int FillChild(const std::string& path, const StoreOptions& o, size_t size) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(o, path, &store);
  for (int i = 0; s.ok() && i < 8; ++i) {
    s = store->Put("kept" + std::to_string(i), test::Pattern(i, 256 * 1024));
  }
  if (s.ok()) s = store->WriteBarrier();
  if (!s.ok()) {
    fprintf(stderr, "full_disk_test: first barrier: %s\n", s.ToString().c_str());
    return 10;
  }
  for (int i = 0; i < 100000 && s.ok(); ++i) {
    s = store->Put("more" + std::to_string(i), test::Pattern(1000 + i, size));
    if (s.ok() && i % 7 == 6) s = store->WriteBarrier();
  }
  if (s.code() != Code::kNoSpace) {
    fprintf(stderr, "full_disk_test: not NoSpace: %s\n", s.ToString().c_str());
    return 11;
  }
  for (int i = 0; i < 3; ++i) {
    store->Put("again" + std::to_string(i), test::Pattern(i, size));
    store->WriteBarrier();
  }
  store->Close();
  return 0;
}

TEST_P(FullDiskTest, NoSpaceNeverAbortsAndKeepsTheLastBarrier) {
  test::TempDir dir;
  for (size_t size : {size_t{1} << 20, size_t{4000}, size_t{200}}) {
    const std::string root = dir.path() + "/small" + std::to_string(size);
    test::SmallTmpfs tmpfs(root, "16m");
    if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
    const std::string path = root + "/s";
    StoreOptions o;
    ASSERT_OK(o.SetAll(std::string(GetParam()) + ",write_buffer_size=1m"));
    const pid_t pid = fork();
    if (pid == 0) _exit(FillChild(path, o, size));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status))
        << GetParam() << ", values of " << size << " bytes: the writer died of "
        << (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "?");
    ASSERT_EQ(WEXITSTATUS(status), 0)
        << GetParam() << ", values of " << size << " bytes (10: could not "
        << "write the first barrier, 11: an error other than NoSpace)";
    ASSERT_TRUE(tmpfs.Resize("64m"));  // LevelDB writes a table at open
    std::unique_ptr<Store> store;
    o.read_only = true;
    ASSERT_OK(Store::Open(o, path, &store));
    for (int i = 0; i < 8; ++i) {
      std::string got;
      ASSERT_OK(store->Get("kept" + std::to_string(i), &got));
      EXPECT_TRUE(got == test::Pattern(i, 256 * 1024)) << i;
    }
    ASSERT_OK(store->Close());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, FullDiskTest,
    ::testing::Values("backend=rocksdb", "backend=leveldb",
                      "backend=rocksdb,layout=lsm,wal=1",
                      "backend=rocksdb,layout=lsm", "backend=rocksdb,wal=1",
                      "backend=leveldb,wal=1", "backend=leveldb,layout=lsm"),
    test::OptionsParamName());

}  // namespace
}  // namespace sluice
