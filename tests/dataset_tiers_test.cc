// Data roots and drains (src/dataset/tiers.cc, src/tier/drain.cc): the
// root chosen at init, drained ids in every aggregation read back in place
// by another rank count with the first root gone, a damaged first copy
// falling back to the drained one, end_of_job drains, keep_last. Several
// ranks of one process (tests/thread_group.h); node-local roots and kills
// are tested on the cluster test bed and by drain_crash_test.
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <thread>

#include "dataset/group.h"
#include "dataset_bytes.h"
#include "sluice/dataset.h"
#include "test_util.h"
#include "thread_group.h"

namespace sluice {
namespace {

std::vector<std::string> Ls(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// A rank's share of the shared element: 1 MiB and a bit, so that parts
// span several chunks of a container... not all: chunks are 4 MiB; the
// unique element is small.
constexpr size_t kBlock = (1u << 20) + 12345;

class TiersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fast_ = dir_.path() + "/fast";
    slow_ = dir_.path() + "/slow";
    Set("SLUICE_DATA_ROOTS", fast_ + "," + slow_);
    Set("SLUICE_STAGE_MODE", "immediate");
  }
  void TearDown() override {
    for (const auto& n : set_) unsetenv(n.c_str());
  }
  void Set(const std::string& name, const std::string& value) {
    setenv(name.c_str(), value.c_str(), 1);
    set_.push_back(name);
  }

  void Job(const std::vector<int>& nodes,
           const std::function<void(Context*, int)>& body) {
    test::RunJob(nodes, body);
  }

  // Each rank writes its block of the shared element "field" and its
  // unique element "own".
  static void WriteId(Context* ctx, int rank, int64_t id) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx->OpenDataset("d", id, kDatasetWrite, &ds);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<Element> field, own;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    ASSERT_TRUE(ds->OpenElement("own", ElementKind::kUnique, &own).ok());
    const std::string mine = DatasetBytes(id, 1, rank * kBlock, kBlock);
    // Two writes with a gap between them that the next write fills: the
    // store holds three extents of the part.
    ASSERT_TRUE(field->Write(rank * kBlock, mine.data(), 1000).ok());
    ASSERT_TRUE(field->Write(rank * kBlock + 5000, mine.data() + 5000,
                             kBlock - 5000)
                    .ok());
    ASSERT_TRUE(field->Write(rank * kBlock + 1000, mine.data() + 1000, 4000)
                    .ok());
    const std::string unique = DatasetBytes(id, 100 + rank, 0, 5000 + rank);
    ASSERT_TRUE(own->Write(0, unique.data(), unique.size()).ok());
    s = ds->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Reads id `id` (HIGHEST when -1) as rank `rank` of a job of `ranks`
  // ranks, where `writers` ranks wrote it, checking every byte.
  static void CheckId(Context* ctx, int64_t id, int writers,
                      DatasetStats* stats = nullptr) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx->OpenDataset("d", id < 0 ? kDatasetIdHighest : id,
                                kDatasetRead, &ds);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const int64_t got_id = ds->id();
    if (id >= 0) EXPECT_EQ(got_id, id);
    std::unique_ptr<Element> field;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    EXPECT_EQ(field->size(), writers * kBlock);
    std::string buf(writers * kBlock, '\0');
    size_t got = 0;
    // Reads that do not start on a chunk or an extent.
    for (size_t off = 0; off < buf.size(); off += 777777) {
      const size_t n = std::min<size_t>(777777, buf.size() - off);
      s = field->Read(off, &buf[off], n, &got);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(got, n);
    }
    EXPECT_TRUE(buf == DatasetBytes(got_id, 1, 0, buf.size())) << "field";
    for (int r = 0; r < writers; ++r) {
      std::unique_ptr<Element> own;
      ASSERT_TRUE(
          ds->OpenElement("own", ElementKind::kUnique, &own, r).ok());
      std::string u(5000 + r, '\0');
      s = own->Read(0, &u[0], u.size(), &got);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(u, DatasetBytes(got_id, 100 + r, 0, u.size())) << "own of " << r;
    }
    s = ds->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (stats) *stats = ds->stats();
  }

