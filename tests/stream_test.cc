// The stream API: std::iostream behaviour over files in Sluice.
#include "sluice/stream.h"

#include <algorithm>
#include <iterator>
#include <random>
#include <sstream>
#include <vector>

#include "counting_env.h"
#include "test_util.h"

namespace sluice {
namespace {

class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(fstream::initialize(dir_.path(), 0)); }
  void TearDown() override { EXPECT_OK(fstream::cleanup()); }
  test::TempDir dir_;
};

TEST_F(StreamTest, FormattedWriteAndRead) {
  {
    ofstream out("/numbers.txt");
    ASSERT_TRUE(out.good());
    for (int i = 0; i < 1000; ++i) out << i << ' ' << i * 0.5 << '\n';
    out.close();
    ASSERT_FALSE(out.fail());
  }
  ASSERT_OK(fstream::write_barrier());
  ifstream in("/numbers.txt");
  ASSERT_TRUE(in.is_open());
  int i = 0, n;
  double d;
  while (in >> n >> d) {
    ASSERT_EQ(n, i);
    ASSERT_DOUBLE_EQ(d, i * 0.5);
    ++i;
  }
  EXPECT_EQ(i, 1000);
  EXPECT_TRUE(in.eof());
}

TEST_F(StreamTest, BinaryBlocksIteratorsAndRdbuf) {
  const std::string data = test::Pattern(5, 3 << 20);  // larger than the buffer
  {
    ofstream out("/blob", std::ios::binary);
    out.write(data.data(), 1000);                    // buffered
    out.write(data.data() + 1000, data.size() - 1000);  // straight through
    ASSERT_TRUE(out.good());
  }  // the destructor closes
  ifstream in("/blob", std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_TRUE(back == data);
  // std::copy through iterators, and << rdbuf() (a stream-to-stream copy).
  {
    ifstream src("/blob");
    ofstream dst("/copy");
    dst << src.rdbuf();
  }
  ifstream copy("/copy");
  std::ostringstream all;
  all << copy.rdbuf();
  EXPECT_TRUE(all.str() == data);
  {
    ofstream out("/chars");
    std::string s = "iterators";
    std::copy(s.begin(), s.end(), std::ostreambuf_iterator<char>(out));
  }
  ifstream chars("/chars");
  std::string word;
  chars >> word;
  EXPECT_EQ(word, "iterators");
}

TEST_F(StreamTest, SeekTellAndReadWrite) {
  fstream io("/rw", std::ios::in | std::ios::out | std::ios::trunc);
  ASSERT_TRUE(io.is_open());
  io << "0123456789";
  EXPECT_EQ(io.tellp(), 10);
  io.seekp(3);
  io << "abc";
  io.seekg(0);
  std::string s;
  io >> s;
  EXPECT_EQ(s, "012abc6789");
  io.clear();
  io.seekg(-2, std::ios::end);
  char c;
  io.get(c);
  EXPECT_EQ(c, '8');
  EXPECT_EQ(io.tellg(), 9);
  io.flush();
  EXPECT_TRUE(io.good());
  io.close();
  ofstream app("/rw", std::ios::app);
  app << "END";
  app.close();
  ifstream in("/rw");
  std::getline(in, s);
  EXPECT_EQ(s, "012abc6789END");
}

TEST_F(StreamTest, FailuresSetFailbit) {
  ifstream missing("/no/such/file");
  EXPECT_FALSE(missing.is_open());
  EXPECT_TRUE(missing.fail());
  EXPECT_TRUE(missing.rdbuf()->status().IsNotFound())
      << missing.rdbuf()->status().ToString();
  EXPECT_EQ(fstream::initialize(dir_.path(), 0).code(), Code::kInvalidArgument)
      << "a second mount is refused";
}

// A block of `n` bytes that names its index in every 8 bytes.
std::string Block(uint64_t index, size_t n) {
  std::string b(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = index * 1000003 + i;
    memcpy(&b[i], &v, 8);
  }
  return b;
}

// A file written at random offsets, 16 KiB at a time (each write an extent
// of its own), read back at random offsets: each read takes what it asks
// for from the store, not a buffer-ful of the extents after it (which a
// reader at random offsets discards: each one a read of the device). Small
// reads, and a tellg among them, still go through the buffer.
TEST(StreamReadTest, AReadAfterASeekReadsWhatItAsksFor) {
  test::TempDir dir;
  constexpr int kBlocks = 128;
  constexpr size_t kSize = 16 * 1024;
  std::vector<int> order(kBlocks);
  for (int i = 0; i < kBlocks; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  ASSERT_OK(fstream::initialize(dir.path(), 0));
  {
    ofstream out("/random");
    for (int i : order) {
      out.seekp(static_cast<std::streamoff>(i) * kSize);
      const std::string b = Block(i, kSize);
      out.write(b.data(), b.size());
    }
    out.close();
    ASSERT_FALSE(out.fail());
  }
  ASSERT_OK(fstream::cleanup());

  test::CountingEnv env;
  test::ScopedEnv scoped(&env);
  ASSERT_OK(fstream::initialize(dir.path(), FileSystem::kReader));
  std::shuffle(order.begin(), order.end(), std::mt19937(8));
  {
    ifstream in("/random");
    ASSERT_TRUE(in.is_open());
    env.Reset();
    std::string b(kSize, '\0');
    for (int i : order) {
      in.seekg(static_cast<std::streamoff>(i) * kSize);
      in.read(&b[0], b.size());
      ASSERT_EQ(in.gcount(), static_cast<std::streamsize>(kSize)) << i;
      ASSERT_TRUE(b == Block(i, kSize)) << "block " << i;
    }
    // Each extent alone, in its 4 KiB blocks (20 KiB for 16 KiB and a
    // header); 4 times that when every read filled the 64 KiB buffer.
    EXPECT_LE(env.bytes(), kBlocks * kSize * 3 / 2)
        << env.bytes() << " bytes read for " << kBlocks * kSize;
    // Small sequential reads and a tell among them.
    in.seekg(5 * kSize + 100);
    std::string small(1000, '\0');
    const std::string want = Block(5, kSize) + Block(6, kSize);
    for (size_t at = 100; at + 1000 <= 2 * kSize; at += 1000) {
      ASSERT_EQ(in.tellg(), static_cast<std::streamoff>(5 * kSize + at));
      in.read(&small[0], small.size());
      ASSERT_EQ(in.gcount(), 1000);
      ASSERT_EQ(small, want.substr(at, 1000)) << "at " << at;
    }
  }
  ASSERT_OK(fstream::cleanup());
}

}  // namespace
}  // namespace sluice
