// Dataset ids written by several ranks of one process (tests/thread_group.h):
// the commit across ranks and file_per_node's node writer, without MPI, so
// that the sanitizers see them. Under mpiexec the same paths are tested by
// dataset_mpi_test and on the cluster test bed.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "dataset_bytes.h"
#include "dataset/group.h"
#include "sluice/dataset.h"
#include "test_util.h"
#include "thread_group.h"

namespace sluice {
namespace {

constexpr size_t kBlock = 300000;  // a rank's share of the shared element

class DatasetRanksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SLUICE_DATA_ROOTS", dir_.path().c_str(), 1);
    setenv("SLUICE_DATASET_MODE", "file_per_node", 1);
  }
  void TearDown() override {
    unsetenv("SLUICE_DATA_ROOTS");
    unsetenv("SLUICE_DATASET_MODE");
  }

  // Runs `body` on each rank of a job whose rank r is on node nodes[r],
  // each with a context of its own (test::RunJob).
  void Job(const std::vector<int>& nodes,
           const std::function<void(Context*, int)>& body,
           bool fini_ok = true) {
    test::RunJob(nodes, body, fini_ok);
  }

  // Each rank writes its block of the shared element "field" (in two
  // writes, one of them non-blocking, while the other element is written)
  // and its unique element "own".
  static void WriteId(Context* ctx, int rank, int64_t id, bool* ok) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx->OpenDataset("d", id, kDatasetWrite, &ds);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<Element> field, own;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    ASSERT_TRUE(ds->OpenElement("own", ElementKind::kUnique, &own).ok());
    const std::string mine = DatasetBytes(id, 1, rank * kBlock, kBlock);
    const std::string unique = DatasetBytes(id, 100 + rank, 0, 5000 + rank);
    std::unique_ptr<Request> req;
    ASSERT_TRUE(field->WriteNb(rank * kBlock + kBlock / 2,
                               mine.data() + kBlock / 2, kBlock - kBlock / 2,
                               &req).ok());
    EXPECT_TRUE(own->Write(0, unique.data(), unique.size()).ok());
    EXPECT_TRUE(field->Write(rank * kBlock, mine.data(), kBlock / 2).ok());
    EXPECT_TRUE(req->Wait().ok());
    EXPECT_TRUE(field->Close().ok());
    EXPECT_TRUE(own->Close().ok());
    s = ds->Close();
    *ok = s.ok();
    EXPECT_TRUE(s.ok()) << "rank " << rank << ": " << s.ToString();
  }

  // Reads id `id` back in one process, every byte checked.
  void Verify(int64_t id, int ranks, int writers) {
    std::unique_ptr<Context> ctx;
    ASSERT_TRUE(Context::InitSingle("ctx", "", &ctx).ok());
    std::vector<DatasetIdInfo> ids;
    ASSERT_TRUE(ctx->ListIds("d", &ids).ok());
    bool found = false;
    for (const auto& i : ids) {
      if (i.id != id) continue;
      found = true;
      EXPECT_EQ(i.ranks, ranks);
      EXPECT_EQ(i.writers, writers);
    }
    EXPECT_TRUE(found) << "id " << id << " not listed";
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", id, kDatasetRead, &ds).ok());
    std::unique_ptr<Element> el;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &el).ok());
    EXPECT_EQ(el->size(), ranks * kBlock);
    std::string buf(ranks * kBlock, '\0');
    size_t got = 0;
    ASSERT_TRUE(el->Read(0, &buf[0], buf.size(), &got).ok());
    EXPECT_EQ(got, buf.size());
    EXPECT_TRUE(buf == DatasetBytes(id, 1, 0, buf.size())) << "field differs";
    for (int r = 0; r < ranks; ++r) {
      ASSERT_TRUE(ds->OpenElement("own", ElementKind::kUnique, &el, r).ok());
      std::string u(5000 + r, '\0');
      ASSERT_TRUE(el->Read(0, &u[0], u.size(), &got).ok());
      EXPECT_TRUE(u == DatasetBytes(id, 100 + r, 0, u.size())) << "own of " << r;
    }
    EXPECT_TRUE(ds->Close().ok());
    EXPECT_TRUE(ctx->Fini().ok());
  }

  test::TempDir dir_;
};

