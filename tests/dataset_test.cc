// The dataset layer in one process (Context::InitSingle): ids, elements,
// errors, reclaiming, when to checkpoint, performance variables. MPI runs
// are dataset_mpi_test and dataset_crash_test.
#include <signal.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <thread>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "dataset/record.h"
#include "sluice/dataset.h"
#include "sluice/fs.h"
#include "test_util.h"

namespace sluice {
namespace {

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SLUICE_DATA_ROOTS", dir_.path().c_str(), 1);
    ASSERT_TRUE(Context::InitSingle("ctx", "", &ctx_).ok());
  }
  void TearDown() override {
    if (ctx_) EXPECT_TRUE(ctx_->Fini().ok());
    unsetenv("SLUICE_DATA_ROOTS");
  }
  // Writes id `id` with one shared element of n bytes of `fill`.
  Status Write(int64_t id, size_t n, char fill) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx_->OpenDataset("d", id, kDatasetWrite, &ds);
    if (!s.ok()) return s;
    std::unique_ptr<Element> el;
    s = ds->OpenElement("e", ElementKind::kShared, &el);
    std::string data(n, fill);
    if (s.ok()) s = el->Write(0, data.data(), n);
    if (s.ok()) s = el->Close();
    Status c = ds->Close();
    return s.ok() ? c : s;
  }

  test::TempDir dir_;
  std::unique_ptr<Context> ctx_;
};

TEST_F(DatasetTest, AnIdReadsBackAndHighestAndNewestPickTheRightOne) {
  ASSERT_TRUE(Write(5, 1000, 'a').ok());
  ASSERT_TRUE(Write(2, 2000, 'b').ok());  // committed last, lower id
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds).ok());
  EXPECT_EQ(ds->id(), 5);
  ASSERT_TRUE(ds->Close().ok());
  ASSERT_TRUE(ctx_->OpenDataset("d", kDatasetIdNewest, kDatasetRead, &ds).ok());
  EXPECT_EQ(ds->id(), 2);
  std::unique_ptr<Element> el;
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kShared, &el).ok());
  EXPECT_EQ(el->size(), 2000u);
  std::string buf(3000, 'x');
  size_t got = 0;
  ASSERT_TRUE(el->Read(0, &buf[0], buf.size(), &got).ok());
  EXPECT_EQ(got, 2000u);
  EXPECT_EQ(buf.substr(0, 2000), std::string(2000, 'b'));
  // Writing an element of an id opened for reading is refused.
  EXPECT_FALSE(el->Write(0, "x", 1).ok());
  ASSERT_TRUE(ds->Close().ok());
}

// A variable read while another thread sets it (TSan checks the locking).
TEST_F(DatasetTest, GetConfigIsSafeBesideSetConfig) {
  std::thread setter([this] {
    for (int i = 0; i < 200; ++i) {
      EXPECT_TRUE(ctx_->SetConfig("mtbf", std::to_string(100 + i)).ok());
    }
  });
  for (int i = 0; i < 200; ++i) {
    const std::string v = ctx_->GetConfig("mtbf").value;
    EXPECT_TRUE(v == "0" || (v >= "100" && v <= "299")) << v;
  }
  setter.join();
  EXPECT_EQ(ctx_->GetConfig("mtbf").value, "299");
}

// Ids of 19 digits are ids like any other: listed, and HIGHEST.
TEST_F(DatasetTest, TheLargestIdsAreListedAndHighest) {
  ASSERT_TRUE(Write(7, 100, 'a').ok());
  ASSERT_TRUE(Write(INT64_MAX, 100, 'b').ok());
  std::vector<DatasetIdInfo> ids;
  ASSERT_TRUE(ctx_->ListIds("d", &ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[1].id, INT64_MAX);
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds).ok());
  EXPECT_EQ(ds->id(), INT64_MAX);
  EXPECT_TRUE(ds->Close().ok());
}

