// The configuration at the entry points that are no context: the K/V open
// (Store::Open) and the file layer (FileSystem::Open, the stream API's
// mount) take the options their caller did not give from SLUICE_*
// variables and SLUICE_CONFIG_FILE; what the caller gives wins. Also the
// two names for one setting (root and data_roots; options) and
// Config::ToFsOptions over given options and an entry point's defaults.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/config.h"
#include "sluice/fs.h"
#include "sluice/iterator.h"
#include "sluice/kv.h"
#include "sluice/stream.h"
#include "test_util.h"

namespace sluice {
namespace {

// Sets environment variables for the scope, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = getenv(name);
      saved_.push_back({name, old != nullptr, old ? old : ""});
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (const Saved& s : saved_) {
      if (s.had) {
        setenv(s.name.c_str(), s.value.c_str(), 1);
      } else {
        unsetenv(s.name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  struct Saved {
    std::string name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Opens a new store at dir/name with `options`; its backend, or a failure.
::testing::AssertionResult OpensAs(const StoreOptions& options,
                                   const std::string& path, BackendKind want) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(options, path, &store);
  if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
  const BackendKind got = store->backend();
  s = store->Close();
  if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
  if (got != want) {
    return ::testing::AssertionFailure()
           << "backend " << BackendName(got) << ", want " << BackendName(want);
  }
  return ::testing::AssertionSuccess();
}

// ---- the K/V open ----------------------------------------------------------

TEST(ConfigKvOpen, TakesTheEnvironment) {
  test::TempDir dir;
  ScopedEnv env({{"SLUICE_BACKEND", "leveldb"}});
  EXPECT_TRUE(OpensAs(StoreOptions(), dir.Sub("a"), BackendKind::kLevelDB));
}

TEST(ConfigKvOpen, AnOptionGivenBeatsTheEnvironment) {
  test::TempDir dir;
  ScopedEnv env({{"SLUICE_BACKEND", "leveldb"}});
  // Given by name, even as its default: kept.
  StoreOptions by_name;
  ASSERT_OK(by_name.Set("backend", "default"));
  EXPECT_TRUE(by_name.Given("backend"));
  EXPECT_TRUE(OpensAs(by_name, dir.Sub("a"), BackendKind::kRocksDB));
  // Given as a value that is not the default: kept.
  StoreOptions assigned;
  assigned.backend = BackendKind::kRocksDB;
  EXPECT_TRUE(assigned.Given("backend"));
  EXPECT_TRUE(OpensAs(assigned, dir.Sub("b"), BackendKind::kRocksDB));
  // Configuration off: exactly the struct, default included.
  StoreOptions exact;
  exact.use_configuration = false;
  EXPECT_FALSE(exact.Given("backend"));
  EXPECT_TRUE(OpensAs(exact, dir.Sub("c"), BackendKind::kRocksDB));
  // Other options given leave this one to the environment.
  StoreOptions other;
  ASSERT_OK(other.SetAll("wal=0,block_size=32k"));
  EXPECT_FALSE(other.Given("backend"));
  EXPECT_TRUE(OpensAs(other, dir.Sub("d"), BackendKind::kLevelDB));
}

TEST(ConfigKvOpen, ABadEnvironmentValueIsAnErrorNamingIt) {
  test::TempDir dir;
  ScopedEnv env({{"SLUICE_WAL", "maybe"}});
  std::unique_ptr<Store> store;
  Status s = Store::Open(StoreOptions(), dir.Sub("a"), &store);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_WAL")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'maybe'")) << s.message();
  EXPECT_FALSE(store);
  EXPECT_FALSE(Exists(dir.Sub("a"))) << "a failed open left a store";
  // Even an open that gives that option: the configuration is wrong.
  StoreOptions given;
  ASSERT_OK(given.Set("wal", "0"));
  EXPECT_EQ(Store::Open(given, dir.Sub("a"), &store).code(),
            Code::kInvalidArgument);
  // Unless it uses no configuration at all.
  given.use_configuration = false;
  ASSERT_OK(Store::Open(given, dir.Sub("a"), &store));
  ASSERT_OK(store->Close());
}

TEST(ConfigKvOpen, ReadsTheFileSluiceConfigFileNames) {
  test::TempDir dir;
  const std::string conf = dir.Sub("job.conf");
  std::ofstream(conf) << "layout = lsm\n[context:sim]\nbackend = leveldb\n"
                         "[global]\nbackend = rocksdb\n";
  ScopedEnv env({{"SLUICE_CONFIG_FILE", conf.c_str()}});
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(StoreOptions(), dir.Sub("a"), &store));
  // [global] applies; [context:sim] is a context's, not the K/V open's.
  EXPECT_EQ(store->backend(), BackendKind::kRocksDB);
  EXPECT_EQ(store->layout(), StoreLayout::kLsm);
  ASSERT_OK(store->Close());
  {
    // The environment beats the file.
    ScopedEnv layout({{"SLUICE_LAYOUT", "vlog"}});
    ASSERT_OK(Store::Open(StoreOptions(), dir.Sub("b"), &store));
    EXPECT_EQ(store->layout(), StoreLayout::kVlog);
    ASSERT_OK(store->Close());
  }
  // A file that cannot be read fails the open, naming it.
  ScopedEnv missing({{"SLUICE_CONFIG_FILE", dir.Sub("none.conf").c_str()}});
  Status s = Store::Open(StoreOptions(), dir.Sub("c"), &store);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), dir.Sub("none.conf"))) << s.message();
}