// Four ranks on two nodes, placed alternately (as --map-by node): the ids
// are held by the two leaders' stores, and only those stores exist.
TEST_F(DatasetRanksTest, FilePerNodeWritesOneStorePerNode) {
  Job({0, 1, 0, 1}, [](Context* ctx, int rank) {
    for (int64_t id = 1; id <= 2; ++id) {
      bool ok = false;
      WriteId(ctx, rank, id, &ok);
    }
  });
  Verify(1, 4, 2);
  Verify(2, 4, 2);
  // writer.0 (node 0's leader) and writer.1 (node 1's); the single
  // contexts of Verify opened writer.0, which existed.
  std::vector<std::string> names;
  for (int w = 0; w < 4; ++w) {
    if (access(FileSystem::StorePath(dir_.path() + "/ctx", w).c_str(), F_OK) == 0) {
      names.push_back(std::to_string(w));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"0", "1"}));
}

// A node of one rank beside a node of two: the lone rank has no node
// writer, yet makes every collective call the others make.
TEST_F(DatasetRanksTest, ANodeOfOneRankBesideANodeOfTwo) {
  Job({0, 0, 1}, [](Context* ctx, int rank) {
    bool ok = false;
    WriteId(ctx, rank, 1, &ok);
  });
  Verify(1, 3, 2);
}

// The node's store fills while a rank that is not the leader writes through
// it (its writes do not wait for their outcome: a failure comes back at
// its file's close, or at the leader's barrier of the node's store): every
// rank's close fails, naming the store, and the id never exists.
TEST_F(DatasetRanksTest, AWriteTheLeaderCouldNotStoreFailsTheCommit) {
  test::SmallTmpfs small(dir_.path() + "/small", "24m");
  if (!small.error().empty()) GTEST_SKIP() << small.error();
  setenv("SLUICE_DATA_ROOTS", (dir_.path() + "/small").c_str(), 1);
  Job(
      {0, 0},
      [](Context* ctx, int rank) {
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", 1, kDatasetWrite, &ds).ok());
    std::unique_ptr<Element> el;
    ASSERT_TRUE(ds->OpenElement("big", ElementKind::kShared, &el).ok());
    // Rank 1 writes 32 MiB through the leader, more than the root holds.
    const std::string mb(1 << 20, static_cast<char>('a' + rank));
    Status w;
    for (int i = 0; rank == 1 && i < 32 && w.ok(); ++i) {
      w = el->Write(static_cast<uint64_t>(i) << 20, mb.data(), mb.size());
    }
    el->Close();
    Status s = ds->Close();
    EXPECT_FALSE(s.ok()) << "rank " << rank << ": the id committed";
    EXPECT_EQ(s.code(), Code::kNoSpace) << s.ToString();
    EXPECT_NE(s.message().find("writer.00000000"), std::string::npos)
        << s.ToString();
      },
      /*fini_ok=*/false);
  std::unique_ptr<Context> ctx;
  ASSERT_TRUE(small.Resize("256m"));
  ASSERT_TRUE(Context::InitSingle("ctx", "", &ctx).ok());
  std::unique_ptr<Dataset> ds;
  EXPECT_TRUE(ctx->OpenDataset("d", 1, kDatasetRead, &ds).IsNotFound());
  EXPECT_TRUE(ctx->Fini().ok());
}

// A rank failing its close fails every rank's, naming it, and the node's
// store keeps nothing of the id once the next context opens.
TEST_F(DatasetRanksTest, AFailedCloseOnANodeRankLeavesNoId) {
  Job({0, 0, 0}, [](Context* ctx, int rank) {
    bool ok = false;
    WriteId(ctx, rank, 1, &ok);
    ASSERT_TRUE(ctx->SetConfig("test_fail_commit_rank", "2").ok());
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", 2, kDatasetWrite, &ds).ok());
    std::unique_ptr<Element> el;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &el).ok());
    const std::string mine = DatasetBytes(2, 1, rank * kBlock, kBlock);
    EXPECT_TRUE(el->Write(rank * kBlock, mine.data(), kBlock).ok());
    Status s = ds->Close();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.ToString();
  });
  std::unique_ptr<Context> ctx;
  ASSERT_TRUE(Context::InitSingle("ctx", "", &ctx).ok());
  std::vector<DatasetIdInfo> ids;
  ASSERT_TRUE(ctx->ListIds("d", &ids).ok());
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].state, IdState::kCommitted);
  EXPECT_EQ(ids[1].id, 2);
  EXPECT_EQ(ids[1].state, IdState::kReclaimed);
  EXPECT_TRUE(ctx->Fini().ok());
  Verify(1, 3, 1);
}

}  // namespace
}  // namespace sluice
