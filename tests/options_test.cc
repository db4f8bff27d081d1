#include "sluice/options.h"

#include "sluice/fs.h"

#include <algorithm>
#include <functional>

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
  EXPECT_EQ(o.block_cache_bytes, StoreOptions::kBlockCacheAuto);
  EXPECT_NE(o.ToString().find("block_cache_bytes=auto"), std::string::npos)
      << o.ToString();
  ASSERT_OK(o.Set("block_cache_bytes", "8m"));
  ASSERT_OK(o.Set("block_cache_bytes", "auto"));
  EXPECT_EQ(o.block_cache_bytes, StoreOptions::kBlockCacheAuto);
  EXPECT_FALSE(o.Set("block_cache_bytes", "automatic").ok());
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
  EXPECT_NE(o.ToString().find("write_buffer_size=67108864"), std::string::npos);

  // Every member of StoreOptions by its name, a value other than its
  // default, and what the member then holds: written out here, not taken
  // from the library's table, so that a name missing from the table, or
  // one that sets another member (or none), fails.
  struct Case {
    const char* name;
    const char* value;
    std::function<bool(const StoreOptions&)> holds;
  };
  const std::vector<Case> cases = {
      {"backend", "leveldb",
       [](const StoreOptions& x) { return x.backend == BackendKind::kLevelDB; }},
      {"layout", "lsm",
       [](const StoreOptions& x) { return x.layout == StoreLayout::kLsm; }},
      {"vlog_min_value", "8k",
       [](const StoreOptions& x) { return x.vlog_min_value == 8192; }},
      {"vlog_file_bytes", "2g",
       [](const StoreOptions& x) { return x.vlog_file_bytes == size_t{2} << 30; }},
      {"vlog_direct_io", "off",
       [](const StoreOptions& x) { return !x.vlog_direct_io; }},
      {"vlog_direct_reads", "no",
       [](const StoreOptions& x) { return !x.vlog_direct_reads; }},
      {"vlog_write_buffers", "7",
       [](const StoreOptions& x) { return x.vlog_write_buffers == 7; }},
      {"create_if_missing", "false",
       [](const StoreOptions& x) { return !x.create_if_missing; }},
      {"read_only", "true", [](const StoreOptions& x) { return x.read_only; }},
      {"snapshot_reads", "1",
       [](const StoreOptions& x) { return x.snapshot_reads; }},
      {"wal", "on", [](const StoreOptions& x) { return x.wal; }},
      {"sync_writes", "yes", [](const StoreOptions& x) { return x.sync_writes; }},
      {"compression", "1", [](const StoreOptions& x) { return x.compression; }},
      {"block_cache_bytes", "8m",
       [](const StoreOptions& x) { return x.block_cache_bytes == 8u << 20; }},
      {"bloom_bits", "3", [](const StoreOptions& x) { return x.bloom_bits == 3; }},
      {"auto_compaction", "1",
       [](const StoreOptions& x) { return x.auto_compaction; }},
      {"tidy_tables", "5", [](const StoreOptions& x) { return x.tidy_tables == 5; }},
      {"mmap_reads", "1", [](const StoreOptions& x) { return x.mmap_reads; }},
      {"mmap_writes", "1", [](const StoreOptions& x) { return x.mmap_writes; }},
      {"write_buffer_size", "64m",
       [](const StoreOptions& x) { return x.write_buffer_size == 64u << 20; }},
      {"max_write_buffers", "5",
       [](const StoreOptions& x) { return x.max_write_buffers == 5; }},
      {"block_size", "16k",
       [](const StoreOptions& x) { return x.block_size == 16384; }},
      {"flush_threads", "3",
       [](const StoreOptions& x) { return x.flush_threads == 3; }},
      {"direct_io_flush", "1",
       [](const StoreOptions& x) { return x.direct_io_flush; }},
      {"direct_io_reads", "1",
       [](const StoreOptions& x) { return x.direct_io_reads; }},
      {"blob_files", "1", [](const StoreOptions& x) { return x.blob_files; }},
      {"min_blob_size", "1m",
       [](const StoreOptions& x) { return x.min_blob_size == 1u << 20; }},
      {"blob_file_size", "1g",
       [](const StoreOptions& x) { return x.blob_file_size == 1u << 30; }},
      {"async_queue_bytes", "16m",
       [](const StoreOptions& x) { return x.async_queue_bytes == 16u << 20; }},
  };
  std::vector<std::string> listed, named;
  for (const auto& info : StoreOptions::List()) listed.push_back(info.name);
  for (const Case& c : cases) named.push_back(c.name);
  EXPECT_EQ(listed, named) << "StoreOptions::List() is not the options above";
  StoreOptions all;
  for (const Case& c : cases) {
    StoreOptions one;
    EXPECT_FALSE(c.holds(one)) << c.name << ": its default already holds";
    ASSERT_OK(one.Set(c.name, c.value));
    EXPECT_TRUE(c.holds(one)) << c.name << "=" << c.value
                              << " did not reach its member";
    for (const Case& other : cases) {
      if (&other != &c) {
        EXPECT_FALSE(other.holds(one)) << c.name << " also set " << other.name;
      }
    }
    ASSERT_OK(all.Set(c.name, c.value));
  }
  // ToString shows every member as a value Set takes back.
  std::string dump = all.ToString();
  std::replace(dump.begin(), dump.end(), '\n', ',');
  StoreOptions back;
  ASSERT_OK(back.SetAll(dump));
  for (const Case& c : cases) {
    EXPECT_TRUE(c.holds(back)) << c.name << " in ToString: " << all.ToString();
  }
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