// ---- the file layer --------------------------------------------------------

// The backend of writer 0's store under `root`, by its directory.
std::string BackendDir(const std::string& root) {
  const std::string store = FileSystem::StorePath(root, 0);
  if (Exists(store + "/leveldb")) return "leveldb";
  if (Exists(store + "/rocksdb")) return "rocksdb";
  return "none";
}

// The keys of writer 0's store under `root` (closed).
size_t StoreKeys(const std::string& root) {
  StoreOptions ro;
  ro.read_only = true;
  ro.use_configuration = false;
  std::unique_ptr<Store> store;
  size_t keys = 0;
  if (!Store::Open(ro, FileSystem::StorePath(root, 0), &store).ok()) return 0;
  std::unique_ptr<Iterator> it = store->NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  store->Close();
  return keys;
}

Status OpenAndClose(const FsOptions& options, const std::string& root) {
  std::unique_ptr<FileSystem> fs;
  Status s = FileSystem::Open(options, root, 0, &fs);
  if (s.ok()) s = fs->Close();
  return s;
}

TEST(ConfigFileLayer, OpenTakesTheEnvironmentAndTheCallerBeatsIt) {
  test::TempDir dir;
  ScopedEnv env({{"SLUICE_BACKEND", "leveldb"}});
  ASSERT_OK(OpenAndClose(FsOptions(), dir.Sub("a")));
  EXPECT_EQ(BackendDir(dir.Sub("a")), "leveldb");
  FsOptions given;
  ASSERT_OK(given.Set("backend", "rocksdb"));
  ASSERT_OK(OpenAndClose(given, dir.Sub("b")));
  EXPECT_EQ(BackendDir(dir.Sub("b")), "rocksdb");
}

// Writes a 256 KiB file through a file system opened on `root` with
// `options`: each extent is a key of writer 0's store.
Status WriteAFile(const FsOptions& options, const std::string& root) {
  std::unique_ptr<FileSystem> fs;
  Status s = FileSystem::Open(options, root, 0, &fs);
  std::unique_ptr<File> file;
  if (s.ok()) s = fs->OpenFile("/f", kWrite | kCreate, 0644, &file);
  const std::string data(256 << 10, 'x');
  if (s.ok()) s = file->Write(data.data(), data.size());
  if (s.ok()) s = file->Close();
  if (fs) {
    Status c = fs->Close();
    if (s.ok()) s = c;
  }
  return s;
}

TEST(ConfigFileLayer, ExtentBytesFromTheEnvironmentAndTheCallerBeatsIt) {
  test::TempDir dir;
  FsOptions given;
  ASSERT_OK(given.Set("extent_bytes", "4m"));
  {
    ScopedEnv env({{"SLUICE_EXTENT_BYTES", "16k"}});
    ASSERT_OK(WriteAFile(FsOptions(), dir.Sub("a")));
    ASSERT_OK(WriteAFile(given, dir.Sub("b")));
  }
  // 16 extents of 16 KiB against one of 256 KiB.
  const size_t configured_keys = StoreKeys(dir.Sub("a"));
  const size_t given_keys = StoreKeys(dir.Sub("b"));
  EXPECT_GT(given_keys, 0u);
  EXPECT_GE(configured_keys, given_keys + 15)
      << configured_keys << " keys with 16k extents, " << given_keys
      << " with 4m";
}

