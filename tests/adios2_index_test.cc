// The ADIOS2 engine's step index (src/adios2/step_index.h): what it
// encodes decodes to the same, and damaged, forged or newer indexes are
// clear errors.
#include <gtest/gtest.h>

#include <string>

#include "adios2/step_index.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace adios2_engine {
namespace {

StepIndex Sample() {
  StepIndex x;
  x.rank = 3;
  x.step = 7;
  Block a;
  a.var = "temperature";
  a.type = "double";
  a.shape_id = Shape::kGlobalArray;
  a.shape = {400, 6};
  a.start = {300, 0};
  a.count = {100, 6};
  a.offset = 4096;
  a.bytes = 100 * 6 * 8;
  a.min = std::string(8, '\1');
  a.max = std::string(8, '\2');
  Block v;
  v.var = "rank_id";
  v.type = "int32_t";
  v.shape_id = Shape::kLocalValue;
  v.value = std::string("\x0b\x0c\0\0", 4);
  Block l;
  l.var = "particles";
  l.type = "float";
  l.shape_id = Shape::kLocalArray;
  l.count = {17};
  l.bytes = 68;
  x.blocks = {a, v, l};
  Attr s;
  s.name = "units";
  s.type = "string";
  s.elements = 1;
  s.data = EncodeStrings({"kelvin"});
  Attr d;
  d.name = "grid/spacing";
  d.type = "double";
  d.is_value = false;
  d.elements = 2;
  d.data = std::string(16, '\3');
  x.attrs = {s, d};
  return x;
}

// Rewrites the trailing checksum after a deliberate change.
std::string Reseal(std::string enc) {
  enc.resize(enc.size() - 8);
  PutFixed64(&enc, XXH64(enc.data(), enc.size(), 0));
  return enc;
}

TEST(Adios2StepIndex, RoundTrip) {
  const StepIndex x = Sample();
  StepIndex y;
  ASSERT_TRUE(DecodeStepIndex(EncodeStepIndex(x), "t", &y).ok());
  EXPECT_EQ(y.rank, 3u);
  EXPECT_EQ(y.step, 7u);
  ASSERT_EQ(y.blocks.size(), 3u);
  EXPECT_EQ(y.blocks[0].var, "temperature");
  EXPECT_EQ(y.blocks[0].shape, (std::vector<uint64_t>{400, 6}));
  EXPECT_EQ(y.blocks[0].start, (std::vector<uint64_t>{300, 0}));
  EXPECT_EQ(y.blocks[0].count, (std::vector<uint64_t>{100, 6}));
  EXPECT_EQ(y.blocks[0].offset, 4096u);
  EXPECT_EQ(y.blocks[0].bytes, 4800u);
  EXPECT_EQ(y.blocks[0].max, std::string(8, '\2'));
  EXPECT_EQ(y.blocks[1].shape_id, Shape::kLocalValue);
  EXPECT_EQ(y.blocks[1].value, std::string("\x0b\x0c\0\0", 4));
  EXPECT_EQ(y.blocks[2].count, (std::vector<uint64_t>{17}));
  ASSERT_EQ(y.attrs.size(), 2u);
  std::vector<std::string> strings;
  ASSERT_TRUE(DecodeStrings(y.attrs[0].data, y.attrs[0].elements, &strings).ok());
  EXPECT_EQ(strings, (std::vector<std::string>{"kelvin"}));
  EXPECT_FALSE(y.attrs[1].is_value);
  EXPECT_EQ(y.attrs[1].name, "grid/spacing");
  EXPECT_EQ(EncodeStepIndex(y), EncodeStepIndex(x));
}

TEST(Adios2StepIndex, EveryDamagedByteIsAnError) {
  const std::string enc = EncodeStepIndex(Sample());
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 0x20;
    StepIndex y;
    Status s = DecodeStepIndex(bad, "rank 3", &y);
    EXPECT_FALSE(s.ok()) << "byte " << i;
    EXPECT_NE(s.ToString().find("rank 3"), std::string::npos) << s.ToString();
  }
  for (size_t n = 0; n < enc.size(); ++n) {
    StepIndex y;
    EXPECT_FALSE(DecodeStepIndex(enc.substr(0, n), "t", &y).ok()) << n;
  }
}

TEST(Adios2StepIndex, ANewerVersionIsNamed) {
  std::string enc = EncodeStepIndex(Sample());
  EncodeFixed32(&enc[8], kStepIndexVersion + 1);
  StepIndex y;
  Status s = DecodeStepIndex(Reseal(enc), "t", &y);
  EXPECT_EQ(s.code(), Code::kNotSupported) << s.ToString();
  EXPECT_NE(s.ToString().find("version 2"), std::string::npos) << s.ToString();
}

TEST(Adios2StepIndex, ForgedBlocksAreRefused) {
  auto refused = [](StepIndex x, const char* why) {
    StepIndex y;
    Status s = DecodeStepIndex(EncodeStepIndex(x), "t", &y);
    EXPECT_TRUE(s.IsCorruption()) << why << ": " << s.ToString();
  };
  StepIndex x = Sample();
  x.blocks[0].count = {101, 6};  // 300 + 101 > 400
  refused(x, "beyond the shape");
  x = Sample();
  x.blocks[0].start = {300};
  refused(x, "dimensions disagree");
  x = Sample();
  x.blocks[0].offset = ~0ull - 10;
  refused(x, "offset + bytes overflow");
  x = Sample();
  x.blocks[1].shape = {4};
  refused(x, "a value with a shape");
  x = Sample();
  x.blocks[2].var.clear();
  refused(x, "no name");
  x = Sample();
  x.blocks[0].shape_id = static_cast<Shape>(3);  // joined arrays: not stored
  refused(x, "unknown shape id");
}

}  // namespace
}  // namespace adios2_engine
}  // namespace sluice
