// Configuration: sources, precedence, sections, errors (sluice/config.h).
#include "sluice/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice {
namespace {

using test::Environ;

// A configuration file in a directory of its own.
class ConfigFile {
 public:
  explicit ConfigFile(const std::string& text) : path_(dir_.Sub("sluice.conf")) {
    std::ofstream(path_) << text;
  }
  const std::string& path() const { return path_; }
  std::string At(int line) const { return path_ + ":" + std::to_string(line); }

 private:
  test::TempDir dir_;
  std::string path_;
};

Status LoadText(const std::string& text, const Environ& env, Config* out,
                const std::string& context = "sim") {
  ConfigFile f(text);
  return Config::Load(context, f.path(), env.get(), out);
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- the variables ---------------------------------------------------------

TEST(ConfigVariables, SortedUniqueAndCoverEveryStoreOption) {
  const std::vector<ConfigVariable>& vars = Config::Variables();
  std::set<std::string> names;
  for (size_t i = 0; i < vars.size(); ++i) {
    names.insert(vars[i].name);
    if (i > 0) {
      EXPECT_LT(strcmp(vars[i - 1].name, vars[i].name), 0) << vars[i].name;
    }
    EXPECT_NE(vars[i].help[0], '\0') << vars[i].name;
  }
  EXPECT_EQ(names.size(), vars.size());
  for (const StoreOptions::Info& info : StoreOptions::List()) {
    EXPECT_TRUE(names.count(info.name)) << info.name;
  }
  for (const char* n :
       {"extent_bytes", "data_roots", "dataset_mode", "stats",
        "config_file_prefix", "mtbf", "job_end_time", "job_end_margin",
        "test_fail_commit_rank", "config_file", "root", "options", "mount",
        "writer", "merged_reads", "lock_wait", "stage_mode", "aggregation",
        "aggregation_group", "drain_threads", "drain_bandwidth",
        "keep_last"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_EQ(vars.size(), StoreOptions::List().size() + 22);
}

TEST(ConfigVariables, DefaultsAreValidAndMatchTheOptions) {
  // Each default is a value Set accepts.
  Config c;
  for (const ConfigVariable& v : Config::Variables()) {
    EXPECT_OK(c.Set(v.name, v.default_value));
  }
  // A store option's default is what StoreOptions() prints.
  const std::string printed = StoreOptions().ToString();
  for (const StoreOptions::Info& info : StoreOptions::List()) {
    const ConfigValue v = Config().Get(info.name);
    EXPECT_TRUE(Contains(printed, std::string(info.name) + "=" + v.value + "\n"))
        << info.name << " = " << v.value;
    EXPECT_EQ(v.source, ConfigSource::kDefault);
  }
  EXPECT_EQ(Config().Get("dataset_mode").value, "basic");
  EXPECT_EQ(Config().Get("data_roots").value, ".");
  EXPECT_EQ(Config().Get("extent_bytes").value, "4m");
  EXPECT_EQ(Config().Get("test_fail_commit_rank").value, "-1");
  EXPECT_EQ(Config().Get("config_file_prefix").value, "");
}

TEST(ConfigVariables, TierValuesAreChecked) {
  Config c;
  EXPECT_OK(c.Set("stage_mode", "end_of_job"));
  EXPECT_FALSE(c.Set("stage_mode", "later").ok());
  EXPECT_OK(c.Set("aggregation", "n_1"));
  EXPECT_FALSE(c.Set("aggregation", "n_2").ok());
  EXPECT_OK(c.Set("aggregation_group", "8"));
  EXPECT_FALSE(c.Set("aggregation_group", "-1").ok());
  EXPECT_FALSE(c.Set("aggregation_group", "1,2").ok());
  EXPECT_OK(c.Set("keep_last", "2"));
  EXPECT_OK(c.Set("keep_last", "1,0"));
  EXPECT_FALSE(c.Set("keep_last", "1,").ok());
  EXPECT_FALSE(c.Set("keep_last", "x").ok());
  EXPECT_OK(c.Set("drain_bandwidth", "256m"));
  EXPECT_FALSE(c.Set("drain_bandwidth", "fast").ok());
}

TEST(ConfigVariables, Scopes) {
  for (const ConfigVariable& v : Config::Variables()) {
    const bool dataset = !strcmp(v.name, "dataset_mode") ||
                         !strcmp(v.name, "test_fail_commit_rank") ||
                         !strcmp(v.name, "stage_mode") ||
                         !strcmp(v.name, "aggregation") ||
                         !strcmp(v.name, "aggregation_group") ||
                         !strcmp(v.name, "keep_last");
    EXPECT_EQ(v.scope, dataset ? ConfigScope::kDataset : ConfigScope::kContext)
        << v.name;
  }
}

TEST(ConfigVariables, ClosestName) {
  EXPECT_EQ(Config::ClosestName("wirte_buffer_size"), "write_buffer_size");
  EXPECT_EQ(Config::ClosestName("WRITE_BUFER_SIZE"), "write_buffer_size");
  EXPECT_EQ(Config::ClosestName("data_root"), "data_roots");
  EXPECT_EQ(Config::ClosestName("wall"), "wal");
  // A tie (5 edits to direct_io_flush and to direct_io_reads): the first
  // in sorted order.
  EXPECT_EQ(Config::ClosestName("direct_io_"), "direct_io_flush");
  EXPECT_EQ(Config::ClosestName("direct_io_xxxxx"), "direct_io_flush");
}

TEST(ConfigVariables, ValuesAreChecked) {
  struct Case {
    const char* name;
    const char* value;
    bool ok;
  };
  for (const Case& k : std::vector<Case>{
           {"data_roots", "/a,/b", true},   {"data_roots", "/a", true},
           {"data_roots", "", false},       {"data_roots", "/a,", false},
           {"data_roots", ",/a", false},    {"data_roots", "/a,,/b", false},
           {"data_roots", "/a, /b", false}, {"data_roots", "/my dir", true},
           {"dataset_mode", "basic", true}, {"dataset_mode", "file_per_node", true},
           {"dataset_mode", "Basic", false}, {"dataset_mode", "", false},
           {"stats", "yes", true},          {"stats", "OFF", true},
           {"stats", "2", false},           {"stats", "", false},
           {"config_file_prefix", "", true}, {"config_file_prefix", "#S", true},
           {"mtbf", "0", true},             {"mtbf", "3600", true},
           {"mtbf", "1.5h", true},          {"mtbf", "2d", true},
           {"mtbf", "30m", true},           {"mtbf", "45s", true},
           {"mtbf", "-1", false},           {"mtbf", "1w", false},
           {"mtbf", "h", false},            {"mtbf", "1.", true},
           {"mtbf", ".5", true},            {"mtbf", ".", false},
           {"mtbf", "1.2.3", false},        {"mtbf", "+1", false},
           {"mtbf", "inf", false},          {"mtbf", "1e3", false},
           {"mtbf", "", false},             {"job_end_time", "1700000000", true},
           {"job_end_time", "0", true},     {"job_end_time", "-5", false},
           {"job_end_time", "1.5", false},  {"job_end_time", "", false},
           {"job_end_margin", "10m", true}, {"job_end_margin", "x", false},
           {"test_fail_commit_rank", "-1", true},
           {"test_fail_commit_rank", "3", true},
           {"test_fail_commit_rank", "-2", false},
           {"test_fail_commit_rank", "3x", false},
           {"extent_bytes", "1m", true},    {"extent_bytes", "1k", false},
           {"write_buffer_size", "64m", true},
           {"write_buffer_size", "lots", false},
           {"backend", "leveldb", true},    {"backend", "sqlite", false},
           {"wal", "on", true},             {"wal", "", false},
           {"config_file", "", true},       {"config_file", "a.conf", true},
           {"root", "/a", true},            {"root", "rel", true},
           {"root", "", false},             {"root", "/a,/b", false},
           {"root", " /a", false},          {"options", "", true},
           {"options", "wal=1,extent_bytes=1m", true},
           {"options", "wal=maybe", false}, {"options", "data_roots=/a", false},
           {"options", "wal", false},       {"mount", "", true},
           {"mount", "/sluice", true},      {"mount", "/sluice/", true},
           {"mount", "sluice", false},      {"mount", "/", false},
           {"mount", "//", false},          {"writer", "-1", true},
           {"writer", "0", true},           {"writer", "99999999", true},
           {"writer", "100000000", false},  {"writer", "-2", false},
           {"writer", "x", false},          {"writer", "", false},
           {"merged_reads", "1", true},     {"merged_reads", "x", false},
           {"lock_wait", "0.5", true},      {"lock_wait", "5s", true},
           {"lock_wait", "-1", false},      {"lock_wait", "1e3", false}}) {
    Config c;  // each alone: root and data_roots set together must agree
    Status s = c.Set(k.name, k.value);
    EXPECT_EQ(s.ok(), k.ok) << k.name << " = '" << k.value << "': " << s.ToString();
    if (!s.ok()) {
      EXPECT_EQ(s.code(), Code::kInvalidArgument);
      EXPECT_TRUE(Contains(s.message(), k.name)) << s.message();
      EXPECT_TRUE(Contains(s.message(), "'" + std::string(k.value) + "'"))
          << s.message();
    }
  }
  double seconds = 0;
  ASSERT_OK(Config::ParseDuration("1.5h", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 5400);
  ASSERT_OK(Config::ParseDuration("2d", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 172800);
  ASSERT_OK(Config::ParseDuration("90", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 90);
  ASSERT_OK(Config::ParseDuration(".25", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 0.25);
  ASSERT_OK(Config::ParseDuration("120.", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 120);
  ASSERT_OK(Config::ParseDuration("1.5m", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 90);
  bool b = false;
  ASSERT_OK(Config::ParseBool("ON", &b));
  EXPECT_TRUE(b);
  ASSERT_OK(Config::ParseBool("no", &b));
  EXPECT_FALSE(b);
  EXPECT_FALSE(Config::ParseBool("2", &b).ok());
}

// ---- the API ---------------------------------------------------------------

TEST(ConfigApi, UnknownNameNamesTheClosest) {
  Config c;
  Status s = c.Set("wirte_buffer_size", "1m");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'wirte_buffer_size'")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "did you mean write_buffer_size?"))
      << s.message();
}

TEST(ConfigApi, BadValueLeavesTheOldOne) {
  Config c;
  ASSERT_OK(c.Set("wal", "1"));
  EXPECT_FALSE(c.Set("wal", "perhaps").ok());
  EXPECT_EQ(c.Get("wal").value, "1");
}

TEST(ConfigApi, GetOfAnUnknownNameIsEmpty) {
  const ConfigValue v = Config().Get("no_such_variable");
  EXPECT_EQ(v.name, "no_such_variable");
  EXPECT_EQ(v.value, "");
  EXPECT_EQ(v.source, ConfigSource::kDefault);
}

TEST(ConfigApi, SourceText) {
  ConfigValue v;
  v.name = "write_buffer_size";
  EXPECT_EQ(v.SourceText(), "default");
  v.source = ConfigSource::kEnvironment;
  EXPECT_EQ(v.SourceText(), "environment SLUICE_WRITE_BUFFER_SIZE");
  v.source = ConfigSource::kApi;
  EXPECT_EQ(v.SourceText(), "API");
  v.source = ConfigSource::kFile;
  v.file = "/etc/sluice.conf";
  v.line = 7;
  EXPECT_EQ(v.SourceText(), "file /etc/sluice.conf:7");
}

// ---- precedence ------------------------------------------------------------

// Every pair of sources, the stronger one winning; every source over the
// default.
TEST(ConfigPrecedence, EachSourceOverTheWeakerOnes) {
  const std::string text =
      "wal = on\n"                      // 1: [global] only
      "block_size = 8k\n"               // 2: [global], [context:sim]
      "write_buffer_size = 1m\n"        // 3: [global], environment
      "bloom_bits = 5\n"                // 4: [global], API
      "[context:sim]\n"                 // 5
      "block_size = 16k\n"              // 6
      "flush_threads = 3\n"             // 7: [context:sim], environment
      "tidy_tables = 4\n"               // 8: [context:sim], API
      "[dataset:ckpt]\n"                // 9
      "dataset_mode = file_per_node\n"  // 10: [dataset:ckpt] over [global]
      "test_fail_commit_rank = 2\n";    // 11: [dataset:ckpt], environment
  ConfigFile f(text +
               "[global]\n"                              // 12
               "dataset_mode = basic\n"                  // 13
               "test_fail_commit_rank = 1\n");           // 14
  Environ env({"SLUICE_WRITE_BUFFER_SIZE=2m", "SLUICE_FLUSH_THREADS=4",
               "SLUICE_TEST_FAIL_COMMIT_RANK=5", "SLUICE_MAX_WRITE_BUFFERS=3"});
  Config c;
  ASSERT_OK(c.Set("bloom_bits", "6"));
  ASSERT_OK(c.Set("tidy_tables", "7"));
  ASSERT_OK(c.Set("max_write_buffers", "4"));
  ASSERT_OK(Config::Load("sim", f.path(), env.get(), &c));

  struct Want {
    const char* name;
    const char* value;
    ConfigSource source;
    int line;
  };
  for (const Want& w : std::vector<Want>{
           {"wal", "on", ConfigSource::kFile, 1},                // file > default
           {"block_size", "16k", ConfigSource::kFile, 6},        // context > global
           {"write_buffer_size", "2m", ConfigSource::kEnvironment, 0},  // env > file
           {"bloom_bits", "6", ConfigSource::kApi, 0},           // API > file
           {"flush_threads", "4", ConfigSource::kEnvironment, 0},
           {"tidy_tables", "7", ConfigSource::kApi, 0},
           {"max_write_buffers", "4", ConfigSource::kApi, 0},    // API > env
           {"compression", "0", ConfigSource::kDefault, 0},
           {"dataset_mode", "basic", ConfigSource::kFile, 13},   // context level
           {"test_fail_commit_rank", "5", ConfigSource::kEnvironment, 0}}) {
    const ConfigValue v = c.Get(w.name);
    EXPECT_EQ(v.value, w.value) << w.name;
    EXPECT_EQ(v.source, w.source) << w.name;
    EXPECT_EQ(v.line, w.line) << w.name;
    if (w.source == ConfigSource::kFile) {
      EXPECT_EQ(v.file, f.path()) << w.name;
    }
  }
  // For the dataset: its section beats [global] (even one after it in the
  // file), the environment beats its section.
  ConfigValue v = c.Get("dataset_mode", "ckpt");
  EXPECT_EQ(v.value, "file_per_node");
  EXPECT_EQ(v.line, 10);
  v = c.Get("test_fail_commit_rank", "ckpt");
  EXPECT_EQ(v.value, "5");
  EXPECT_EQ(v.source, ConfigSource::kEnvironment);
  // Another dataset gets the context's values.
  EXPECT_EQ(c.Get("dataset_mode", "other").value, "basic");
  // Context-wide values reach every dataset.
  EXPECT_EQ(c.Get("block_size", "ckpt").value, "16k");
}

TEST(ConfigPrecedence, DatasetOverContextOverGlobal) {
  ConfigFile f(
      "[dataset:ckpt]\n"
      "dataset_mode = file_per_node\n"  // 2
      "[context:sim]\n"
      "test_fail_commit_rank = 3\n"     // 4
      "[global]\n"
      "dataset_mode = basic\n"          // 6
      "test_fail_commit_rank = 1\n");   // 7
  Config c;
  ASSERT_OK(Config::Load("sim", f.path(), nullptr, &c));
  EXPECT_EQ(c.Get("dataset_mode", "ckpt").line, 2);    // dataset > global
  EXPECT_EQ(c.Get("dataset_mode").line, 6);            // global > default
  EXPECT_EQ(c.Get("test_fail_commit_rank", "ckpt").line, 4);  // context > global
  EXPECT_EQ(c.Get("test_fail_commit_rank").value, "3");
}

TEST(ConfigPrecedence, DatasetOverContext) {
  ConfigFile f(
      "[context:sim]\n"
      "dataset_mode = basic\n"          // 2
      "[dataset:ckpt]\n"
      "dataset_mode = file_per_node\n");  // 4
  Config c;
  ASSERT_OK(Config::Load("sim", f.path(), nullptr, &c));
  EXPECT_EQ(c.Get("dataset_mode", "ckpt").line, 4);
  EXPECT_EQ(c.Get("dataset_mode", "ckpt").value, "file_per_node");
  EXPECT_EQ(c.Get("dataset_mode").line, 2);
}

TEST(ConfigPrecedence, EnvironmentOverDefault) {
  Environ env({"SLUICE_DATA_ROOTS=/fast,/slow", "HOME=/root", "SLUICE=1"});
  Config c;
  ASSERT_OK(Config::Load("sim", "", env.get(), &c));
  EXPECT_EQ(c.Get("data_roots").value, "/fast,/slow");
  EXPECT_EQ(c.Get("data_roots").SourceText(), "environment SLUICE_DATA_ROOTS");
  EXPECT_EQ(c.Get("stats").source, ConfigSource::kDefault);
}

TEST(ConfigPrecedence, ApiOverDefaultAndLaterLoadKeepsApi) {
  Config c;
  ASSERT_OK(c.Set("stats", "1"));
  EXPECT_EQ(c.Get("stats").source, ConfigSource::kApi);
  Environ env({"SLUICE_STATS=0"});
  ASSERT_OK(Config::Load("sim", "", env.get(), &c));
  EXPECT_EQ(c.Get("stats").value, "1");
  EXPECT_EQ(c.Get("stats").SourceText(), "API");
}

TEST(ConfigPrecedence, OtherContextsSectionIsIgnored) {
  ConfigFile f(
      "[context:other]\n"
      "wal = 1\n"
      "[context:sim]\n"
      "compression = 1\n");
  Config c;
  ASSERT_OK(Config::Load("sim", f.path(), nullptr, &c));
  EXPECT_EQ(c.Get("wal").source, ConfigSource::kDefault);
  EXPECT_EQ(c.Get("compression").value, "1");
  Config o;
  ASSERT_OK(Config::Load("other", f.path(), nullptr, &o));
  EXPECT_EQ(o.Get("wal").value, "1");
  EXPECT_EQ(o.Get("compression").source, ConfigSource::kDefault);
  EXPECT_EQ(o.context(), "other");
}

TEST(ConfigPrecedence, OtherContextsSectionIsStillChecked) {
  Config c;
  Status s = LoadText("[context:other]\nwal = sometimes\n", Environ({}), &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), ":2: ")) << s.message();
  s = LoadText("[context:other]\nwall = 1\n", Environ({}), &c);
  EXPECT_TRUE(Contains(s.message(), "did you mean wal?")) << s.message();
}

TEST(ConfigPrecedence, SameNameTwiceInASectionLastWins) {
  Config c;
  ASSERT_OK(LoadText("wal = 1\nwal = 0\n", Environ({}), &c));
  EXPECT_EQ(c.Get("wal").value, "0");
  EXPECT_EQ(c.Get("wal").line, 2);
}

// ---- the file --------------------------------------------------------------

TEST(ConfigFile, SyntaxCommentsAndBlanks) {
  Config c;
  ASSERT_OK(LoadText(
      "# a comment\n"
      "\n"
      "   \t\n"
      "  wal=1   # trailing comment\n"            // 4
      "block_size\t=\t16k\r\n"                    // 5: tabs, CRLF
      "  [ context : sim ]  # spaced header\n"    // 6
      "data_roots = /a b/c,/d\n"                  // 7: a blank inside
      "#compression = 1\n",
      Environ({}), &c));
  EXPECT_EQ(c.Get("wal").value, "1");
  EXPECT_EQ(c.Get("wal").line, 4);
  EXPECT_EQ(c.Get("block_size").value, "16k");
  EXPECT_EQ(c.Get("data_roots").value, "/a b/c,/d");
  EXPECT_EQ(c.Get("data_roots").source, ConfigSource::kFile);
  EXPECT_EQ(c.Get("compression").source, ConfigSource::kDefault);
}

TEST(ConfigFile, LinesBeforeAnySectionAreGlobal) {
  Config c;
  ASSERT_OK(LoadText("wal = 1\n[dataset:d]\ndataset_mode = file_per_node\n",
                     Environ({}), &c, "anything"));
  EXPECT_EQ(c.Get("wal").value, "1");
  EXPECT_EQ(c.Get("wal", "d").value, "1");
  EXPECT_EQ(c.Get("dataset_mode", "d").value, "file_per_node");
}

TEST(ConfigFile, PrefixSelectsLines) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -N 4\n"
      "#SLUICE [context:sim]\n"                 // 3
      "#SLUICE data_roots = /dev/shm/c,/s  # c\n"  // 4
      "wal = 1\n"                               // 5: no prefix, not read
      "# compression = 1\n"                     // 6
      "#SLUICEbloom_bits=3\n"                   // 7
      "  #SLUICE tidy_tables = 2\n"             // 8: not in column 1
      "srun ./sim\n";
  Environ env({"SLUICE_CONFIG_FILE_PREFIX=#SLUICE"});
  Config c;
  ASSERT_OK(LoadText(script, env, &c));
  EXPECT_EQ(c.Get("data_roots").value, "/dev/shm/c,/s");
  EXPECT_EQ(c.Get("data_roots").line, 4);
  EXPECT_EQ(c.Get("bloom_bits").value, "3");
  EXPECT_EQ(c.Get("wal").source, ConfigSource::kDefault);
  EXPECT_EQ(c.Get("compression").source, ConfigSource::kDefault);
  EXPECT_EQ(c.Get("tidy_tables").source, ConfigSource::kDefault);
  EXPECT_EQ(c.Get("config_file_prefix").value, "#SLUICE");

  // The same prefix by the API before Load.
  Config a;
  ASSERT_OK(a.Set("config_file_prefix", "#SLUICE"));
  ASSERT_OK(LoadText(script, Environ({}), &a));
  EXPECT_EQ(a.Get("data_roots").line, 4);

  // Without the prefix, the script is no configuration file.
  Config none;
  Status s = LoadText(script, Environ({}), &none);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), ":9: malformed line 'srun ./sim'"))
      << s.message();
}

TEST(ConfigFile, PrefixCannotBeSetInTheFile) {
  ConfigFile f("wal = 1\nconfig_file_prefix = X\n");
  Config c;
  Status s = Config::Load("sim", f.path(), nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), f.At(2) + ": config_file_prefix"))
      << s.message();
}

TEST(ConfigFile, UnknownNameNamesLineAndClosest) {
  ConfigFile f("wal = 1\n\nwirte_buffer_size = 64m\n");
  Config c;
  Status s = Config::Load("sim", f.path(), nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), f.At(3) +
                             ": unknown variable 'wirte_buffer_size' (did you "
                             "mean write_buffer_size?)");
}

TEST(ConfigFile, BadValueNamesLineVariableAndValue) {
  ConfigFile f("[context:sim]\nwrite_buffer_size = 12q\n");
  Config c;
  Status s = Config::Load("sim", f.path(), nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), f.At(2) + ": ")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "write_buffer_size")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'12q'")) << s.message();
}