TEST(ConfigFileLayer, ExtentBytesFromTheEnvironmentIsChecked) {
  test::TempDir dir;
  ScopedEnv env({{"SLUICE_EXTENT_BYTES", "1k"}});
  Status s = OpenAndClose(FsOptions(), dir.Sub("a"));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_EXTENT_BYTES")) << s.message();
  // A caller that gives extent_bytes still fails: the environment is bad.
  // One that uses no configuration opens.
  FsOptions exact;
  exact.store.use_configuration = false;
  ASSERT_OK(OpenAndClose(exact, dir.Sub("a")));
}

// Mounts `root` through the stream API, writes a 256 KiB file, unmounts.
Status WriteThroughTheMount(const std::string& root, const FsOptions& options) {
  Status s = stream_base::initialize(root, 0, options);
  if (!s.ok()) return s;
  {
    ofstream out("/f");
    out << std::string(256 << 10, 'x');
    out.close();
    if (!out) s = Status::IOError("writing /f through the stream API");
  }
  Status c = stream_base::cleanup();
  return s.ok() ? c : s;
}

TEST(ConfigFileLayer, TheMountTakesTheEnvironmentAndTheCallerBeatsIt) {
  test::TempDir dir;
  {
    ScopedEnv env({{"SLUICE_BACKEND", "leveldb"},
                   {"SLUICE_EXTENT_BYTES", "16k"}});
    ASSERT_OK(WriteThroughTheMount(dir.Sub("a"), FsOptions()));
    FsOptions given;
    given.store.backend = BackendKind::kRocksDB;
    ASSERT_OK(given.Set("extent_bytes", "4m"));
    ASSERT_OK(WriteThroughTheMount(dir.Sub("b"), given));
  }
  EXPECT_EQ(BackendDir(dir.Sub("a")), "leveldb");
  EXPECT_EQ(BackendDir(dir.Sub("b")), "rocksdb");
  // 16 extents of 16 KiB against one of 256 KiB.
  EXPECT_GE(StoreKeys(dir.Sub("a")), StoreKeys(dir.Sub("b")) + 15);
  EXPECT_GT(StoreKeys(dir.Sub("b")), 0u);
  ScopedEnv bad({{"SLUICE_BLOCK_SIZE", "lots"}});
  Status s = stream_base::initialize(dir.Sub("c"), 0);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_BLOCK_SIZE")) << s.message();
  if (s.ok()) stream_base::cleanup();
}

// ---- Config::ToFsOptions over given options and defaults -------------------

using test::Environ;

TEST(ConfigToFsOptions, GivenThenConfiguredThenTheEntryPointsDefaults) {
  Config c;
  ASSERT_OK(Config::Load("", "",
                         Environ({"SLUICE_WRITE_BUFFER_SIZE=64m",
                                  "SLUICE_WAL=1", "SLUICE_EXTENT_BYTES=2m"})
                             .get(),
                         &c));
  FsOptions given;
  ASSERT_OK(given.Set("wal", "0"));  // its default, given by name
  FsOptions defaults;
  defaults.extent_bytes = 1u << 20;
  defaults.store.vlog_write_buffers = 8;
  FsOptions o;
  ASSERT_OK(c.ToFsOptions(given, defaults, &o));
  EXPECT_FALSE(o.store.wal);                          // given
  EXPECT_EQ(o.store.write_buffer_size, 64u << 20);    // environment
  EXPECT_EQ(o.extent_bytes, 2u << 20);                // environment
  EXPECT_EQ(o.store.vlog_write_buffers, 8);           // the entry point's
  EXPECT_EQ(o.store.block_size, StoreOptions().block_size);  // default
  EXPECT_FALSE(o.store.use_configuration);            // complete
}

// ---- root and data_roots ---------------------------------------------------

TEST(ConfigRootAlias, RootAloneSetsTheFirstDataRoot) {
  Config c;
  ASSERT_OK(Config::Load("sim", "", Environ({"SLUICE_ROOT=/r"}).get(), &c));
  ConfigValue v = c.Get("data_roots");
  EXPECT_EQ(v.value, "/r");
  EXPECT_EQ(v.source, ConfigSource::kEnvironment);
  EXPECT_EQ(v.via, "root");
  EXPECT_EQ(v.SourceText(), "environment SLUICE_ROOT");
  v = c.Get("root");
  EXPECT_EQ(v.value, "/r");
  EXPECT_EQ(v.via, "");
}