TEST_F(DatasetTest, BadNamesIdsAndStridesAreErrors) {
  std::unique_ptr<Dataset> ds;
  EXPECT_EQ(ctx_->OpenDataset("../x", 1, kDatasetWrite, &ds).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ctx_->OpenDataset("d", -1, kDatasetWrite, &ds).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ctx_->OpenDataset("d", 1, kDatasetRead, &ds).code(),
            Code::kNotFound);
  ASSERT_TRUE(ctx_->OpenDataset("d", 1, kDatasetWrite, &ds).ok());
  std::unique_ptr<Element> el;
  EXPECT_EQ(ds->OpenElement("a/b", ElementKind::kShared, &el).code(),
            Code::kInvalidArgument);
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kShared, &el).ok());
  char buf[64] = {};
  // Blocks that would overlap.
  EXPECT_EQ(el->WriteStrided(0, buf, 4, 16, 8).code(), Code::kInvalidArgument);
  ASSERT_TRUE(el->WriteStrided(0, buf, 4, 16, 32).ok());
  EXPECT_EQ(el->size(), 3u * 32 + 16);
  ASSERT_TRUE(ds->Close().ok());
  // A committed id is not written again.
  EXPECT_EQ(ctx_->OpenDataset("d", 1, kDatasetWrite, &ds).code(),
            Code::kAlreadyExists);
  EXPECT_NE(Context::InitSingle("bad name", "", &ctx_).code(), Code::kOk);
  ctx_.reset();
}

TEST_F(DatasetTest, AnAbandonedIdIsReclaimedAtTheNextContext) {
  ASSERT_TRUE(Write(1, 100000, 'a').ok());
  {
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx_->OpenDataset("d", 2, kDatasetWrite, &ds).ok());
    std::unique_ptr<Element> el;
    ASSERT_TRUE(ds->OpenElement("e", ElementKind::kUnique, &el).ok());
    std::string data(100000, 'z');
    ASSERT_TRUE(el->Write(0, data.data(), data.size()).ok());
    // Destroyed without Close: never committed.
  }
  ASSERT_TRUE(ctx_->Fini().ok());
  ASSERT_TRUE(Context::InitSingle("ctx", "", &ctx_).ok());
  std::vector<DatasetIdInfo> ids;
  ASSERT_TRUE(ctx_->ListIds("d", &ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].id, 1);
  EXPECT_EQ(ids[0].state, IdState::kCommitted);
  EXPECT_EQ(ids[0].bytes, 100000u);
  EXPECT_EQ(ids[1].id, 2);
  EXPECT_EQ(ids[1].state, IdState::kReclaimed);
  std::unique_ptr<Dataset> ds;
  EXPECT_EQ(ctx_->OpenDataset("d", 2, kDatasetRead, &ds).code(),
            Code::kNotFound);
  // Written again and committed, it is committed.
  ASSERT_TRUE(Write(2, 10, 'c').ok());
  ASSERT_TRUE(ctx_->ListIds("d", &ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[1].state, IdState::kCommitted);
  std::vector<std::string> names;
  ASSERT_TRUE(ctx_->ListDatasets(&names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"d"});
}

TEST_F(DatasetTest, AFailureInjectedAtCloseLeavesNoId) {
  ASSERT_TRUE(Write(1, 10, 'a').ok());
  ASSERT_TRUE(ctx_->SetConfig("test_fail_commit_rank", "0").ok());
  Status s = Write(2, 10, 'b');
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("rank 0"), std::string::npos) << s.ToString();
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds).ok());
  EXPECT_EQ(ds->id(), 1);
  ASSERT_TRUE(ds->Close().ok());
  // Variables of the whole context cannot change once it runs.
  for (const char* v : {"write_buffer_size", "data_roots", "root", "options",
                        "config_file", "extent_bytes"}) {
    EXPECT_EQ(ctx_->SetConfig(v, "8m").code(), Code::kInvalidArgument) << v;
  }
}

TEST_F(DatasetTest, ALocalFailureGivenToCloseLeavesNoId) {
  ASSERT_TRUE(Write(1, 10, 'a').ok());
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", 2, kDatasetWrite, &ds).ok());
  std::unique_ptr<Element> el;
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kShared, &el).ok());
  ASSERT_TRUE(el->Write(0, "bbbb", 4).ok());
  ASSERT_TRUE(el->Close().ok());
  Status s = ds->Close(Status::IOError("the caller's own bookkeeping failed"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("the caller's own bookkeeping failed"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("rank 0"), std::string::npos) << s.ToString();
  std::vector<DatasetIdInfo> ids;
  ASSERT_TRUE(ctx_->ListIds("d", &ids).ok());
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].id, 1);
  // An OK status is an ordinary Close.
  ASSERT_TRUE(ctx_->OpenDataset("d", 3, kDatasetWrite, &ds).ok());
  EXPECT_TRUE(ds->Close(Status::OK()).ok());
  ASSERT_TRUE(ctx_->ListIds("d", &ids).ok());
  EXPECT_EQ(ids.size(), 2u);
}