TEST(ConfigFile, EmptyValueOnlyWhereAccepted) {
  Config c;
  Status s = LoadText("wal =\n", Environ({}), &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), ":1: bad value '' for wal")) << s.message();
}

TEST(ConfigFile, MalformedLineNamesFileAndLine) {
  for (const char* bad : {"just some words", "= 5", "wal 1"}) {
    ConfigFile f(std::string("# ok\nwal = 1\n") + bad + "\n");
    Config c;
    Status s = Config::Load("sim", f.path(), nullptr, &c);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_TRUE(Contains(s.message(), f.At(3) + ": malformed line")) << s.message();
  }
}

TEST(ConfigFile, BadSectionHeader) {
  for (const char* bad : {"[foo]", "[context:]", "[dataset:  ]", "[global",
                          "[Global]", "[context]", "[global] wal = 1",
                          "[files:x]", "[]"}) {
    ConfigFile f(std::string("wal = 1\n") + bad + "\n");
    Config c;
    Status s = Config::Load("sim", f.path(), nullptr, &c);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_TRUE(Contains(s.message(), f.At(2) + ": bad section header"))
        << bad << ": " << s.message();
  }
}

TEST(ConfigFile, ContextVariableInDatasetSection) {
  ConfigFile f("[dataset:ckpt]\ndataset_mode = basic\nwrite_buffer_size = 64m\n");
  Config c;
  Status s = Config::Load("sim", f.path(), nullptr, &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), f.At(3) + ": write_buffer_size applies to "
                                              "a whole context"))
      << s.message();
}

