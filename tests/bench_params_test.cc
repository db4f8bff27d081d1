// sluice-bench's flag parser and data pattern.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "ior/fio_output.h"
#include "ior/params.h"
#include "ior/pattern.h"
#include "ior/report.h"
#include "ior/report_ior.h"

namespace sluice {
namespace bench {
namespace {

int Parse(std::vector<std::string> args, Params* p, std::string* msg) {
  return ParseArgs(args, p, msg);
}

TEST(BenchParams, IorDefaultsAndFlags) {
  Params p;
  std::string msg;
  ASSERT_EQ(Parse({}, &p, &msg), 0) << msg;
  EXPECT_EQ(p.apis, std::vector<std::string>{"POSIX"});
  EXPECT_EQ(p.block, 1u << 20);
  EXPECT_EQ(p.transfer, 256u << 10);
  EXPECT_TRUE(p.write && p.read);  // neither -w nor -r: both
  ASSERT_EQ(Parse({"-a", "posix,SLUICE-KV", "-b", "64m", "-t", "1m", "-s", "3",
                   "-F", "-c", "-e", "-w", "-C", "-Q", "2", "-z", "-i", "5",
                   "-o", "/x/f", "-k", "-W", "-R", "-G", "7", "-O",
                   "summaryFormat=JSON", "-O", "summaryFile=/x/s.json", "-O",
                   "sluice.write_buffer_size=64m", "-O", "dropCaches=1"},
                  &p, &msg),
            0)
      << msg;
  EXPECT_EQ(p.apis, (std::vector<std::string>{"POSIX", "SLUICE-KV"}));
  EXPECT_EQ(p.block, 64u << 20);
  EXPECT_EQ(p.transfer, 1u << 20);
  EXPECT_EQ(p.segments, 3u);
  EXPECT_TRUE(p.file_per_proc && p.collective && p.fsync && p.write);
  EXPECT_FALSE(p.read);
  EXPECT_TRUE(p.reorder && p.random && p.keep && p.check_write && p.check_read);
  EXPECT_EQ(p.reorder_shift, 2);
  EXPECT_EQ(p.reps, 5);
  EXPECT_EQ(p.path, "/x/f");
  EXPECT_EQ(p.seed, 7u);
  EXPECT_EQ(p.summary_format, "json");
  EXPECT_EQ(p.summary_file, "/x/s.json");
  EXPECT_TRUE(p.drop_caches);
  ASSERT_EQ(p.store_options.size(), 1u);
  EXPECT_EQ(p.store_options[0].first, "write_buffer_size");
}

TEST(BenchParams, FioLimitIsFioSyncWithANote) {
  Params p;
  std::string msg;
  ASSERT_EQ(Parse({"-a", "fio-limit,POSIX"}, &p, &msg), 0) << msg;
  EXPECT_EQ(p.apis, (std::vector<std::string>{"FIO-SYNC", "POSIX"}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("now FIO-SYNC"), std::string::npos) << p.notes[0];
  ASSERT_EQ(Parse({"-a", "FIO-SYNC"}, &p, &msg), 0) << msg;
  EXPECT_TRUE(p.notes.empty()) << "the new name needs no note";
}

struct Bad {
  std::vector<std::string> args;
  std::string says;
};

TEST(BenchParams, BadInputIsExit2WithAClearMessage) {
  const Bad cases[] = {
      {{"-t", "2m", "-b", "1m"}, "larger than block size"},
      {{"-b", "3m", "-t", "2m"}, "not a multiple of transfer size"},
      {{"-b", "100", "-t", "100"}, "multiple of 8"},
      {{"-a", "NOPE"}, "unknown API 'NOPE'"},
      {{"-a", "POSIX,"}, "unknown API ''"},
      {{"-x"}, "unknown flag -x"},
      {{"-b"}, "missing value"},
      {{"-b", "12q"}, "bad size suffix"},
      {{"-t", "0"}, "must be > 0"},
      {{"-i", "0"}, "-i"},
      {{"-s", "-1"}, "-s"},
      {{"-O", "nope=1"}, "unknown option"},
      {{"-O", "summaryFormat=XML"}, "summaryFormat"},
      {{"-O", "sluice.no_such=1"}, "no_such"},
      {{"-O", "dropCaches"}, "key=value"},
      {{"stray"}, "unexpected argument"},
  };
  for (const Bad& c : cases) {
    Params p;
    std::string msg;
    EXPECT_EQ(Parse(c.args, &p, &msg), 2) << c.args[0];
    EXPECT_NE(msg.find(c.says), std::string::npos)
        << "message '" << msg << "' does not say '" << c.says << "'";
  }
}

TEST(BenchParams, HelpIsExit1WithUsage) {
  Params p;
  std::string msg;
  EXPECT_EQ(Parse({"-h"}, &p, &msg), 1);
  EXPECT_NE(msg.find("-a API"), std::string::npos);
  EXPECT_NE(msg.find("FIO-SYNC"), std::string::npos);
  msg.clear();
  EXPECT_EQ(Parse({"-b", "1m", "--help"}, &p, &msg), 1);
  EXPECT_NE(msg.find("SLUICE-POSIX"), std::string::npos);
  EXPECT_EQ(Parse({"-a", "sluice-posix"}, &p, &msg), 0);
  ASSERT_EQ(p.apis.size(), 1u);
  EXPECT_EQ(p.apis[0], "SLUICE-POSIX");
}

// Two fresh directories for --fast-root / --slow-root, removed at the end.
class BenchTiers : public ::testing::Test {
 protected:
  void SetUp() override {
    // Digits only: mkdtemp's letters may be capitals, which ADIOS2-BB
    // refuses in a fast root.
    base_ = "/tmp/bench_tiers_" + std::to_string(getpid());
    ASSERT_EQ(mkdir(base_.c_str(), 0700), 0) << base_;
    fast_ = base_ + "/fast";
    slow_ = base_ + "/slow";
    upper_ = base_ + "/Fast";
    for (const auto& d : {fast_, slow_, upper_}) {
      ASSERT_EQ(mkdir(d.c_str(), 0700), 0);
    }
  }
  void TearDown() override {
    for (const auto& d : {fast_, slow_, upper_, base_}) rmdir(d.c_str());
  }
  std::string base_, fast_, slow_, upper_;
};

TEST_F(BenchTiers, BothRootsMoveTheTestFileUnderTheSlowOne) {
  Params p;
  std::string msg;
  ASSERT_EQ(Parse({"-a", "adios2-bb,POSIX", "-e", "--fast-root", fast_ + "/",
                   "--slow-root=" + slow_ + "/../slow", "-o", "ckpt"},
                  &p, &msg),
            0)
      << msg;
  EXPECT_TRUE(p.tiers());
  EXPECT_EQ(p.fast_root, fast_);  // resolved
  EXPECT_EQ(p.slow_root, slow_);
  EXPECT_EQ(p.path, slow_ + "/ckpt");
  EXPECT_EQ(p.apis, (std::vector<std::string>{"ADIOS2-BB", "POSIX"}));
  ASSERT_EQ(Parse({"-e"}, &p, &msg), 0) << msg;
  EXPECT_FALSE(p.tiers());
  EXPECT_EQ(p.path, "testFile");
}

TEST_F(BenchTiers, BadRootsAreExit2WithAClearMessage) {
  const std::string f = fast_, s = slow_;
  const Bad cases[] = {
      {{"-e", "--fast-root", f}, "--fast-root without --slow-root"},
      {{"-e", "--slow-root", s}, "--slow-root without --fast-root"},
      {{"-e", "--fast-root"}, "--fast-root: missing directory"},
      {{"-e", "--fast-root=", "--slow-root", s}, "missing directory"},
      {{"-e", "--fast-root", f, "--slow-root", base_ + "/none"},
       "--slow-root " + base_ + "/none: No such file"},
      {{"-e", "--fast-root", "/etc/hostname", "--slow-root", s},
       "not a directory"},
      {{"-e", "--fast-root", f, "--slow-root", f + "/."}, "same directory"},
      {{"--fast-root", f, "--slow-root", s}, "add -e"},
      {{"-e", "--fast-root", f, "--slow-root", s, "-o", "/x/ckpt"},
       "a file name under the slow root"},
      {{"-e", "-a", "ADIOS2-BB"},
       "ADIOS2-BB needs --fast-root and --slow-root"},
      {{"-e", "-a", "ADIOS2-BB", "--fast-root", upper_, "--slow-root", s},
       "without capital letters"},
  };
  for (const Bad& c : cases) {
    Params p;
    std::string msg;
    EXPECT_EQ(Parse(c.args, &p, &msg), 2) << c.says;
    EXPECT_NE(msg.find(c.says), std::string::npos)
        << "message '" << msg << "' does not say '" << c.says << "'";
  }
  // Capitals are refused only for ADIOS2-BB, whose BP4 lowercases them.
  Params p;
  std::string msg;
  EXPECT_EQ(Parse({"-e", "-a", "POSIX", "--fast-root", upper_, "--slow-root",
                   s},
                  &p, &msg),
            0)
      << msg;
}

TEST(BenchPattern, RoundTripAndFlippedByteOffset) {
  Pattern pat(3, 0);
  std::string buf(1 << 20, '\0');
  const uint64_t off = 5u << 20;
  pat.Fill(&buf[0], buf.size(), off);
  uint64_t bad_off = 0, bad = 0;
  EXPECT_TRUE(pat.Verify(buf.data(), buf.size(), off, &bad_off, &bad));
  buf[12345] ^= 0x01;
  EXPECT_FALSE(pat.Verify(buf.data(), buf.size(), off, &bad_off, &bad));
  EXPECT_EQ(bad_off, off + 12345);
  EXPECT_EQ(bad, 1u);
}

TEST(BenchPattern, WrongOffsetSeedOrFileFails) {
  std::string buf(64 << 10, '\0');
  Pattern pat(1, 2);
  pat.Fill(&buf[0], buf.size(), 1 << 20);
  uint64_t o, n;
  EXPECT_FALSE(pat.Verify(buf.data(), buf.size(), (1 << 20) + (64 << 10), &o, &n))
      << "a block at the wrong offset must fail";
  EXPECT_FALSE(Pattern(1, 3).Verify(buf.data(), buf.size(), 1 << 20, &o, &n))
      << "another rank's file must fail";
  EXPECT_FALSE(Pattern(2, 2).Verify(buf.data(), buf.size(), 1 << 20, &o, &n))
      << "another seed must fail";
}

TEST(BenchPattern, UnalignedFillMatchesAlignedContent) {
  Pattern pat(9, 1);
  std::string whole(8192, '\0'), part(1000, '\0');
  pat.Fill(&whole[0], whole.size(), 0);
  pat.Fill(&part[0], part.size(), 1000);  // not 512-aligned: the slow path
  EXPECT_EQ(whole.substr(1000, 1000), part);
}

// One write test of two repetitions at `first` and `second` seconds per GiB.
TestResult WriteTest(const std::string& api, double first, double second) {
  TestResult t;
  t.api = api;
  for (int i = 0; i < 2; ++i) {
    IterResult w;
    w.access = "write";
    w.iter = i;
    w.bytes = 1u << 30;
    w.transfers = 1024;
    w.io = w.total = i == 0 ? first : second;
    t.iters.push_back(w);
  }
  return t;
}

TEST(BenchReport, SummaryStatisticsAndFractionsOfBothLimits) {
  Report r;
  r.tasks = 2;
  // The references may come after the APIs: every row gets its fractions.
  r.tests = {WriteTest("POSIX", 2.0, 4.0),          // 512, 256: 384 MiB/s
             WriteTest("DEVICE-LIMIT", 0.5, 0.5),   // 2048 MiB/s
             WriteTest("FIO-SYNC", 1.0, 1.0)};      // 1024 MiB/s
  Summarise(&r);
  const OpSummary& s = r.tests[0].summary.at(0);
  EXPECT_EQ(s.operation, "write");
  EXPECT_DOUBLE_EQ(s.max_mib, 512);
  EXPECT_DOUBLE_EQ(s.min_mib, 256);
  EXPECT_DOUBLE_EQ(s.mean_mib, 384);
  EXPECT_DOUBLE_EQ(s.stddev_mib, 128);
  EXPECT_DOUBLE_EQ(s.mean_time, 3.0);
  EXPECT_DOUBLE_EQ(s.fraction_of_device, 384.0 / 2048.0);
  EXPECT_DOUBLE_EQ(s.fraction_of_fio_sync, 384.0 / 1024.0);
  const OpSummary& dev = r.tests[1].summary.at(0);
  EXPECT_LT(dev.fraction_of_device, 0) << "not a fraction of itself";
  EXPECT_LT(dev.fraction_of_fio_sync, 0) << "the ceiling";
  const OpSummary& sync = r.tests[2].summary.at(0);
  EXPECT_DOUBLE_EQ(sync.fraction_of_device, 0.5);
  EXPECT_LT(sync.fraction_of_fio_sync, 0);
  const std::string json = Json(r);
  EXPECT_NE(json.find("\"fractionOfDeviceLimit\": 0.1875, "
                      "\"fractionOfFioSync\": 0.375"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"fractionOfDeviceLimit\": null, "
                      "\"fractionOfFioSync\": null"),
            std::string::npos)
      << json;
  const std::string text = TextSummary(r);
  EXPECT_NE(text.find("      0.19      0.38 POSIX"), std::string::npos) << text;
  EXPECT_NE(text.find("         -         - DEVICE-LIMIT"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      0.50         - FIO-SYNC"), std::string::npos)
      << text;

  // Without the references, no fractions, and no line explaining them.
  r.tests.resize(1);
  Summarise(&r);
  EXPECT_LT(r.tests[0].summary.at(0).fraction_of_device, 0);
  EXPECT_LT(r.tests[0].summary.at(0).fraction_of_fio_sync, 0);
  EXPECT_EQ(TextSummary(r).find("/device, /fio-sync:"), std::string::npos);

  // A skipped reference is no reference.
  r.tests = {WriteTest("POSIX", 2.0, 4.0), WriteTest("DEVICE-LIMIT", 1, 1)};
  r.tests[1].skipped = "fio failed";
  Summarise(&r);
  EXPECT_LT(r.tests[0].summary.at(0).fraction_of_device, 0);
}

TEST(BenchReport, IorKeysBesideOurs) {
  Report r;
  r.tasks = 2;
  r.tests = {WriteTest("POSIX", 2.0, 4.0)};  // 512 and 256 MiB/s
  r.tests.push_back(WriteTest("HDF5", 1, 1));
  r.tests[1].skipped = "built without parallel HDF5";
  Summarise(&r);
  const std::string json = Json(r);
  for (const char* want :
       {"\"summary\": [\n    {\"operation\": \"write\", \"API\": \"POSIX\", "
        "\"TestID\": 0,",
        "\"bwMaxMIB\": 512, \"bwMinMIB\": 256, \"bwMeanMIB\": 384, "
        "\"bwStdMIB\": 128, \"OPsMax\": 512, \"OPsMin\": 256, \"OPsMean\": 384, "
        "\"OPsSD\": 128, \"MeanTime\": 3, \"xsizeMiB\": 1024",
        "\"Results\": [\n        {\"access\": \"write\", \"bwMiB\": 512,",
        "\"max\": {\"writeMiB\": 512, \"writeMB\": 536.870912}",
        "\"TestID\": 1,", "\"Command line\": "}) {
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n" << json;
  }
  EXPECT_EQ(json.find("\"API\": \"HDF5\""), std::string::npos)
      << "a skipped test has no summary row";
  EXPECT_EQ(IorHumanSize(1u << 20), "1 MiB");
  EXPECT_EQ(IorHumanSize(3u << 29), "1.50 GiB");
  EXPECT_EQ(IorHumanSize(256u << 10), "262144 bytes");
}

TEST(BenchFio, ReadsBandwidthAndMeanLatencyOfASection) {
  const std::string json =
      "{ \"jobs\" : [ { \"read\" : { \"io_bytes\" : 0, \"bw_bytes\" : 0,\n"
      "  \"clat_ns\" : { \"mean\" : 1.0 },\n"
      "  \"lat_ns\" : { \"min\" : 0, \"mean\" : 0.000000 } },\n"
      "  \"write\" : { \"io_bytes\" : 8388608, \"bw_bytes\" : 524288000,\n"
      "  \"slat_ns\" : { \"mean\" : 5.0 },\n"
      "  \"lat_ns\" : { \"min\" : 5625492, \"max\" : 6814707,\n"
      "                \"mean\" : 6197049.25, \"N\" : 8 } } } ] }";
  EXPECT_DOUBLE_EQ(FioBandwidth(json, "write"), 524288000);
  EXPECT_DOUBLE_EQ(FioMeanLatency(json, "write"), 6197049.25e-9);
  EXPECT_DOUBLE_EQ(FioBandwidth(json, "read"), 0);
  EXPECT_EQ(FioBandwidth(json, "trim"), -1);
  EXPECT_EQ(FioMeanLatency("fio: no such engine", "write"), -1);
}

TEST(BenchReport, WaitedAndDurableWithTiers) {
  Report r;
  r.params.fast_root = "/f";
  r.params.slow_root = "/s";
  TestResult t;
  t.api = "ADIOS2-BB";
  IterResult w;
  w.access = "write";
  w.bytes = 1u << 30;
  w.transfers = 1024;
  w.io = 0.5;
  w.total = w.waited = 1.0;  // 1024 MiB/s
  w.durable = 4.0;           // 256 MiB/s
  t.iters.push_back(w);
  w.iter = 1;
  w.total = w.waited = 2.0;  // 512 MiB/s
  w.durable = 8.0;           // 128 MiB/s
  t.iters.push_back(w);
  IterResult rd = w;
  rd.access = "read";
  rd.waited = rd.durable = -1;
  t.iters.push_back(rd);
  r.tests = {t};
  Summarise(&r);
  const OpSummary& s = r.tests[0].summary.at(0);
  EXPECT_DOUBLE_EQ(s.mean_waited, 1.5);
  EXPECT_DOUBLE_EQ(s.mean_durable, 6.0);
  EXPECT_DOUBLE_EQ(s.mean_waited_mib, 768);
  EXPECT_DOUBLE_EQ(s.mean_durable_mib, 192);
  EXPECT_LT(r.tests[0].summary.at(1).mean_waited, 0) << "reads have none";

  const std::string head = TextIterHeader(r.params);
  EXPECT_NE(head.find("waited_s"), std::string::npos) << head;
  EXPECT_NE(head.find("durable_s"), std::string::npos) << head;
  const std::string row = TextIter(t.iters[0], r.params);
  EXPECT_NE(row.find("1.000000   1024.00       4.000000   256.00"),
            std::string::npos)
      << row;
  EXPECT_NE(TextIter(rd, r.params).find("-          -"), std::string::npos);
  EXPECT_NE(TextSummary(r).find("ADIOS2-BB: mean waited_s 1.500000 (768.00 "
                                "MiB/s), mean durable_s 6.000000 (192.00"),
            std::string::npos)
      << TextSummary(r);
  const std::string json = Json(r);
  for (const char* want :
       {"\"waitedTime\": 1, \"waitedBwMiB\": 1024, \"durableTime\": 4, "
        "\"durableBwMiB\": 256",
        "\"meanWaitedTime\": 1.5", "\"meanDurableBwMiB\": 192",
        "\"waitedTime\": null", "\"slowRoot\": \"/s\""}) {
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n" << json;
  }

  // Without tiers, IOR's columns only.
  r.params = Params();
  EXPECT_EQ(TextIterHeader(r.params).find("waited_s"), std::string::npos);
  EXPECT_EQ(TextIter(t.iters[0], r.params).find("4.000000"), std::string::npos);
}

}  // namespace
}  // namespace bench
}  // namespace sluice