  std::string Ctx(const std::string& root) const { return root + "/ctx"; }

  test::TempDir dir_;
  std::string fast_, slow_;
  std::vector<std::string> set_;
};

TEST_F(TiersTest, EveryAggregationDrainsAndReadsInPlaceWithTheFirstRootGone) {
  struct Case {
    const char* aggregation;
    const char* mode;
    size_t containers;
  };
  for (const Case& c : {Case{"n_n", "basic", 4}, Case{"n_m", "basic", 2},
                        Case{"n_1", "basic", 1},
                        Case{"n_m", "file_per_node", 2}}) {
    SCOPED_TRACE(std::string(c.aggregation) + " " + c.mode);
    Set("SLUICE_AGGREGATION", c.aggregation);
    Set("SLUICE_DATASET_MODE", c.mode);
    // 4 ranks on 2 nodes.
    Job({0, 0, 1, 1}, [&](Context* ctx, int rank) {
      WriteId(ctx, rank, 7);
      DrainState st;
      Status s = ctx->DrainWait("d", 7, &st);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(st.phase, DrainPhase::kDurable);
      EXPECT_EQ(st.root, 1);
      EXPECT_EQ(st.root_path, slow_);
    });
    // Exactly the containers, and the index; nothing half-made left.
    std::vector<std::string> want;
    for (size_t k = 0; k < c.containers; ++k) {
      want.push_back("c." + std::to_string(k));
    }
    EXPECT_EQ(Ls(Ctx(slow_) + "/data/d.7"), want);
    EXPECT_EQ(Ls(Ctx(slow_) + "/commit"), std::vector<std::string>{"d.7.index"});
    EXPECT_EQ(Ls(Ctx(slow_) + "/drain"), std::vector<std::string>{"lock"});
    // Every byte back, by 3 ranks on 1 node, the first root gone.
    ASSERT_EQ(system(("rm -rf " + Ctx(fast_)).c_str()), 0);
    Job({0, 0, 0}, [&](Context* ctx, int) {
      DatasetStats st;
      CheckId(ctx, -1, 4, &st);
      EXPECT_EQ(st.read_root, slow_);
    });
    ASSERT_EQ(system(("rm -rf " + Ctx(fast_) + " " + Ctx(slow_)).c_str()), 0);
  }
}