TEST_F(DatasetTest, ShouldCheckpointAnswersFromCostMtbfEndAndSignal) {
  bool now = false;
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_TRUE(now) << "nothing written yet";
  ASSERT_TRUE(Write(1, 1000, 'a').ok());
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_FALSE(now) << "no MTBF, no end, no signal";
  raise(SIGUSR1);
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_TRUE(now) << "SIGUSR1 arrived";
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_FALSE(now) << "the signal answers once";
  // An end of the job 100 s away, with a margin of 200 s.
  ASSERT_TRUE(ctx_->SetConfig("job_end_time",
                              std::to_string(time(nullptr) + 100)).ok());
  ASSERT_TRUE(ctx_->SetConfig("job_end_margin", "200").ok());
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_TRUE(now) << "the end is near";
  ASSERT_TRUE(ctx_->SetConfig("job_end_time", "0").ok());
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_FALSE(now);
  // An MTBF so short that Daly's interval has passed already.
  ASSERT_TRUE(ctx_->SetConfig("mtbf", "0.000001").ok());
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_TRUE(now) << "the optimum interval has passed";
  ASSERT_TRUE(ctx_->SetConfig("mtbf", "1d").ok());
  ASSERT_TRUE(ctx_->ShouldCheckpoint("d", &now).ok());
  EXPECT_FALSE(now) << "a day's MTBF: not yet";
  DatasetStats st;
  ASSERT_TRUE(ctx_->IdStats("d", 1, &st).ok());
  EXPECT_EQ(st.write.bytes, 1000u);
  EXPECT_EQ(st.commit.calls, 1u);
  EXPECT_EQ(ctx_->IdStats("d", 9, &st).code(), Code::kNotFound);
}


TEST_F(DatasetTest, AFailedWriteKeepsTheIdFromCommitting) {
  ASSERT_TRUE(Write(1, 10, 'a').ok());
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", 2, kDatasetWrite, &ds).ok());
  std::unique_ptr<Element> el;
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kUnique, &el).ok());
  ASSERT_TRUE(el->Write(0, "abc", 3).ok());
  EXPECT_FALSE(el->Write(1ull << 62, "x", 1).ok());
  // Closing the element says so again, and the id does not commit.
  EXPECT_FALSE(el->Close().ok());
  EXPECT_FALSE(el->Close().ok());
  EXPECT_FALSE(ds->Close().ok());
  ASSERT_TRUE(ctx_->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds).ok());
  EXPECT_EQ(ds->id(), 1);
  ASSERT_TRUE(ds->Close().ok());
}

TEST_F(DatasetTest, HandlesOutliveTheirParentsAndFailCleanly) {
  std::unique_ptr<Dataset> ds;
  ASSERT_TRUE(ctx_->OpenDataset("d", 1, kDatasetWrite, &ds).ok());
  // The same id twice for writing in one context: refused.
  std::unique_ptr<Dataset> again;
  EXPECT_EQ(ctx_->OpenDataset("d", 1, kDatasetWrite, &again).code(),
            Code::kInvalidArgument);
  std::unique_ptr<Element> el;
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kShared, &el).ok());
  ASSERT_TRUE(el->Write(0, "0123456789", 10).ok());
  ASSERT_TRUE(el->Write(100, "0123456789", 10).ok());
  ASSERT_TRUE(ds->Close().ok());
  ds.reset();
  // The element handle outlived its dataset.
  EXPECT_FALSE(el->Write(0, "x", 1).ok());
  EXPECT_EQ(el->size(), 110u);
  el.reset();
  ASSERT_TRUE(ctx_->OpenDataset("d", 1, kDatasetRead, &ds).ok());
  ASSERT_TRUE(ds->OpenElement("e", ElementKind::kShared, &el).ok());
  // Holes read as zeros.
  std::string buf(110, 'x');
  size_t got = 0;
  ASSERT_TRUE(el->Read(0, &buf[0], buf.size(), &got).ok());
  ASSERT_EQ(got, 110u);
  EXPECT_EQ(buf.substr(0, 10), "0123456789");
  EXPECT_EQ(buf.substr(10, 90), std::string(90, '\0'));
  EXPECT_EQ(buf.substr(100), "0123456789");
  // The context ends under the dataset and the element: an error, which
  // names them, and they fail from then on.
  Status fini = ctx_->Fini();
  EXPECT_NE(fini.ToString().find("1 dataset(s) open"), std::string::npos)
      << fini.ToString();
  EXPECT_FALSE(el->Read(0, &buf[0], 10, &got).ok());
  std::unique_ptr<Request> req;
  Status s = el->ReadNb(0, &buf[0], 10, &req);
  if (s.ok()) EXPECT_FALSE(req->Wait().ok());
  EXPECT_FALSE(ds->Close().ok());
  el.reset();
  ds.reset();
  ctx_.reset();
}