TEST(ConfigRootAlias, DataRootsAloneSetsRoot) {
  Config c;
  ASSERT_OK(Config::Load(
      "sim", "", Environ({"SLUICE_DATA_ROOTS=/shm/c,/pfs/c"}).get(), &c));
  ConfigValue v = c.Get("root");
  EXPECT_EQ(v.value, "/shm/c");
  EXPECT_EQ(v.via, "data_roots");
  EXPECT_EQ(v.SourceText(), "environment SLUICE_DATA_ROOTS");
  EXPECT_EQ(Config().Get("root").value, ".");
}

TEST(ConfigRootAlias, BothInTheEnvironmentMustAgree) {
  Config c;
  Status s = Config::Load(
      "sim", "",
      Environ({"SLUICE_ROOT=/a", "SLUICE_DATA_ROOTS=/b,/c"}).get(), &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_ROOT")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "SLUICE_DATA_ROOTS")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'/a'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'/b,/c'")) << s.message();
  EXPECT_EQ(c.Get("data_roots").value, ".");  // unchanged
  // Agreeing: fine.
  ASSERT_OK(Config::Load(
      "sim", "",
      Environ({"SLUICE_ROOT=/b", "SLUICE_DATA_ROOTS=/b,/c"}).get(), &c));
  EXPECT_EQ(c.Get("data_roots").value, "/b,/c");
  EXPECT_EQ(c.Get("data_roots").via, "");
  EXPECT_EQ(c.Get("root").value, "/b");
}

TEST(ConfigRootAlias, TheStrongerSourceDecides) {
  test::TempDir dir;
  const std::string conf = dir.Sub("job.conf");
  std::ofstream(conf) << "data_roots = /shm/c,/pfs/c\n"  // 1
                         "[context:other]\n"            // 2
                         "root = /x\n";                 // 3
  // root from the environment replaces the file's first directory and
  // keeps the others.
  Config c;
  ASSERT_OK(Config::Load("sim", conf, Environ({"SLUICE_ROOT=/local/c"}).get(),
                         &c));
  EXPECT_EQ(c.Get("data_roots").value, "/local/c,/pfs/c");
  EXPECT_EQ(c.Get("data_roots").SourceText(), "environment SLUICE_ROOT");
  // data_roots from the API beats root from the environment.
  Config api;
  ASSERT_OK(api.Set("data_roots", "/api"));
  ASSERT_OK(Config::Load("sim", conf, Environ({"SLUICE_ROOT=/local/c"}).get(),
                         &api));
  EXPECT_EQ(api.Get("data_roots").value, "/api");
  EXPECT_EQ(api.Get("root").value, "/api");
  EXPECT_EQ(api.Get("root").SourceText(), "API (data_roots)");
  // root in [context:other] is stronger than [global] for that context.
  Config other;
  ASSERT_OK(Config::Load("other", conf, nullptr, &other));
  EXPECT_EQ(other.Get("data_roots").value, "/x,/pfs/c");
  EXPECT_EQ(other.Get("data_roots").SourceText(),
            "file " + conf + ":3 (root)");
}

TEST(ConfigRootAlias, BothInOneSectionOfTheFileMustAgree) {
  test::TempDir dir;
  const std::string conf = dir.Sub("job.conf");
  std::ofstream(conf) << "[context:other]\ndata_roots = /b\nroot = /a\n";
  Config c;
  // Even in another context's section: a file's mistakes show whichever
  // context reads it.
  Status s = Config::Load("sim", conf, nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), conf + ":3: root '/a'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "(line 2)")) << s.message();
}

TEST(ConfigRootAlias, BothByTheApiMustAgree) {
  Config c;
  ASSERT_OK(c.Set("data_roots", "/b,/c"));
  Status s = c.Set("root", "/a");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'/b,/c'")) << s.message();
  EXPECT_EQ(c.Get("root").value, "/b");  // nothing changed
  ASSERT_OK(c.Set("root", "/b"));
  EXPECT_FALSE(c.Set("data_roots", "/z").ok());
  EXPECT_EQ(c.Get("data_roots").value, "/b,/c");
}

// ---- options ---------------------------------------------------------------