TEST_F(TiersTest, ADamagedFirstCopyFallsBackToTheDrainedOne) {
  Job({0, 0}, [&](Context* ctx, int rank) {
    WriteId(ctx, rank, 3);
    DrainState st;
    ASSERT_TRUE(ctx->DrainWait("d", 3, &st).ok());
    ASSERT_EQ(st.phase, DrainPhase::kDurable);
  });
  // Damage rank 1's store: every byte of its value log files.
  const std::string store = Ctx(fast_) + "/writer.00000001";
  int damaged = 0;
  std::function<void(const std::string&)> walk = [&](const std::string& d) {
    for (const auto& n : Ls(d)) {
      const std::string p = d + "/" + n;
      struct stat st;
      if (stat(p.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        walk(p);
      } else if (st.st_size > static_cast<off_t>(kBlock / 2)) {
        std::string junk(static_cast<size_t>(st.st_size), 'J');
        std::ofstream(p, std::ios::binary | std::ios::in) << junk;
        ++damaged;
      }
    }
  };
  walk(store);
  ASSERT_GT(damaged, 0);
  // One rank reads: rank 1's store is only read, never opened to write.
  Job({0}, [&](Context* ctx, int) {
    DatasetStats st;
    CheckId(ctx, 3, 2, &st);
    EXPECT_EQ(st.read_root, fast_);
    EXPECT_GT(st.fallback_reads, 0u);
  });
  // Without the drained copy, the damage is an error, not wrong bytes.
  ASSERT_EQ(system(("rm -rf " + Ctx(slow_)).c_str()), 0);
  Job({0}, [&](Context* ctx, int) {
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", 3, kDatasetRead, &ds).ok());
    std::unique_ptr<Element> field;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    std::string buf(2 * kBlock, '\0');
    size_t got = 0;
    EXPECT_FALSE(field->Read(0, &buf[0], buf.size(), &got).ok());
    ASSERT_TRUE(ds->Close().ok());
  });
}

TEST_F(TiersTest, EndOfJobDrainsAtFini) {
  Set("SLUICE_STAGE_MODE", "end_of_job");
  Job({0, 0}, [&](Context* ctx, int rank) {
    WriteId(ctx, rank, 1);
    WriteId(ctx, rank, 2);
    DrainState st;
    ASSERT_TRUE(ctx->GetDrainState("d", 1, &st).ok());
    EXPECT_EQ(st.phase, DrainPhase::kNone);
    EXPECT_FALSE(Exists(Ctx(slow_) + "/commit/d.1.index"));
  });
  EXPECT_TRUE(Exists(Ctx(slow_) + "/commit/d.1.index"));
  EXPECT_TRUE(Exists(Ctx(slow_) + "/commit/d.2.index"));
}

TEST_F(TiersTest, DisableDrainsNothing) {
  Set("SLUICE_STAGE_MODE", "disable");
  Job({0}, [&](Context* ctx, int rank) { WriteId(ctx, rank, 1); });
  EXPECT_FALSE(Exists(Ctx(slow_) + "/commit/d.1.index"));
  Job({0}, [&](Context* ctx, int) { CheckId(ctx, 1, 1); });
}

TEST_F(TiersTest, KeepLastKeepsTheNewestCompleteIdsOfEachRoot) {
  Set("SLUICE_KEEP_LAST", "1,2");
  Job({0, 1}, [&](Context* ctx, int rank) {
    for (int64_t id = 1; id <= 4; ++id) {
      WriteId(ctx, rank, id);
      DrainState st;
      ASSERT_TRUE(ctx->DrainWait("d", id, &st).ok());
      ASSERT_EQ(st.phase, DrainPhase::kDurable);
    }
  });
  // The fast root: the newest id, the older ones only once drained; the
  // slow root: the two newest.
  EXPECT_EQ(Ls(Ctx(fast_) + "/commit"), std::vector<std::string>{"d.4"});
  EXPECT_EQ(Ls(Ctx(slow_) + "/commit"),
            (std::vector<std::string>{"d.3.index", "d.4.index"}));
  EXPECT_EQ(Ls(Ctx(slow_) + "/data"), (std::vector<std::string>{"d.3", "d.4"}));
  Job({0, 1}, [&](Context* ctx, int) {
    CheckId(ctx, 4, 2);
    CheckId(ctx, 3, 2);
    std::unique_ptr<Dataset> ds;
    EXPECT_TRUE(ctx->OpenDataset("d", 2, kDatasetRead, &ds).IsNotFound());
  });
}

TEST_F(TiersTest, AnUnusableFirstRootSendsDataToTheNext) {
  // Missing and impossible to make (its parent is a file).
  const std::string file = dir_.path() + "/file";
  std::ofstream(file) << "x";
  Set("SLUICE_DATA_ROOTS", file + "/sub," + slow_);
  Job({0, 0}, [&](Context* ctx, int rank) {
    EXPECT_EQ(ctx->root(), slow_ + "/ctx");
    WriteId(ctx, rank, 1);
  });
  Job({0, 0}, [&](Context* ctx, int) { CheckId(ctx, 1, 2); });
  // Read-only, and full.
  const std::string ro_dir = dir_.path() + "/ro",
                    full_dir = dir_.path() + "/full";
  test::SmallTmpfs ro(ro_dir, "1m");
  if (!ro.error().empty()) GTEST_SKIP() << ro.error();
  ASSERT_EQ(mount("tmpfs", ro_dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY,
                  "size=1m"),
            0);
  test::SmallTmpfs full(full_dir, "64k");
  {
    std::string block(4096, 'f');
    std::ofstream f(full_dir + "/filler", std::ios::binary);
    for (int i = 0; i < 64 && f; ++i) f << block;
  }
  for (const std::string& first : {ro_dir, full_dir}) {
    SCOPED_TRACE(first);
    ASSERT_EQ(system(("rm -rf " + Ctx(slow_)).c_str()), 0);
    Set("SLUICE_DATA_ROOTS", first + "," + slow_);
    Job({0}, [&](Context* ctx, int rank) {
      EXPECT_EQ(ctx->root(), slow_ + "/ctx");
      WriteId(ctx, rank, 2);
    });
    Job({0}, [&](Context* ctx, int) { CheckId(ctx, 2, 1); });
  }
  // No root at all: a clear error naming each.
  Set("SLUICE_DATA_ROOTS", ro_dir + "," + full_dir);
  std::unique_ptr<Context> ctx;
  Status s = Context::InitSingle("ctx", "", &ctx);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(ro_dir), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(full_dir), std::string::npos) << s.ToString();
}

