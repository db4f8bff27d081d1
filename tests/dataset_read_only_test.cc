// Read-only contexts (dataset/read_only.h), as the `sluice` tool uses
// them: committed ids read back, torn ids listed and left alone, writes
// and unlinks refused without a change. tool_dataset_test.sh runs the
// tool itself, over MPI jobs.
#include <stdlib.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "dataset/read_only.h"
#include "sluice/dataset.h"
#include "test_util.h"

namespace sluice {
namespace {

class ReadOnlyContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("SLUICE_DATA_ROOTS", dir_.path().c_str(), 1);
    std::unique_ptr<Context> ctx;
    ASSERT_OK(Context::InitSingle("ctx", "", &ctx));
    ASSERT_OK(Write(ctx.get(), 1, 1000, 'a', true));
    ASSERT_OK(Write(ctx.get(), 2, 3000, 'b', true));
    // Id 3: data in the store, no commit record.
    ASSERT_OK(Write(ctx.get(), 3, 500, 'c', false));
    ASSERT_OK(ctx->Fini());
    unsetenv("SLUICE_DATA_ROOTS");
    root_ = dir_.path() + "/ctx";
  }

  // Writes id `id` with one shared element "e" of n bytes of `fill`;
  // commits it if `commit`, else abandons it.
  static Status Write(Context* ctx, int64_t id, size_t n, char fill,
                      bool commit) {
    std::unique_ptr<Dataset> ds;
    Status s = ctx->OpenDataset("d", id, kDatasetWrite, &ds);
    if (!s.ok()) return s;
    std::unique_ptr<Element> el;
    s = ds->OpenElement("e", ElementKind::kShared, &el);
    std::string data(n, fill);
    if (s.ok()) s = el->Write(0, data.data(), n);
    if (s.ok()) s = el->Close();
    if (!commit) return s;
    Status c = ds->Close();
    return s.ok() ? c : s;
  }

  // The states of dataset d's ids, "1:committed 2:committed 3:torn".
  static std::string States(Context* ctx) {
    std::map<std::string, std::vector<dataset::StoredId>> all;
    std::vector<Status> unreadable;
    Status s = dataset::ListStoredIds(ctx, "", &all, &unreadable);
    if (!s.ok()) return s.ToString();
    if (!unreadable.empty()) return unreadable[0].ToString();
    const char* names[] = {"committed", "reclaimed", "torn"};
    std::string out;
    for (const auto& i : all["d"]) {
      out += (out.empty() ? "" : " ") + std::to_string(i.id) + ":" +
             names[static_cast<int>(i.state)];
    }
    return out;
  }

  test::TempDir dir_;
  std::string root_;
};

TEST_F(ReadOnlyContextTest, ReadsCommittedIdsListsTornOnesReclaimsNothing) {
  std::unique_ptr<Context> ro;
  ASSERT_OK(dataset::OpenContextReadOnly(root_, "", &ro));
  EXPECT_TRUE(dataset::IsReadOnly(ro.get()));
  EXPECT_EQ(ro->name(), "ctx");
  EXPECT_EQ(States(ro.get()), "1:committed 2:committed 3:torn");
  std::unique_ptr<Dataset> ds;
  ASSERT_OK(ro->OpenDataset("d", kDatasetIdHighest, kDatasetRead, &ds));
  EXPECT_EQ(ds->id(), 2);
  std::vector<dataset::ElementInfo> els;
  ASSERT_OK(dataset::ListElementInfo(ds.get(), &els));
  ASSERT_EQ(els.size(), 1u);
  EXPECT_EQ(els[0].name, "e");
  EXPECT_EQ(els[0].size, 3000u);
  EXPECT_EQ(els[0].writers, 1);
  std::unique_ptr<Element> el;
  ASSERT_OK(ds->OpenElement("e", ElementKind::kShared, &el));
  std::string buf(4000, 'x');
  size_t got = 0;
  ASSERT_OK(el->Read(0, &buf[0], buf.size(), &got));
  EXPECT_EQ(got, 3000u);
  EXPECT_EQ(buf.substr(0, 3000), std::string(3000, 'b'));
  ASSERT_OK(ds->Close());
  EXPECT_TRUE(ro->OpenDataset("d", 3, kDatasetRead, &ds).IsNotFound());
  ASSERT_OK(ro->Fini());
  // Nothing was reclaimed: a second look finds id 3 torn still, and no
  // marker in the commit directory.
  ASSERT_OK(dataset::OpenContextReadOnly(root_ + "/", "", &ro));
  EXPECT_EQ(States(ro.get()), "1:committed 2:committed 3:torn");
  struct stat st;
  EXPECT_NE(stat((root_ + "/commit/d.3.reclaimed").c_str(), &st), 0);
}

TEST_F(ReadOnlyContextTest, RefusesWritesAndUnlinksChangingNothing) {
  std::unique_ptr<Context> ro;
  ASSERT_OK(dataset::OpenContextReadOnly(root_, "", &ro));
  std::unique_ptr<Dataset> ds;
  Status s = ro->OpenDataset("d", 7, kDatasetWrite, &ds);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.ToString().find("read-only"), std::string::npos) << s.ToString();
  s = ro->UnlinkId("d", 1);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_EQ(States(ro.get()), "1:committed 2:committed 3:torn");
  ASSERT_OK(ro->OpenDataset("d", 1, kDatasetRead, &ds));
  ASSERT_OK(ds->Close());
  // Ended by its destructor, without Fini: no store to close.
  ro.reset();
}

TEST_F(ReadOnlyContextTest, AnythingButAContextDirectoryIsNotFound) {
  std::unique_ptr<Context> ro;
  Status s = dataset::OpenContextReadOnly(dir_.path() + "/none", "", &ro);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  s = dataset::OpenContextReadOnly(root_ + "/writer.00000000", "", &ro);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find("no commit/ directory"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(ro, nullptr);
}

TEST_F(ReadOnlyContextTest, AJobsOpenReclaimsWhatTheListingCallsTorn) {
  setenv("SLUICE_DATA_ROOTS", dir_.path().c_str(), 1);
  std::unique_ptr<Context> ctx;
  ASSERT_OK(Context::InitSingle("ctx", "", &ctx));
  unsetenv("SLUICE_DATA_ROOTS");
  EXPECT_EQ(States(ctx.get()), "1:committed 2:committed 3:reclaimed");
  ASSERT_OK(ctx->Fini());
}

}  // namespace
}  // namespace sluice
