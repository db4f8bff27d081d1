#include "sluice/options.h"

#include "sluice/fs.h"

#include "test_util.h"

namespace sluice {
namespace {

TEST(ParseSize, SuffixesArePowersOf1024) {
  size_t v = 0;
  ASSERT_OK(ParseSize("4096", &v));
  EXPECT_EQ(v, 4096u);
  ASSERT_OK(ParseSize("64k", &v));
  EXPECT_EQ(v, 65536u);
  ASSERT_OK(ParseSize("32M", &v));
  EXPECT_EQ(v, 32u << 20);
  ASSERT_OK(ParseSize("1g", &v));
  EXPECT_EQ(v, 1u << 30);
  ASSERT_OK(ParseSize("2MiB", &v));
  EXPECT_EQ(v, 2u << 20);
}

TEST(ParseSize, BadInputIsAnError) {
  size_t v = 7;
  for (const char* bad : {"", "k", "-1", "12q", "1.5m", "99999999999999999999g"}) {
    Status s = ParseSize(bad, &v);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << "'" << bad << "'";
  }
  EXPECT_EQ(v, 7u) << "a failed parse must not change the output";
}

TEST(StoreOptions, DefaultsAreLsmioTuning) {
  StoreOptions o;
  EXPECT_FALSE(o.wal);
  EXPECT_FALSE(o.compression);
  EXPECT_EQ(o.block_cache_bytes, 0u);
  EXPECT_EQ(o.bloom_bits, 10);
  EXPECT_EQ(o.tidy_tables, 16);
  EXPECT_FALSE(o.auto_compaction);
  EXPECT_EQ(o.write_buffer_size, 32u << 20);
  EXPECT_OK(o.Validate());
}

TEST(StoreOptions, SetByNameCoversEveryListedOption) {
  StoreOptions o;
  ASSERT_OK(o.SetAll("wal=on,compression=1;block_cache_bytes=8m,"
                     "write_buffer_size=64m,flush_threads=3,backend=leveldb"));
  EXPECT_TRUE(o.wal);
  EXPECT_TRUE(o.compression);
  EXPECT_EQ(o.block_cache_bytes, 8u << 20);
  EXPECT_EQ(o.write_buffer_size, 64u << 20);
  EXPECT_EQ(o.flush_threads, 3);
  EXPECT_EQ(o.backend, BackendKind::kLevelDB);
  // Every listed name is settable and shows up in ToString.
  const std::string dump = o.ToString();
  for (const auto& info : StoreOptions::List()) {
    EXPECT_NE(dump.find(std::string(info.name) + "="), std::string::npos)
        << info.name;
  }
  EXPECT_NE(dump.find("write_buffer_size=67108864"), std::string::npos);
}

TEST(StoreOptions, UnknownNamesAndBadValuesAreNamed) {
  StoreOptions o;
  Status s = o.Set("wall", "1");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("wall"), std::string::npos);
  s = o.Set("wal", "maybe");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("wal"), std::string::npos);
  s = o.Set("flush_threads", "0");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  s = o.Set("bloom_bits", "-1");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("bloom_bits"), std::string::npos);
  ASSERT_OK(o.Set("bloom_bits", "0"));
  EXPECT_EQ(o.bloom_bits, 0);
  s = o.Set("backend", "lmdb");
  EXPECT_NE(s.message().find("lmdb"), std::string::npos);
  EXPECT_EQ(o.SetAll("wal").code(), Code::kInvalidArgument);
}

TEST(StoreOptions, ValidateRejectsContradictions) {
  StoreOptions o;
  o.sync_writes = true;
  EXPECT_EQ(o.Validate().code(), Code::kInvalidArgument);
  o.wal = true;
  EXPECT_OK(o.Validate());
  o.direct_io_reads = o.mmap_reads = true;
  EXPECT_EQ(o.Validate().code(), Code::kInvalidArgument);
}

TEST(FsOptions, SetAllTakesExtentBytesAndStoreOptions) {
  FsOptions o;
  ASSERT_OK(o.SetAll("extent_bytes=1m;write_buffer_size=64m,backend=leveldb"));
  EXPECT_EQ(o.extent_bytes, size_t{1} << 20);
  EXPECT_EQ(o.store.write_buffer_size, size_t{64} << 20);
  EXPECT_EQ(o.store.backend, BackendKind::kLevelDB);
  for (const char* bad : {"extent_bytes=1k", "extent_bytes=512m",
                          "extent_bytes=lots", "extent_byte=1m", "extent_bytes"}) {
    FsOptions b;
    Status s = b.SetAll(bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad << ": " << s.ToString();
    EXPECT_EQ(b.extent_bytes, size_t{4} << 20) << bad;
  }
}

TEST(Status, OkIsCheapAndErrorsCarryCodeAndMessage) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "OK");
  Status e = Status::Busy("store /x is busy");
  Status copy = e;
  EXPECT_EQ(copy.code(), Code::kBusy);
  EXPECT_EQ(copy.ToString(), "Busy: store /x is busy");
  copy = ok;
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(e.message(), "store /x is busy");
}

}  // namespace
}  // namespace sluice