TEST(ConfigOptionsList, ItemsCountAsTheirVariablesAtTheSameSource) {
  test::TempDir dir;
  const std::string conf = dir.Sub("job.conf");
  std::ofstream(conf) << "bloom_bits = 3\n"                     // 1
                         "options = bloom_bits=4;tidy_tables=5\n";  // 2
  Config c;
  ASSERT_OK(Config::Load(
      "sim", conf,
      Environ({"SLUICE_OPTIONS=wal=1,block_size=128k,extent_bytes=2m",
               "SLUICE_BLOCK_SIZE=16k"})
          .get(),
      &c));
  ConfigValue v = c.Get("wal");
  EXPECT_EQ(v.value, "1");
  EXPECT_EQ(v.source, ConfigSource::kEnvironment);
  EXPECT_EQ(v.via, "options");
  EXPECT_EQ(v.SourceText(), "environment SLUICE_OPTIONS");
  // The variable itself, same source, beats the item.
  EXPECT_EQ(c.Get("block_size").value, "16k");
  EXPECT_EQ(c.Get("extent_bytes").value, "2m");
  // Within the file, the same: bloom_bits's own line beats the item.
  EXPECT_EQ(c.Get("bloom_bits").value, "3");
  v = c.Get("tidy_tables");
  EXPECT_EQ(v.value, "5");
  EXPECT_EQ(v.SourceText(), "file " + conf + ":2 (options)");
  FsOptions o;
  ASSERT_OK(c.ToFsOptions(&o));
  EXPECT_TRUE(o.store.wal);
  EXPECT_EQ(o.store.block_size, 16u << 10);
  EXPECT_EQ(o.extent_bytes, 2u << 20);
  EXPECT_EQ(o.store.tidy_tables, 5);
  // An item with a bad value is an error naming SLUICE_OPTIONS.
  Status s =
      Config::Load("sim", "", Environ({"SLUICE_OPTIONS=wal=x"}).get(), &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_OPTIONS")) << s.message();
}

// ---- config_file -----------------------------------------------------------

TEST(ConfigFileVariable, NamesTheFileWhenTheCallerGivesNone) {
  test::TempDir dir;
  const std::string a = dir.Sub("a.conf"), b = dir.Sub("b.conf");
  std::ofstream(a) << "wal = 1\n";
  std::ofstream(b) << "wal = 0\n";
  const std::string var = "SLUICE_CONFIG_FILE=" + a;
  Config c;
  ASSERT_OK(Config::Load("sim", "", Environ({var}).get(), &c));
  EXPECT_EQ(c.Get("wal").value, "1");
  EXPECT_EQ(c.Get("config_file").SourceText(),
            "environment SLUICE_CONFIG_FILE");
  // The caller's file wins, and is config_file's value by the API.
  ASSERT_OK(Config::Load("sim", b, Environ({var}).get(), &c));
  EXPECT_EQ(c.Get("wal").value, "0");
  EXPECT_EQ(c.Get("config_file").value, b);
  EXPECT_EQ(c.Get("config_file").source, ConfigSource::kApi);
  // A file cannot name a file.
  std::ofstream(b, std::ios::trunc) << "config_file = x\n";
  Status s = Config::Load("sim", b, nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), b + ":1: config_file cannot be set"))
      << s.message();
}

// ---- StoreOptions::Given ---------------------------------------------------

TEST(ConfigGiven, ByNameOrNotTheDefault) {
  EXPECT_LE(StoreOptions::List().size(), 64u) << "one bit per option";
  StoreOptions o;
  for (const StoreOptions::Info& info : StoreOptions::List()) {
    EXPECT_FALSE(o.Given(info.name)) << info.name;
  }
  ASSERT_OK(o.Set("flush_threads", "1"));
  EXPECT_TRUE(o.Given("flush_threads"));
  EXPECT_FALSE(o.Set("wal", "maybe").ok());
  EXPECT_FALSE(o.Given("wal")) << "a failed Set gives nothing";
  o.compression = true;
  EXPECT_TRUE(o.Given("compression"));
  StoreOptions copy = o;
  EXPECT_TRUE(copy.Given("flush_threads"));
  EXPECT_FALSE(o.Given("no_such_option"));
  FsOptions f;
  EXPECT_FALSE(f.Given("extent_bytes"));
  ASSERT_OK(f.Set("extent_bytes", "4m"));
  EXPECT_TRUE(f.Given("extent_bytes"));
  FsOptions g;
  g.extent_bytes = 1u << 20;
  EXPECT_TRUE(g.Given("extent_bytes"));
  EXPECT_FALSE(g.Given("wal"));
}

}  // namespace
}  // namespace sluice