TEST_F(DatasetTest, UnlinkRemovesTheRecordAndTheData) {
  ASSERT_TRUE(Write(1, 5000, 'a').ok());
  ASSERT_TRUE(Write(2, 5000, 'b').ok());
  ASSERT_TRUE(ctx_->UnlinkId("d", 1).ok());
  EXPECT_EQ(ctx_->UnlinkId("d", 1).code(), Code::kNotFound);
  const std::string root = ctx_->root();
  ASSERT_TRUE(ctx_->Fini().ok());
  ctx_.reset();
  std::unique_ptr<FileSystem> fs;
  ASSERT_TRUE(FileSystem::Open(FsOptions(), root, FileSystem::kReader, &fs).ok());
  std::vector<DirEntry> ids;
  ASSERT_TRUE(fs->ReadDir("/d", &ids).ok());
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids[0].name, "2");
}

TEST(DatasetRecordTest, ForgedOrDamagedRecordsAreRefused) {
  dataset::CommitRecord r;
  r.dataset = "d";
  r.id = 7;
  r.ranks = r.writers = 2;
  r.commit_time_ns = 123;
  dataset::ElementRecord e;
  e.name = "x";
  e.size = 300;
  dataset::PartRecord p;
  p.writer = 1;
  p.size = 300;
  p.ranges = {{0, 100}, {200, 300}};
  e.parts.push_back(p);
  r.elements.push_back(e);
  const std::string good = dataset::EncodeRecord(r);
  dataset::CommitRecord back;
  ASSERT_TRUE(dataset::DecodeRecord(good, "t", &back).ok());
  EXPECT_EQ(back.elements.at(0).parts.at(0).ranges.size(), 2u);
  EXPECT_EQ(back.bytes(), 300u);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(dataset::DecodeRecord(good.substr(0, n), "t", &back).ok())
        << "truncated to " << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x40;
    EXPECT_FALSE(dataset::DecodeRecord(bad, "t", &back).ok()) << "byte " << i;
  }
  std::string ds;
  int64_t id;
  bool reclaimed;
  EXPECT_TRUE(dataset::ParseRecordName("a.b.12", &ds, &id, &reclaimed));
  EXPECT_EQ(ds, "a.b");
  EXPECT_EQ(id, 12);
  EXPECT_TRUE(dataset::ParseRecordName("a.3.reclaimed", &ds, &id, &reclaimed));
  EXPECT_TRUE(reclaimed);
  EXPECT_FALSE(dataset::ParseRecordName("a.3.tmp", &ds, &id, &reclaimed));
  EXPECT_FALSE(dataset::ParseRecordName(".3", &ds, &id, &reclaimed));
  EXPECT_FALSE(dataset::ParseRecordName("a.", &ds, &id, &reclaimed));
  // Every id a dataset may have, and only as RecordName writes it.
  EXPECT_TRUE(dataset::ParseRecordName("a.9223372036854775807", &ds, &id,
                                       &reclaimed));
  EXPECT_EQ(id, INT64_MAX);
  EXPECT_TRUE(dataset::ParseRecordName("a.1000000000000000000", &ds, &id,
                                       &reclaimed));
  EXPECT_EQ(id, 1000000000000000000);
  EXPECT_FALSE(dataset::ParseRecordName("a.9223372036854775808", &ds, &id,
                                        &reclaimed));
  EXPECT_FALSE(dataset::ParseRecordName("a.07", &ds, &id, &reclaimed));
  EXPECT_TRUE(dataset::ParseRecordName("a.0", &ds, &id, &reclaimed));
}

const char kRecordV3Hex[] =
    "534c55494345445303000000aa00000000000000010000006405000000000000000400000002"
    "000000010000006300000000000000020000000000000000000000010000000100000001"
    "000000010000007800000000ffffffff14000000000000000200000002000000020000000a"
    "0000000000000022220000000000000100000000000000000000000a000000000000000200"
    "00000300000014000000000000003333000000000000010000000a00000000000000140000"
    "0000000000eed8b95c27ea6740";