TEST(ConfigFile, MissingFileIsAnError) {
  test::TempDir dir;
  Config c;
  Status s = Config::Load("sim", dir.Sub("nothing.conf"), nullptr, &c);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_TRUE(Contains(s.message(), dir.Sub("nothing.conf"))) << s.message();
  s = Config::Load("sim", dir.path(), nullptr, &c);  // a directory
  EXPECT_FALSE(s.ok());
}

TEST(ConfigFile, FailedLoadLeavesTheConfigAlone) {
  Config c;
  ASSERT_OK(LoadText("wal = 1\n", Environ({}), &c));
  EXPECT_FALSE(LoadText("compression = 1\nbogus\n", Environ({}), &c).ok());
  EXPECT_EQ(c.Get("wal").value, "1");
  EXPECT_EQ(c.Get("compression").source, ConfigSource::kDefault);
}

// ---- the environment -------------------------------------------------------

TEST(ConfigEnvironment, UnknownNamesAreRecordedNotErrors) {
  Environ env({"SLUICE_WRTE_BUFFER_SIZE=64m", "SLUICE_wal=1", "PATH=/bin",
               "SLUICE_WAL=1", "NOT_SLUICE_STATS=1", "SLUICE_BLOCK_SIZE"});
  Config c;
  ASSERT_OK(Config::Load("sim", "", env.get(), &c));
  EXPECT_EQ(c.unknown_environment(),
            (std::vector<std::string>{
                "SLUICE_WRTE_BUFFER_SIZE (write_buffer_size?)",
                "SLUICE_wal (wal?)"}));
  EXPECT_EQ(c.Get("wal").source, ConfigSource::kEnvironment);
  EXPECT_EQ(c.Get("stats").source, ConfigSource::kDefault);
  EXPECT_EQ(c.Get("block_size").source, ConfigSource::kDefault);
}

