// A randomised model test: random operations on one Sluice file and on a
// real file on disk; every read must return the same bytes from both.
// 20 seeds x 5000 operations, on each backend (value-log layout) and on
// RocksDB with the lsm layout.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "sluice/fs.h"
#include "test_util.h"

namespace sluice {
namespace {

using test::TempDir;

struct Model {
  int fd;
  std::string path;
};

class FsModelTest : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

// Sizes from 1 B to 4 MiB, mostly small (log-uniform below 64 KiB, 1 in 20
// up to 4 MiB), so 5000 operations stay quick while large writes still
// span many extents.
size_t RandomSize(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  const double top = u(rng) < 0.05 ? 22 : 16;  // log2(4 MiB), log2(64 KiB)
  return std::max<size_t>(1, static_cast<size_t>(std::exp2(u(rng) * top)));
}

TEST_P(FsModelTest, EveryReadMatchesARealFile) {
  const char* backend = std::get<0>(GetParam());
  const int seed = std::get<1>(GetParam());
  std::mt19937_64 rng(seed * 7919 + 17);
  TempDir dir;
  FsOptions options;
  ASSERT_OK(test::ApplyBackendParam(backend, &options.store));
  options.extent_bytes = 256u << 10;
  std::unique_ptr<FileSystem> fs;
  ASSERT_OK(FileSystem::Open(options, dir.Sub("fs"), 0, &fs));
  const std::string real = dir.Sub("real");
  int fd = open(real.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::unique_ptr<File> f;
  ASSERT_OK(fs->OpenFile("/f", kReadWrite | kCreate, 0644, &f));
  std::string buf, want, got;
  const uint64_t kMaxOffset = 24u << 20;
  int reads = 0;
  for (int op = 0; op < 5000; ++op) {
    const int kind = static_cast<int>(rng() % 100);
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    SCOPED_TRACE("seed " + std::to_string(seed) + " op " + std::to_string(op) +
                 " kind " + std::to_string(kind));
    if (kind < 35) {  // pwrite at a random offset
      const size_t n = RandomSize(rng);
      const uint64_t off = rng() % kMaxOffset;
      buf = test::Pattern(rng(), n);
      ASSERT_EQ(pwrite(fd, buf.data(), n, off), static_cast<ssize_t>(n));
      ASSERT_OK(f->PWrite(buf.data(), n, off));
    } else if (kind < 45) {  // append (sequential write at the end)
      const size_t n = RandomSize(rng) % 65536 + 1;
      buf = test::Pattern(rng(), n);
      ASSERT_EQ(pwrite(fd, buf.data(), n, size), static_cast<ssize_t>(n));
      uint64_t pos;
      ASSERT_OK(f->Seek(0, SEEK_END, &pos));
      ASSERT_EQ(pos, size);
      ASSERT_OK(f->Write(buf.data(), n));
    } else if (kind < 80) {  // read a random range, sometimes past the end
      const size_t n = RandomSize(rng);
      const uint64_t off = size ? rng() % (size + 1000) : 0;
      want.assign(n, '\0');
      got.assign(n, '\1');
      const ssize_t w = pread(fd, &want[0], n, off);
      ASSERT_GE(w, 0);
      size_t g = 0;
      ASSERT_OK(f->PRead(&got[0], n, off, &g));
      ASSERT_EQ(g, static_cast<size_t>(w)) << "read at " << off << " of " << n;
      ASSERT_TRUE(memcmp(want.data(), got.data(), g) == 0)
          << "bytes differ reading " << n << " at " << off;
      ++reads;
    } else if (kind < 88) {  // truncate, shrinking or growing
      const uint64_t to = rng() % kMaxOffset;
      ASSERT_EQ(ftruncate(fd, static_cast<off_t>(to)), 0);
      ASSERT_OK(f->Truncate(to));
    } else if (kind < 95) {  // reopen the handle (sometimes the whole FS)
      ASSERT_OK(f->Close());
      if (rng() % 3 == 0) {
        ASSERT_OK(fs->Close());
        ASSERT_OK(FileSystem::Open(options, dir.Sub("fs"), 0, &fs));
      }
      ASSERT_OK(fs->OpenFile("/f", kReadWrite, 0, &f));
    } else if (kind < 97) {  // unlink and start again
      ASSERT_OK(f->Close());
      ASSERT_OK(fs->Unlink("/f"));
      ASSERT_EQ(ftruncate(fd, 0), 0);
      ASSERT_OK(fs->OpenFile("/f", kReadWrite | kCreate | kExclusive, 0644, &f));
    } else {  // stat
      FileInfo info;
      ASSERT_OK(f->Stat(&info));
      ASSERT_EQ(info.size, size);
    }
  }
  // Finally the whole file, through a fresh file system, verified.
  ASSERT_OK(f->Close());
  ASSERT_OK(fs->Close());
  ASSERT_OK(FileSystem::Open(options, dir.Sub("fs"), 0, &fs));
  ASSERT_OK(fs->Verify("/f"));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  want.assign(st.st_size, '\0');
  ASSERT_EQ(pread(fd, &want[0], want.size(), 0), st.st_size);
  ASSERT_OK(fs->OpenFile("/f", kRead, 0, &f));
  got.assign(want.size(), '\1');
  size_t g = 0;
  ASSERT_OK(f->PRead(&got[0], got.size(), 0, &g));
  EXPECT_EQ(g, want.size());
  EXPECT_TRUE(got == want) << "final contents differ";
  EXPECT_GT(reads, 1000);
  close(fd);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs->Close());
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, FsModelTest,
    ::testing::Combine(::testing::Values("rocksdb", "leveldb", "rocksdb_lsm"),
                       ::testing::Range(1, 21)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param)) + "_seed" +
             std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace sluice