const char kRecordV2Hex[] =
    "534c55494345445302000000960000000000000001000000640500000000000000040000"
    "000200000001000000630000000000000001000000010000007800000000ffffffff1400"
    "0000000000000200000002000000020000000a0000000000000022220000000000000100"
    "000000000000000000000a00000000000000020000000300000014000000000000003333"
    "000000000000010000000a0000000000000014000000000000006241bc68c75ff81e";

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// A file_per_node record: the parts of ranks 2 and 3 in the store of their
// node's leader, rank 2. The bytes are pinned: a change of the format must
// change its version.
TEST(DatasetRecordTest, PartsNameTheirStoreAndTheirRank) {
  dataset::CommitRecord r;
  r.dataset = "d";
  r.id = 5;
  r.ranks = 4;
  r.writers = 2;
  r.mode = dataset::kModeFilePerNode;
  r.commit_time_ns = 99;
  r.nodes = 2;
  r.node_of_rank = {0, 0, 1, 1};
  dataset::ElementRecord e;
  e.name = "x";
  e.size = 20;
  for (int rank : {2, 3}) {
    dataset::PartRecord p;
    p.writer = 2;
    p.rank = rank;
    p.size = 10 * (rank - 1);
    p.checksum = 0x1111u * rank;
    p.ranges = {{10 * (rank - 2u), 10 * (rank - 1u)}};
    e.parts.push_back(p);
  }
  r.elements.push_back(e);
  const std::string enc = dataset::EncodeRecord(r);
  std::string hex;
  for (unsigned char c : enc) {
    static const char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  EXPECT_EQ(hex, kRecordV3Hex);
  dataset::CommitRecord back;
  ASSERT_TRUE(dataset::DecodeRecord(enc, "t", &back).ok());
  EXPECT_EQ(back.nodes, 2);
  EXPECT_EQ(back.node_of_rank, (std::vector<int>{0, 0, 1, 1}));
  // Version 2 had no nodes: it reads as one node.
  ASSERT_TRUE(dataset::DecodeRecord(Unhex(kRecordV2Hex), "v2", &back).ok());
  EXPECT_EQ(back.nodes, 1);
  EXPECT_EQ(back.node_of_rank, (std::vector<int>{0, 0, 0, 0}));
  ASSERT_TRUE(dataset::DecodeRecord(enc, "t", &back).ok());
  EXPECT_EQ(back.mode, dataset::kModeFilePerNode);
  // A rank's node beyond the count is refused.
  {
    dataset::CommitRecord bad = r;
    bad.node_of_rank[3] = 2;
    EXPECT_TRUE(dataset::DecodeRecord(dataset::EncodeRecord(bad), "t", &back)
                    .IsCorruption());
  }
  ASSERT_EQ(back.elements.at(0).parts.size(), 2u);
  EXPECT_EQ(back.elements[0].parts[0].writer, 2);
  EXPECT_EQ(back.elements[0].parts[0].rank, 2);
  EXPECT_EQ(back.elements[0].parts[1].rank, 3);
  EXPECT_EQ(dataset::PartPath("/d/5", back.mode, ElementKind::kShared, "x", 3),
            "/d/5/shared.3/x");
  EXPECT_EQ(dataset::PartPath("/d/5", dataset::kModeBasic,
                              ElementKind::kShared, "x", 3),
            "/d/5/shared/x");
  EXPECT_EQ(dataset::PartPath("/d/5", back.mode, ElementKind::kUnique, "x", 3),
            "/d/5/rank.3/x");
  // Version 1 (before file_per_node) had no rank in a part: each part was
  // its writer's. The same record less the ranks, mode basic, still reads.
  std::string v1 = Unhex(kRecordV2Hex);
  v1.erase(v1.size() - 8);
  v1.erase(v1.begin() + 130, v1.begin() + 134);  // rank 3
  v1.erase(v1.begin() + 86, v1.begin() + 90);    // rank 2
  v1[8] = 1;                                     // version
  v1[12] = static_cast<char>(0x96 - 8);          // body length
  v1[41] = 0;                                    // mode basic
  const uint64_t sum = XXH64(v1.data(), v1.size(), 0);
  for (int i = 0; i < 8; ++i) v1 += static_cast<char>(sum >> (8 * i));
  ASSERT_TRUE(dataset::DecodeRecord(v1, "v1", &back).ok());
  EXPECT_EQ(back.mode, dataset::kModeBasic);
  EXPECT_EQ(back.elements.at(0).parts.at(1).writer, 2);
  EXPECT_EQ(back.elements[0].parts[1].rank, 2);
  EXPECT_EQ(back.elements[0].parts[1].size, 20u);
  // An unknown mode is refused.
  r.mode = 2;
  EXPECT_TRUE(
      dataset::DecodeRecord(dataset::EncodeRecord(r), "t", &back).IsCorruption());
}

}  // namespace
}  // namespace sluice