TEST(ConfigEnvironment, BadValueIsAnError) {
  Environ env({"SLUICE_EXTENT_BYTES=huge"});
  Config c;
  Status s = Config::Load("sim", "", env.get(), &c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "SLUICE_EXTENT_BYTES")) << s.message();
  EXPECT_TRUE(Contains(s.message(), "'huge'")) << s.message();
}

TEST(ConfigEnvironment, FirstOfTwoCounts) {
  Environ env({"SLUICE_BLOOM_BITS=3", "SLUICE_BLOOM_BITS=4"});
  Config c;
  ASSERT_OK(Config::Load("sim", "", env.get(), &c));
  EXPECT_EQ(c.Get("bloom_bits").value, "3");
}

// ---- options ---------------------------------------------------------------

std::string Describe(const FsOptions& o) {
  return o.store.ToString() + "extent_bytes=" + std::to_string(o.extent_bytes);
}

TEST(ConfigFsOptions, NothingSetGivesTheDefaults) {
  FsOptions o;
  o.extent_bytes = 1;
  o.store.wal = true;
  ASSERT_OK(Config().ToFsOptions(&o));
  EXPECT_EQ(Describe(o), Describe(FsOptions()));
}

TEST(ConfigFsOptions, SetValuesReachThem) {
  Environ env({"SLUICE_WRITE_BUFFER_SIZE=64m"});
  Config c;
  ASSERT_OK(LoadText("extent_bytes = 1m\nbackend = leveldb\n[context:sim]\n"
                     "bloom_bits = 3\n",
                     env, &c));
  ASSERT_OK(c.Set("tidy_tables", "0"));
  FsOptions o;
  ASSERT_OK(c.ToFsOptions(&o));
  EXPECT_EQ(o.extent_bytes, 1u << 20);
  EXPECT_EQ(o.store.backend, BackendKind::kLevelDB);
  EXPECT_EQ(o.store.bloom_bits, 3);
  EXPECT_EQ(o.store.write_buffer_size, 64u << 20);
  EXPECT_EQ(o.store.tidy_tables, 0);
  EXPECT_EQ(o.store.block_size, FsOptions().store.block_size);
}

