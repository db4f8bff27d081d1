// The stream API: std::iostream behaviour over files in Sluice.
#include "sluice/stream.h"

#include <algorithm>
#include <iterator>
#include <sstream>

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

}  // namespace
}  // namespace sluice