// A first root that fills up while an id is written: each rank's parts
// move to the next root, what a failed flush left in memory included, and
// the id commits there whole.
TEST_F(TiersTest, ARootThatFillsUpMidWriteSendsTheIdToTheNext) {
  const std::string small = dir_.path() + "/small";
  test::SmallTmpfs tmpfs(small, "16m");
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  Set("SLUICE_DATA_ROOTS", small + "," + slow_);
  Set("SLUICE_STAGE_MODE", "disable");
  constexpr size_t kPiece = 256 * 1024;
  constexpr int kPieces = 32;  // 8 MiB a rank, 24 MiB in all
  Job({0, 0, 0}, [&](Context* ctx, int rank) {
    EXPECT_EQ(ctx->root(), small + "/ctx");
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", 5, kDatasetWrite, &ds).ok());
    std::unique_ptr<Element> field, own;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    ASSERT_TRUE(ds->OpenElement("own", ElementKind::kUnique, &own).ok());
    const uint64_t base = static_cast<uint64_t>(rank) * kPiece * kPieces;
    for (int i = 0; i < kPieces; ++i) {
      const std::string b = DatasetBytes(5, 1, base + i * kPiece, kPiece);
      Status s = field->Write(base + i * kPiece, b.data(), b.size());
      ASSERT_TRUE(s.ok()) << s.ToString();
      const std::string u = DatasetBytes(5, 100 + rank, i * 1000, 1000);
      s = own->Write(i * 1000, u.data(), u.size());
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    Status s = ds->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ds->stats().root, slow_);
  });
  // The id is on the slow root, whole; nothing of it is left on the full
  // one but its emptied stores.
  EXPECT_TRUE(Exists(Ctx(slow_) + "/commit/d.5"));
  EXPECT_FALSE(Exists(Ctx(small) + "/commit/d.5"));
  Set("SLUICE_DATA_ROOTS", small + "," + slow_);
  Job({0, 0}, [&](Context* ctx, int) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ds->id(), 5);
    std::unique_ptr<Element> field;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    std::string buf(3 * kPiece * kPieces, '\0');
    size_t got = 0;
    s = field->Read(0, &buf[0], buf.size(), &got);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(buf == DatasetBytes(5, 1, 0, buf.size()));
    for (int r = 0; r < 3; ++r) {
      std::unique_ptr<Element> own;
      ASSERT_TRUE(ds->OpenElement("own", ElementKind::kUnique, &own, r).ok());
      std::string u(kPieces * 1000, '\0');
      s = own->Read(0, &u[0], u.size(), &got);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(u, DatasetBytes(5, 100 + r, 0, u.size()));
    }
    ASSERT_TRUE(ds->Close().ok());
    EXPECT_EQ(ds->stats().read_root, slow_);
  });
  // With no root after it, a full root is an error naming it.
  Set("SLUICE_DATA_ROOTS", small);
  Job({0}, [&](Context* ctx, int) {
    std::unique_ptr<Dataset> ds;
    ASSERT_TRUE(ctx->OpenDataset("d", 6, kDatasetWrite, &ds).ok());
    std::unique_ptr<Element> field;
    ASSERT_TRUE(ds->OpenElement("field", ElementKind::kShared, &field).ok());
    const std::string b(kPiece, 'x');
    Status s;
    for (int i = 0; s.ok() && i < 64; ++i) {
      s = field->Write(i * kPiece, b.data(), b.size());
    }
    if (s.ok()) s = ds->Close();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(small), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("last of data_roots"), std::string::npos)
        << s.ToString();
    ds->Close();
  });
}

}  // namespace
}  // namespace sluice