// ---- serialization ---------------------------------------------------------

Config Rich() {
  Environ env({"SLUICE_WRITE_BUFFER_SIZE=64m", "SLUICE_BOGUS=1"});
  Config c;
  EXPECT_OK(c.Set("stats", "1"));
  EXPECT_OK(LoadText("wal = 1\n[context:sim]\nblock_size = 16k\n"
                     "[dataset:ckpt]\ndataset_mode = file_per_node\n"
                     "[dataset:other]\ntest_fail_commit_rank = 3\n",
                     env, &c));
  return c;
}

TEST(ConfigSerialize, RoundTrip) {
  const Config c = Rich();
  Config d;
  ASSERT_OK(Config::Deserialize(c.Serialize(), &d));
  EXPECT_EQ(d.context(), "sim");
  EXPECT_EQ(d.unknown_environment(), c.unknown_environment());
  EXPECT_EQ(d.unknown_environment().size(), 1u);
  for (const char* ds : {"", "ckpt", "other", "none"}) {
    EXPECT_EQ(d.ToText(ds), c.ToText(ds)) << ds;
    EXPECT_EQ(d.ToJson(ds), c.ToJson(ds)) << ds;
  }
  EXPECT_EQ(d.Get("block_size").SourceText(), c.Get("block_size").SourceText());
  EXPECT_EQ(d.Get("stats").source, ConfigSource::kApi);
  EXPECT_EQ(d.Get("dataset_mode", "ckpt").value, "file_per_node");
  EXPECT_EQ(d.Serialize(), c.Serialize());
  // An empty configuration too.
  Config e;
  ASSERT_OK(Config::Deserialize(Config().Serialize(), &e));
  EXPECT_EQ(e.ToText(), Config().ToText());
}

