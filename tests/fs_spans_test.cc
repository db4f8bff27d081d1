// CoveredSpans (src/fs/covered_spans.h): the ranges a file's extents may cover,
// which let a write that replaces nothing skip the search of the index.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "fs/covered_spans.h"
#include "sluice/fs.h"
#include "test_util.h"

namespace sluice {
namespace fs {
namespace {

TEST(CoveredSpansTest, MeetsWhatWasAddedAndNothingElse) {
  CoveredSpans c;
  EXPECT_TRUE(c.Meets(0, 10)) << "unknown: every range may meet an extent";
  c.Add(0, 10);
  EXPECT_FALSE(c.known());
  EXPECT_TRUE(c.Meets(100, 110));
  c.SetEmpty();
  EXPECT_FALSE(c.Meets(0, 1000));
  c.Add(100, 200);
  c.Add(300, 400);
  EXPECT_FALSE(c.Meets(0, 100));
  EXPECT_FALSE(c.Meets(200, 300));
  EXPECT_FALSE(c.Meets(400, 500));
  EXPECT_TRUE(c.Meets(199, 201));
  EXPECT_TRUE(c.Meets(250, 301));
  EXPECT_TRUE(c.Meets(0, 1000));
  EXPECT_TRUE(c.Meets(150, 151));
  c.Add(200, 300);  // joins the two
  EXPECT_TRUE(c.Meets(250, 251));
  c.Add(50, 60);
  c.Add(40, 500);  // covers every span
  EXPECT_TRUE(c.Meets(45, 46));
  EXPECT_FALSE(c.Meets(500, 600));
  EXPECT_FALSE(c.Meets(0, 40));
  c.CutTo(250);
  EXPECT_FALSE(c.Meets(250, 600));
  EXPECT_TRUE(c.Meets(249, 250));
  c.CutTo(0);
  EXPECT_TRUE(c.known());
  EXPECT_FALSE(c.Meets(0, 1000));
}

// Against a byte map, over random adds and cuts.
TEST(CoveredSpansTest, AgreesWithAByteMap) {
  std::mt19937 rng(11);
  CoveredSpans c;
  c.SetEmpty();
  std::vector<bool> bytes(4096, false);
  for (int step = 0; step < 4000; ++step) {
    const uint64_t a = rng() % 4096, n = 1 + rng() % 64;
    const uint64_t b = std::min<uint64_t>(4096, a + n);
    if (rng() % 50 == 0) {
      c.CutTo(a);
      for (uint64_t i = a; i < 4096; ++i) bytes[i] = false;
    } else if (rng() % 2 == 0) {
      c.Add(a, b);
      for (uint64_t i = a; i < b; ++i) bytes[i] = true;
    } else {
      bool any = false;
      for (uint64_t i = a; i < b; ++i) any = any || bytes[i];
      ASSERT_EQ(c.Meets(a, b), any) << "step " << step << " [" << a << ", "
                                    << b << ")";
    }
  }
}

// A file written at random offsets and overwritten over parts of what it
// holds, across a close and a truncation: every byte reads back as last
// written (a write that replaces part of an extent must trim it, which
// the spans must not let it skip).
TEST(CoveredSpansTest, OverwritesAtRandomOffsetsReadBack) {
  test::TempDir dir;
  std::unique_ptr<FileSystem> fs;
  ASSERT_OK(FileSystem::Open(FsOptions(), dir.path(), 0, &fs));
  constexpr size_t kSize = 1 << 20;
  std::string want(kSize, '\0');
  std::mt19937 rng(5);
  for (int round = 0; round < 3; ++round) {
    std::unique_ptr<File> f;
    const int flags = kReadWrite | kCreate | (round == 2 ? kTruncate : 0);
    ASSERT_OK(fs->OpenFile("/f", flags, 0644, &f));
    if (round == 2) want.assign(kSize, '\0');
    for (int i = 0; i < 300; ++i) {
      const size_t at = rng() % kSize;
      const size_t n = std::min<size_t>(1 + rng() % 20000, kSize - at);
      std::string b(n, static_cast<char>('a' + (rng() % 26)));
      ASSERT_OK(f->PWrite(b.data(), n, at));
      want.replace(at, n, b);
      if (i % 100 == 99) ASSERT_OK(f->Truncate(kSize - 1000 * i / 100));
      if (i % 100 == 99) {
        want.replace(kSize - 1000 * i / 100, std::string::npos,
                     std::string(1000 * i / 100, '\0'));
      }
    }
    std::string got(kSize, '\0');
    size_t n = 0;
    ASSERT_OK(f->PRead(&got[0], kSize, 0, &n));
    ASSERT_TRUE(got.substr(0, n) == want.substr(0, n)) << "round " << round;
    ASSERT_OK(f->Close());
  }
  ASSERT_OK(fs->Close());
}

}  // namespace
}  // namespace fs
}  // namespace sluice