TEST(ConfigSerialize, GarbageIsRefusedNeverACrash) {
  const std::string good = Rich().Serialize();
  Config d;
  ASSERT_OK(d.Set("wal", "1"));
  // Not one at all.
  EXPECT_EQ(Config::Deserialize("", &d).code(), Code::kInvalidArgument);
  EXPECT_EQ(Config::Deserialize("hello world, this is no config", &d).code(),
            Code::kInvalidArgument);
  // Another version.
  std::string v = good;
  v[8] = 9;
  EXPECT_EQ(Config::Deserialize(v, &d).code(), Code::kInvalidArgument);
  // Every truncation, and bytes after the end.
  for (size_t n = 0; n < good.size(); ++n) {
    Status s = Config::Deserialize(good.substr(0, n), &d);
    EXPECT_FALSE(s.ok()) << n;
  }
  EXPECT_TRUE(Config::Deserialize(good + "x", &d).IsCorruption());
  // Every single byte changed, every length huge: an error or (a byte of a
  // value or name that still makes sense) a configuration, never a crash.
  for (size_t i = 0; i < good.size(); ++i) {
    for (int delta : {1, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] + delta);
      Config e;
      Status s = Config::Deserialize(bad, &e);
      if (s.ok()) e.ToText("ckpt");
    }
  }
  // Random bytes behind a good magic and version.
  uint64_t seed = 42;
  for (int i = 0; i < 2000; ++i) {
    std::string bad = good.substr(0, 12);
    const size_t n = i % 64;
    for (size_t k = 0; k < n; ++k) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      // Mostly small bytes, so that lengths and counts are sometimes
      // plausible.
      bad += static_cast<char>((seed >> 33) % (k % 3 ? 4 : 256));
    }
    Config e;
    Status s = Config::Deserialize(bad, &e);
    if (s.ok()) e.ToJson("x");
  }
  // A value no variable accepts, in a well-formed buffer.
  std::string forged = good;
  const size_t at = forged.find("file_per_node");
  ASSERT_NE(at, std::string::npos);
  forged.replace(at, 13, "file_per_nod3");
  EXPECT_TRUE(Config::Deserialize(forged, &d).IsCorruption());
  // A failed Deserialize left d as it was.
  EXPECT_EQ(d.Get("wal").source, ConfigSource::kApi);
}

// ---- text and JSON ---------------------------------------------------------

TEST(ConfigText, OneLinePerVariableWithItsSource) {
  const Config c = Rich();
  const std::string text = c.ToText("ckpt");
  std::istringstream in(text);
  std::string line;
  size_t lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, Config::Variables().size());
  EXPECT_TRUE(Contains(text, "\nwrite_buffer_size = 64m  # environment "
                             "SLUICE_WRITE_BUFFER_SIZE\n"));
  EXPECT_TRUE(Contains(text, "\nstats = 1  # API\n"));
  EXPECT_TRUE(Contains(text, "\ncompression = 0  # default\n"));
  EXPECT_TRUE(Contains(text, "\ndataset_mode = file_per_node  # file "));
  EXPECT_TRUE(Contains(text, "sluice.conf:5\n"));
  // A line break in a value stays inside its line.
  Config n;
  ASSERT_OK(n.Set("data_roots", "/a\nb"));
  EXPECT_TRUE(Contains(n.ToText(), "data_roots = /a\\x0ab  # API\n"));
}

TEST(ConfigText, JsonEscapes) {
  Config c;
  ASSERT_OK(c.Set("data_roots", "/a\"b\\c\n\xff"));
  const std::string json = c.ToJson();
  EXPECT_TRUE(Contains(json, "\"value\": \"/a\\\"b\\\\c\\u000a\\udcff\""))
      << json;
  EXPECT_TRUE(Contains(json, "{\"name\": \"wal\", \"value\": \"0\", \"source\": "
                             "\"default\", \"file\": null, \"line\": null, "
                             "\"via\": null}"));
  EXPECT_TRUE(Contains(json, "\"unknown_environment\": []"));
}

// ---- the reference ---------------------------------------------------------

// docs/CONFIG.md has a row ("| `name` | scope | default | ...") for every
// variable, with its scope and default, and none for a variable that does
// not exist.
TEST(ConfigDocs, ReferenceListsEveryVariable) {
  const std::string doc = std::string(SLUICE_SOURCE_DIR) + "/docs/CONFIG.md";
  std::ifstream in(doc);
  ASSERT_TRUE(in.good()) << "cannot read " << doc;
  std::map<std::string, std::string> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 3, "| `") != 0) continue;
    const size_t end = line.find('`', 3);
    ASSERT_NE(end, std::string::npos) << line;
    const std::string name = line.substr(3, end - 3);
    EXPECT_EQ(Config::ClosestName(name), name) << "no such variable: " << line;
    EXPECT_FALSE(rows.count(name)) << "twice: " << name;
    rows[name] = line;
  }
  for (const ConfigVariable& v : Config::Variables()) {
    ASSERT_TRUE(rows.count(v.name)) << v.name << " is missing from " << doc;
    const std::string& row = rows[v.name];
    const std::string d =
        *v.default_value ? "`" + std::string(v.default_value) + "`" : "(empty)";
    const std::string scope =
        v.scope == ConfigScope::kDataset ? "dataset" : "context";
    EXPECT_TRUE(Contains(row, "` | " + scope + " | " + d + " |"))
        << v.name << " (" << scope << ", default '" << d << "'): " << row;
  }
}

}  // namespace
}  // namespace sluice
