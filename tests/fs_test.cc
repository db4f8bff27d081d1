// Files over the store: POSIX semantics for one writer, checksums, and the
// merged view of several writers. Every case runs on both backends (value-log
// layout) and on RocksDB with the lsm layout.
#include "sluice/fs.h"

#include "sluice/kv.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "fs_craft.h"
#include "test_util.h"

namespace sluice {
namespace {

using test::Pattern;
using test::TempDir;

class FsTest : public ::testing::TestWithParam<const char*> {
 protected:
  FsOptions Options() const {
    FsOptions o;
    EXPECT_OK(test::ApplyBackendParam(GetParam(), &o.store));
    o.extent_bytes = 64u << 10;  // small, so files span many extents
    return o;
  }
  void SetUp() override { ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_)); }
  void TearDown() override {
    if (fs_) EXPECT_OK(fs_->Close());
  }
  void Reopen(int writer = 0) {
    ASSERT_OK(fs_->Close());
    fs_.reset();
    ASSERT_OK(FileSystem::Open(Options(), dir_.path(), writer, &fs_));
  }
  std::unique_ptr<File> Open(const std::string& path, int flags) {
    std::unique_ptr<File> f;
    Status s = fs_->OpenFile(path, flags, 0640, &f);
    EXPECT_TRUE(s.ok()) << path << ": " << s.ToString();
    return f;
  }
  std::string ReadAll(const std::string& path) {
    std::unique_ptr<File> f = Open(path, kRead);
    if (!f) return "<no file>";
    FileInfo info;
    EXPECT_OK(f->Stat(&info));
    std::string out(info.size, '\0');
    size_t got = 0;
    EXPECT_OK(f->PRead(&out[0], out.size(), 0, &got));
    EXPECT_EQ(got, out.size());
    EXPECT_OK(f->Close());
    return out;
  }
  void Write(File* f, const std::string& data, uint64_t off) {
    ASSERT_OK(f->PWrite(data.data(), data.size(), off));
  }

  TempDir dir_;
  std::unique_ptr<FileSystem> fs_;
};

TEST_P(FsTest, WriteAnywhereOverlapsAndHoles) {
  auto f = Open("/a", kReadWrite | kCreate);
  std::string model(300000, '\0');
  auto put = [&](const std::string& d, uint64_t off) {
    Write(f.get(), d, off);
    if (model.size() < off + d.size()) model.resize(off + d.size(), '\0');
    model.replace(off, d.size(), d);
  };
  put(Pattern(1, 100000), 50000);   // a hole before
  put(Pattern(2, 1000), 70000);     // inside an earlier write: newest wins
  put(Pattern(3, 120000), 140000);  // straddles the end of the first
  put(Pattern(4, 10), 0);
  put(Pattern(5, 5), 299995);
  ASSERT_OK(f->Close());
  EXPECT_EQ(ReadAll("/a"), model);
  Reopen();
  EXPECT_EQ(ReadAll("/a"), model);
  ASSERT_OK(fs_->Verify("/a"));
  FileInfo info;
  ASSERT_OK(fs_->Stat("/a", &info));
  EXPECT_EQ(info.size, model.size());
  EXPECT_LT(info.allocated, model.size()) << "holes are not stored";
  EXPECT_TRUE(info.checksum_valid);
}

TEST_P(FsTest, SmallSequentialWritesBecomeLargeExtents) {
  auto f = Open("/seq", kWrite | kCreate);
  const std::string data = Pattern(7, 1 << 20);
  for (size_t off = 0; off < data.size(); off += 100) {
    ASSERT_OK(f->Write(data.data() + off, std::min<size_t>(100, data.size() - off)));
  }
  ASSERT_OK(f->Close());
  EXPECT_EQ(ReadAll("/seq"), data);
  ASSERT_OK(fs_->Verify("/seq"));
  // 10486 writes of 100 bytes reached the store as 16 extents of 64 KiB:
  // count the extent records in the writer's store.
  ASSERT_OK(fs_->Close());
  fs_.reset();
  StoreOptions ro;
  ro.read_only = true;
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(ro, dir_.path() + "/writer.00000000", &store));
  std::unique_ptr<Iterator> it = store->NewIterator();
  int extents = 0;
  size_t biggest = 0;
  for (it->Seek("E"); it->Valid() && it->key()[0] == 'E'; it->Next()) {
    ++extents;
    biggest = std::max(biggest, it->value().size());
  }
  ASSERT_OK(it->status());
  EXPECT_EQ(extents, 16);
  EXPECT_GT(biggest, 64u << 10);  // 64 KiB of data plus its header
  it.reset();
  ASSERT_OK(store->Close());
}

TEST_P(FsTest, ReadsSeeTheirOwnBufferedWrites) {
  auto f = Open("/rw", kReadWrite | kCreate);
  ASSERT_OK(f->Write("hello ", 6));
  ASSERT_OK(f->Write("world", 5));
  char buf[16] = {};
  size_t got = 0;
  ASSERT_OK(f->PRead(buf, sizeof buf, 0, &got));
  EXPECT_EQ(std::string(buf, got), "hello world");
  auto g = Open("/rw", kRead);  // another handle sees them too
  ASSERT_OK(g->PRead(buf, sizeof buf, 6, &got));
  EXPECT_EQ(std::string(buf, got), "world");
}

TEST_P(FsTest, AppendTruncateExclusive) {
  auto f = Open("/x", kWrite | kCreate);
  ASSERT_OK(f->Write("0123456789", 10));
  ASSERT_OK(f->Close());
  std::unique_ptr<File> g;
  EXPECT_EQ(fs_->OpenFile("/x", kWrite | kCreate | kExclusive, 0644, &g).code(),
            Code::kAlreadyExists);
  auto a = Open("/x", kWrite | kAppend);
  uint64_t pos;
  ASSERT_OK(a->Seek(0, SEEK_SET, &pos));
  ASSERT_OK(a->Write("AB", 2));  // O_APPEND: at the end whatever the offset
  ASSERT_OK(a->Close());
  EXPECT_EQ(ReadAll("/x"), "0123456789AB");
  ASSERT_OK(fs_->Truncate("/x", 4));  // shrink
  EXPECT_EQ(ReadAll("/x"), "0123");
  ASSERT_OK(fs_->Truncate("/x", 8));  // grow: zeros
  EXPECT_EQ(ReadAll("/x"), std::string("0123") + std::string(4, '\0'));
  auto t = Open("/x", kWrite | kTruncate);
  ASSERT_OK(t->Close());
  EXPECT_EQ(ReadAll("/x"), "");
  std::unique_ptr<File> missing;
  EXPECT_EQ(fs_->OpenFile("/nope", kRead, 0, &missing).code(), Code::kNotFound);
}

TEST_P(FsTest, TruncateInsideAnExtentKeepsItsHead) {
  auto f = Open("/t", kReadWrite | kCreate);
  const std::string data = Pattern(9, 200000);
  Write(f.get(), data, 0);
  ASSERT_OK(f->Truncate(100001));
  ASSERT_OK(f->Truncate(150000));
  ASSERT_OK(f->Close());
  std::string want = data.substr(0, 100001) + std::string(49999, '\0');
  EXPECT_EQ(ReadAll("/t"), want);
  ASSERT_OK(fs_->Verify("/t"));
}

TEST_P(FsTest, UnlinkKeepsDataForOpenHandles) {
  auto f = Open("/u", kReadWrite | kCreate);
  Write(f.get(), "still here", 0);
  ASSERT_OK(fs_->Unlink("/u"));
  FileInfo info;
  EXPECT_TRUE(fs_->Stat("/u", &info).IsNotFound());
  char buf[10];
  size_t got;
  ASSERT_OK(f->PRead(buf, 10, 0, &got));
  EXPECT_EQ(std::string(buf, got), "still here");
  ASSERT_OK(f->Close());
  auto again = Open("/u", kWrite | kCreate);  // a new, empty file
  ASSERT_OK(again->Close());
  EXPECT_EQ(ReadAll("/u"), "");
}

// The value-log blocks of writer 0's store, in bytes; -1 without a log.
int64_t LogBlocks(const std::string& root) {
  const std::string dir = root + "/writer.00000000/vlog";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int64_t n = 0;
  while (struct dirent* e = readdir(d)) {
    struct stat st;
    if (stat((dir + "/" + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      n += static_cast<int64_t>(st.st_blocks) * 512;
    }
  }
  closedir(d);
  return n;
}

// rm, truncate and overwrite give the space of what they drop back to the
// data root at the next sync (not the space of a file still open), and the
// rest reads back.
TEST_P(FsTest, RemovedTruncatedAndOverwrittenDataGiveSpaceBack) {
  if (LogBlocks(dir_.path()) < 0) GTEST_SKIP() << "layout without a value log";
  const std::string keep = Pattern(1, 3 << 20), big = Pattern(2, 8 << 20);
  for (const auto& [path, data] : {std::pair{"/keep", keep}, {"/big", big}}) {
    auto f = Open(path, kWrite | kCreate);
    Write(f.get(), data, 0);
    ASSERT_OK(f->Close());
  }
  auto held = Open("/held", kReadWrite | kCreate);
  Write(held.get(), Pattern(3, 2 << 20), 0);
  ASSERT_OK(held->Sync());
  ASSERT_OK(fs_->Sync());
  const int64_t full = LogBlocks(dir_.path());
  ASSERT_OK(fs_->Unlink("/big"));
  ASSERT_OK(fs_->Unlink("/held"));  // open: its data stays
  ASSERT_OK(fs_->Truncate("/keep", 2 << 20));
  ASSERT_OK(fs_->Sync());
  const int64_t freed = full - LogBlocks(dir_.path());
  EXPECT_GE(freed, (9 << 20) - 64 * 1024) << full;
  EXPECT_LE(freed, (9 << 20) + 64 * 1024) << full;
  char buf[16];
  size_t got = 0;
  ASSERT_OK(held->PRead(buf, sizeof buf, (2 << 20) - 16, &got));
  EXPECT_EQ(std::string(buf, got), Pattern(3, 2 << 20).substr((2 << 20) - 16));
  ASSERT_OK(held->Close());
  ASSERT_OK(fs_->Sync());
  EXPECT_GE(full - LogBlocks(dir_.path()), (11 << 20) - 64 * 1024);
  // An overwrite in place: the old extents go, the new ones come.
  const int64_t before = LogBlocks(dir_.path());
  auto f = Open("/keep", kReadWrite);
  Write(f.get(), Pattern(4, 1 << 20), 0);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Sync());
  EXPECT_LE(LogBlocks(dir_.path()), before + 64 * 1024);
  Reopen();
  EXPECT_EQ(ReadAll("/keep"), Pattern(4, 1 << 20) + keep.substr(1 << 20, 1 << 20));
  ASSERT_OK(fs_->Verify("/keep"));
}

TEST_P(FsTest, DirectoriesAndRename) {
  ASSERT_OK(fs_->Mkdir("/d", 0755));
  ASSERT_OK(fs_->Mkdir("/d/e", 0700));
  EXPECT_EQ(fs_->Mkdir("/d", 0755).code(), Code::kAlreadyExists);
  EXPECT_EQ(fs_->Mkdir("/no/such", 0755).code(), Code::kNotFound);
  auto f = Open("/d/e/file", kWrite | kCreate);
  Write(f.get(), "data", 0);
  ASSERT_OK(f->Close());
  EXPECT_EQ(fs_->Mkdir("/d/e/file/x", 0755).code(), Code::kNotADirectory);
  EXPECT_EQ(fs_->Rmdir("/d").code(), Code::kNotEmpty);
  EXPECT_EQ(fs_->Unlink("/d").code(), Code::kIsADirectory);
  std::vector<DirEntry> list;
  ASSERT_OK(fs_->ReadDir("/d", &list));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "e");
  EXPECT_TRUE(list[0].is_dir);
  // Rename a directory: its files move with it, data untouched.
  ASSERT_OK(fs_->Rename("/d/e", "/moved"));
  EXPECT_EQ(ReadAll("/moved/file"), "data");
  EXPECT_EQ(fs_->Rename("/moved", "/moved/inside").code(), Code::kInvalidArgument);
  // Rename over an existing file replaces it.
  auto g = Open("/other", kWrite | kCreate);
  Write(g.get(), "old", 0);
  ASSERT_OK(g->Close());
  ASSERT_OK(fs_->Rename("/moved/file", "/other"));
  EXPECT_EQ(ReadAll("/other"), "data");
  FileInfo info;
  EXPECT_TRUE(fs_->Stat("/moved/file", &info).IsNotFound());
  ASSERT_OK(fs_->Rmdir("/moved"));
  Reopen();
  EXPECT_EQ(ReadAll("/other"), "data");
  list.clear();
  ASSERT_OK(fs_->ReadDir("/", &list));
  ASSERT_EQ(list.size(), 2u);  // d, other
  EXPECT_EQ(fs_->Rmdir("/").code(), Code::kInvalidArgument);
  std::string norm;
  EXPECT_EQ(NormalizePath("/../etc", &norm).code(), Code::kInvalidArgument);
  ASSERT_OK(NormalizePath("a//b/./c/../d/", &norm));
  EXPECT_EQ(norm, "/a/b/d");
}

TEST_P(FsTest, StatHasModeTimesAndSize) {
  auto f = Open("/s", kWrite | kCreate);
  Write(f.get(), Pattern(3, 5000), 0);
  FileInfo open_info;
  ASSERT_OK(f->Stat(&open_info));
  EXPECT_EQ(open_info.size, 5000u);
  EXPECT_FALSE(open_info.checksum_valid);  // still being written
  ASSERT_OK(f->Close());
  FileInfo info;
  ASSERT_OK(fs_->Stat("/s", &info));
  EXPECT_EQ(info.size, 5000u);
  EXPECT_EQ(info.mode, 0640u);
  EXPECT_FALSE(info.is_dir);
  EXPECT_GT(info.mtime_ns, 0);
  EXPECT_TRUE(info.checksum_valid);
}

TEST_P(FsTest, SetAttrChangesModeAndTimesOfClosedAndOpenFiles) {
  auto f = Open("/m", kWrite | kCreate);
  Write(f.get(), Pattern(1, 3000), 0);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Mkdir("/d", 0755));
  SetAttrs a;
  a.set_mode = true;
  a.mode = 0600;
  a.set_mtime = true;
  a.mtime_ns = 1000000000123456789;
  ASSERT_OK(fs_->SetAttr("/m", a));
  a.mode = 0700;
  ASSERT_OK(fs_->SetAttr("/d", a));
  // Open, with buffered writes: the change survives the handle's close,
  // and the data is intact.
  auto g = Open("/m", kReadWrite);
  Write(g.get(), Pattern(2, 100), 3000);
  SetAttrs t;
  t.set_atime = true;
  t.atime_ns = 42;
  ASSERT_OK(fs_->SetAttr("/m", t));
  ASSERT_OK(g->Close());
  Reopen();
  FileInfo info;
  ASSERT_OK(fs_->Stat("/m", &info));
  EXPECT_EQ(info.mode, 0600u);
  EXPECT_EQ(info.atime_ns, 42);
  EXPECT_GT(info.mtime_ns, 1000000000123456789);  // the later write moved it
  EXPECT_EQ(info.size, 3100u);
  EXPECT_TRUE(info.checksum_valid);
  EXPECT_EQ(ReadAll("/m"), Pattern(1, 3000) + Pattern(2, 100));
  ASSERT_OK(fs_->Stat("/d", &info));
  EXPECT_EQ(info.mode, 0700u);
  EXPECT_EQ(info.mtime_ns, 1000000000123456789);
  EXPECT_TRUE(fs_->SetAttr("/nope", a).IsNotFound());
  // The merged view reads them, and refuses changes.
  ASSERT_OK(fs_->Close());
  fs_.reset();
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), FileSystem::kReader, &fs_));
  ASSERT_OK(fs_->Stat("/m", &info));
  EXPECT_EQ(info.mode, 0600u);
  EXPECT_FALSE(fs_->SetAttr("/m", a).ok());
}

TEST_P(FsTest, ThreadsWritingDifferentFiles) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<File> f;
      std::string path = "/t" + std::to_string(t);
      EXPECT_OK(fs_->OpenFile(path, kWrite | kCreate, 0644, &f));
      const std::string data = Pattern(t, 300000);
      for (size_t off = 0; off < data.size(); off += 7000) {
        EXPECT_OK(f->Write(data.data() + off, std::min<size_t>(7000, data.size() - off)));
      }
      EXPECT_OK(f->Close());
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ReadAll("/t" + std::to_string(t)), Pattern(t, 300000));
}

// Writers 0 and 1 write disjoint halves of one file; a reader merges them.
TEST_P(FsTest, WritersMergeAndOverlapIsAnError) {
  const std::string a = Pattern(11, 100000), b = Pattern(12, 100000);
  auto f = Open("/shared", kWrite | kCreate);
  Write(f.get(), a, 0);
  ASSERT_OK(f->Close());
  Reopen(1);
  auto g = Open("/shared", kWrite | kCreate);
  Write(g.get(), b, 150000);  // a hole between the writers' parts
  ASSERT_OK(g->Close());
  auto o = Open("/overlap", kWrite | kCreate);
  Write(o.get(), "one", 10);
  ASSERT_OK(o->Close());
  Reopen(0);
  auto o0 = Open("/overlap", kWrite | kCreate);
  Write(o0.get(), "zero", 8);  // bytes 10-11 written by both writers
  ASSERT_OK(o0->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), FileSystem::kReader, &fs_));
  EXPECT_TRUE(fs_->read_only());
  std::string want = a + std::string(50000, '\0') + b;
  EXPECT_EQ(ReadAll("/shared"), want);
  ASSERT_OK(fs_->Verify("/shared"));
  std::unique_ptr<File> r;
  ASSERT_OK(fs_->OpenFile("/overlap", kRead, 0, &r));
  char buf[16];
  size_t got;
  Status s = r->PRead(buf, sizeof buf, 0, &got);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("writers 0 and 1"), std::string::npos) << s.ToString();
  EXPECT_EQ(fs_->Verify("/overlap").code(), Code::kCorruption);
  // Non-overlapping bytes of the same file still read.
  ASSERT_OK(r->PRead(buf, 4, 0, &got));
  EXPECT_EQ(fs_->Mkdir("/x", 0755).code(), Code::kInvalidArgument);
  std::unique_ptr<File> w;
  EXPECT_EQ(fs_->OpenFile("/shared", kWrite, 0, &w).code(), Code::kInvalidArgument);
}

// Where `needle` is in one of the regular files under `dir` (the first
// found, in name order): its path and offset; false when in none.
bool FindBytes(const std::string& dir, const std::string& needle,
               std::string* path, size_t* at) {
  std::string out;
  if (test::RunCommand("find '" + dir + "' -type f | sort", &out) != 0) return false;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    const std::string p = out.substr(pos, nl - pos);
    pos = nl + 1;
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    const size_t i = bytes.find(needle);
    if (!p.empty() && i != std::string::npos) {
      *path = p;
      *at = i;
      return true;
    }
  }
  return false;
}

// Flips the low bit of the byte at `at` of `path`.
void FlipByte(const std::string& path, size_t at) {
  FILE* f = fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(fseek(f, static_cast<long>(at), SEEK_SET), 0);
  const int c = fgetc(f);
  ASSERT_NE(c, EOF);
  ASSERT_EQ(fseek(f, static_cast<long>(at), SEEK_SET), 0);
  fputc(c ^ 0x01, f);
  ASSERT_EQ(fclose(f), 0);
}

// The checksum Stat gives for a file several writers hold combines their
// parts' checksums. Parts that are alike (here: two writers that only
// extended the file, each part the same size and with no data) must not
// cancel out of it, or files of different contents get one checksum; and
// every view (the reader's, each writer's, which list the parts in other
// orders) must give the same one.
TEST_P(FsTest, MergedChecksumKeepsEveryWritersPart) {
  ASSERT_OK(fs_->Close());
  fs_.reset();
  const uint64_t n = 100000;
  const std::string x = Pattern(31, n), y = Pattern(32, n);
  struct Put {
    int writer;
    uint64_t offset;
    std::string data;
  };
  // A fresh root where each writer of `puts` writes its data into /f, then
  // each of `extenders` only extends its part of /f to `extend` bytes.
  // /f is the first file of every store, so its inode number is the same
  // in every root and only the parts differ.
  int roots = 0;
  auto make = [&](const std::vector<Put>& puts, const std::vector<int>& extenders,
                  uint64_t extend, std::string* root) {
    *root = dir_.Sub("root" + std::to_string(roots++));
    for (const Put& p : puts) {
      std::unique_ptr<FileSystem> fs;
      ASSERT_OK(FileSystem::Open(Options(), *root, p.writer, &fs));
      std::unique_ptr<File> f;
      ASSERT_OK(fs->OpenFile("/f", kWrite | kCreate, 0644, &f));
      ASSERT_OK(f->PWrite(p.data.data(), p.data.size(), p.offset));
      ASSERT_OK(f->Close());
      ASSERT_OK(fs->Close());
    }
    for (int w : extenders) {
      std::unique_ptr<FileSystem> fs;
      ASSERT_OK(FileSystem::Open(Options(), *root, w, &fs));
      std::unique_ptr<File> f;
      ASSERT_OK(fs->OpenFile("/f", kWrite | kCreate, 0644, &f));
      ASSERT_OK(f->Truncate(extend));
      ASSERT_OK(f->Close());
      ASSERT_OK(fs->Close());
    }
  };
  // The reader's checksum of /f; its content is `want`, and each view in
  // `writers` gives the same checksum.
  auto sum = [&](const std::string& root, const std::string& want,
                 const std::vector<int>& writers, uint64_t* checksum) {
    ASSERT_OK(FileSystem::Open(Options(), root, FileSystem::kReader, &fs_));
    FileInfo info;
    ASSERT_OK(fs_->Stat("/f", &info));
    EXPECT_TRUE(info.checksum_valid);
    EXPECT_TRUE(info.complete);
    EXPECT_EQ(info.size, want.size());
    EXPECT_TRUE(ReadAll("/f") == want);
    ASSERT_OK(fs_->Verify("/f"));
    *checksum = info.checksum;
    ASSERT_OK(fs_->Close());
    fs_.reset();
    for (int w : writers) {
      SCOPED_TRACE("writer " + std::to_string(w) + "'s view");
      ASSERT_OK(FileSystem::Open(Options(), root, w, &fs_));
      ASSERT_OK(fs_->Stat("/f", &info));
      EXPECT_EQ(info.checksum, *checksum);
      auto f = Open("/f", kRead);
      ASSERT_TRUE(f);
      ASSERT_OK(f->Stat(&info));
      EXPECT_EQ(info.checksum, *checksum);
      ASSERT_OK(f->Close());
      ASSERT_OK(fs_->Close());
      fs_.reset();
    }
  };
  const std::string zeros(n, '\0');
  struct Case {
    const char* what;
    std::vector<Put> puts;
    std::vector<int> extenders;
    uint64_t extend;
    std::string want;
    std::vector<int> views;
  };
  const std::vector<Case> cases = {
      {"x by writer 0", {{0, 0, x}}, {}, 0, x, {0}},
      {"x by writer 0, writers 1 and 2 extend it to 2n",
       {{0, 0, x}}, {1, 2}, 2 * n, x + zeros, {0, 1, 2}},
      {"x by writer 0, writers 1 and 2 extend it to 3n",
       {{0, 0, x}}, {1, 2}, 3 * n, x + zeros + zeros, {0, 1, 2}},
      {"x by writer 0, x again by writer 1 after it",
       {{0, 0, x}, {1, n, x}}, {}, 0, x + x, {0, 1}},
      {"x by writer 0, y by writer 1", {{0, 0, x}, {1, n, y}}, {}, 0, x + y, {0, 1}},
      {"y by writer 0, x by writer 1 (the blocks swapped)",
       {{0, 0, y}, {1, n, x}}, {}, 0, y + x, {0, 1}},
  };
  std::vector<uint64_t> sums;
  std::vector<std::string> rootv;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string root;
    make(c.puts, c.extenders, c.extend, &root);
    if (HasFatalFailure()) return;
    uint64_t s = 0;
    sum(root, c.want, c.views, &s);
    if (HasFatalFailure()) return;
    sums.push_back(s);
    rootv.push_back(root);
  }
  // Different contents, different checksums.
  for (size_t i = 0; i < sums.size(); ++i) {
    EXPECT_NE(sums[i], 0u) << cases[i].what;
    for (size_t j = 0; j < i; ++j) {
      EXPECT_NE(sums[i], sums[j]) << "\"" << cases[i].what << "\" and \""
                                  << cases[j].what << "\"";
    }
  }
  // The same parts held by the other writers: the checksum is the file's,
  // not who wrote which part.
  {
    std::string root;
    make({{1, 0, x}, {0, n, y}}, {}, 0, &root);
    if (HasFatalFailure()) return;
    uint64_t s = 0;
    sum(root, x + y, {0, 1}, &s);
    EXPECT_EQ(s, sums[4]);
  }
  // A part damaged in one writer's store: verify names that store.
  std::string where;
  size_t at = 0;
  ASSERT_TRUE(FindBytes(rootv[4] + "/writer.00000001", y.substr(50000, 64), &where, &at));
  FlipByte(where, at);
  ASSERT_OK(FileSystem::Open(Options(), rootv[4], FileSystem::kReader, &fs_));
  Status v = fs_->Verify("/f");
  EXPECT_EQ(v.code(), Code::kCorruption) << v.ToString();
  EXPECT_NE(v.message().find("writer.00000001"), std::string::npos) << v.ToString();
}

// An extent whose value in the value log cannot be read is reported as
// what went wrong there: a flipped byte fails the value's checksum, a log
// file cut short is truncated; either names the log file and the offset,
// through Verify and reads, in the reader's view and the writer's.
TEST_P(FsTest, DamagedValueLogIsReportedForWhatItIs) {
  if (LogBlocks(dir_.path()) < 0) GTEST_SKIP() << "layout without a value log";
  const std::string data = Pattern(41, 200000);  // extents at 0, 64 Ki, ...
  auto f = Open("/v", kWrite | kCreate);
  Write(f.get(), data, 0);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  std::string log;
  size_t at = 0;
  ASSERT_TRUE(FindBytes(dir_.path() + "/writer.00000000/vlog",
                        data.substr(70000, 64), &log, &at));
  // What Verify and a whole read say, in each view.
  auto check = [&](const char* want, const char* not_want) {
    for (int writer : {FileSystem::kReader, 0}) {
      SCOPED_TRACE(writer == 0 ? "writer" : "reader");
      ASSERT_OK(FileSystem::Open(Options(), dir_.path(), writer, &fs_));
      std::vector<Status> got;
      got.push_back(fs_->Verify("/v"));
      auto r = Open("/v", kRead);
      ASSERT_TRUE(r);
      std::string buf(data.size(), '\0');
      size_t n = 0;
      got.push_back(r->PRead(&buf[0], buf.size(), 0, &n));
      ASSERT_OK(r->Close());
      for (const Status& s : got) {
        EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
        EXPECT_NE(s.message().find(want), std::string::npos) << s.ToString();
        EXPECT_EQ(s.message().find(not_want), std::string::npos) << s.ToString();
        EXPECT_NE(s.message().find(log), std::string::npos) << s.ToString();
        EXPECT_NE(s.message().find("offset 65536"), std::string::npos)
            << s.ToString();
        EXPECT_NE(s.message().find("/v"), std::string::npos) << s.ToString();
      }
      ASSERT_OK(fs_->Close());
      fs_.reset();
    }
  };
  FlipByte(log, at);
  {
    SCOPED_TRACE("a flipped byte");
    check("fails its checksum", "truncated");
  }
  FlipByte(log, at);  // back as it was
  ASSERT_EQ(truncate(log.c_str(), static_cast<off_t>(at)), 0);
  {
    SCOPED_TRACE("the log cut inside the value");
    check("truncated", "checksum");
  }
}

TEST_P(FsTest, CorruptExtentIsNamedNeverReturned) {
  ASSERT_OK(fs_->Close());
  FsOptions small = Options();
  small.store.write_buffer_size = 64u << 10;
  ASSERT_OK(FileSystem::Open(small, dir_.path(), 0, &fs_));
  auto f = Open("/c", kWrite | kCreate);
  // A distinctive pattern to find in the store's files.
  std::string data;
  for (int i = 0; data.size() < 200000; ++i) data += "CORRUPT-ME-" + std::to_string(i) + ";";
  Write(f.get(), data, 0);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  // Flip one byte of the value in whichever table file holds it (a small
  // write buffer puts LevelDB's data in tables too, not only its log).
  std::string out;
  ASSERT_EQ(test::RunCommand(
                "python3 -c \"import glob,sys\n"
                "for p in glob.glob('" + dir_.path() + "/writer.*/*/*'):\n"
                "  b=bytearray(open(p,'rb').read()); i=b.find(b'CORRUPT-ME-5000;')\n"
                "  if i>=0:\n"
                "    b[i+3]^=1; open(p,'wb').write(b); print(p); sys.exit(0)\n"
                "sys.exit(1)\"",
                &out),
            0)
      << out;
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_));
  Status v = fs_->Verify("/c");
  EXPECT_TRUE(v.code() == Code::kCorruption) << v.ToString();
  EXPECT_NE(v.message().find("/c"), std::string::npos) << v.ToString();
  std::unique_ptr<File> r = Open("/c", kRead);
  std::string buf(data.size(), '\0');
  size_t got = 0;
  Status s = r->PRead(&buf[0], buf.size(), 0, &got);
  EXPECT_FALSE(s.ok()) << "a corrupt file must not read back";
  EXPECT_EQ(got, 0u);
  ASSERT_OK(r->Close());
  // LevelDB's background compaction meets the bad block too, so closing may
  // report the corruption as well; it must not report anything else.
  Status c = fs_->Close();
  EXPECT_TRUE(c.ok() || c.IsCorruption()) << c.ToString();
  fs_.reset();
}

TEST_P(FsTest, StorePathIsWhereAWriterStores) {
  // Writer 0 (SetUp) and writer 3 each have their store at StorePath.
  Reopen(3);
  auto f = Open("/w3", kWrite | kCreate);
  Write(f.get(), "three", 0);
  ASSERT_OK(f->Close());
  struct stat st;
  for (int w : {0, 3}) {
    const std::string p = FileSystem::StorePath(dir_.path(), w);
    EXPECT_EQ(p, dir_.path() + (w == 0 ? "/writer.00000000" : "/writer.00000003"));
    EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << p;
  }
  EXPECT_NE(stat(FileSystem::StorePath(dir_.path(), 1).c_str(), &st), 0);
}

// A data root that fills up under a file being written: the write that
// meets it fails with NoSpace, and the data it could not store is not
// dropped quietly: closing the file fails too. Files synced before read
// back whole (durability is at barriers: File::Sync, FileSystem::Sync).
TEST_P(FsTest, FullDataRootFailsTheWriteAndTheCloseKeepsSyncedFiles) {
  ASSERT_OK(fs_->Close());
  fs_.reset();
  const std::string root = dir_.Sub("small");
  test::SmallTmpfs tmpfs(root, "24m");
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  FsOptions o = Options();
  o.extent_bytes = 1u << 20;
  ASSERT_OK(FileSystem::Open(o, root, 0, &fs_));
  const std::string kept = Pattern(7, 3u << 20);
  {
    std::unique_ptr<File> f;
    ASSERT_OK(fs_->OpenFile("/kept", kWrite | kCreate, 0644, &f));
    ASSERT_OK(f->Write(kept.data(), kept.size()));
    ASSERT_OK(f->Sync());
    ASSERT_OK(f->Close());
  }
  std::unique_ptr<File> f;
  ASSERT_OK(fs_->OpenFile("/big", kWrite | kCreate, 0644, &f));
  const std::string chunk = Pattern(9, 96u << 10);
  Status s;
  for (int i = 0; i < 1024 && s.ok(); ++i) s = f->Write(chunk.data(), chunk.size());
  EXPECT_EQ(s.code(), Code::kNoSpace) << s.ToString();
  Status c = f->Close();
  EXPECT_FALSE(c.ok()) << "the unstored bytes must fail the close";
  fs_->Close();  // reports the error again
  fs_.reset();
  ASSERT_TRUE(tmpfs.Resize("96m"));
  ASSERT_OK(FileSystem::Open(o, root, FileSystem::kReader, &fs_));
  std::unique_ptr<File> r;
  ASSERT_OK(fs_->OpenFile("/kept", kRead, 0, &r));
  std::string got(kept.size(), '\0');
  size_t n = 0;
  ASSERT_OK(r->PRead(&got[0], got.size(), 0, &n));
  EXPECT_EQ(n, kept.size());
  EXPECT_TRUE(got == kept);
  ASSERT_OK(r->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
}

// Directory entries that no call makes, written straight into the store:
// names no path can hold, and entries pointing back at the directory or an
// enclosing one. Both views list the valid entries and report the others as
// Corruption naming the directory and each entry (escaped); a path through
// a cycle does not resolve; and no call creates such a name.
TEST_P(FsTest, ForgedDirectoryEntriesAreReportedNotListed) {
  ASSERT_OK(fs_->Mkdir("/d", 0755));
  ASSERT_OK(fs_->Mkdir("/d/sub", 0755));
  ASSERT_OK(Open("/d/ok", kWrite | kCreate)->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  const std::string long_name(256, 'x');
  {
    std::unique_ptr<Store> store;
    ASSERT_OK(Store::Open(Options().store, FileSystem::StorePath(dir_.path(), 0),
                          &store));
    for (const std::string& name : {std::string("."), std::string(".."),
                                    std::string(), std::string("a/b"),
                                    std::string("nul\0byte", 8), long_name}) {
      ASSERT_OK(test::CraftDirent(store.get(), "/d", name, "/d/ok"));
    }
    ASSERT_OK(test::CraftDirent(store.get(), "/d/sub", "up", "/d"));
    ASSERT_OK(test::CraftDirent(store.get(), "/d/sub", "self", "/d/sub"));
    ASSERT_OK(store->Close());
  }
  for (int writer : {0, FileSystem::kReader}) {
    SCOPED_TRACE(writer == 0 ? "writer" : "reader");
    ASSERT_OK(FileSystem::Open(Options(), dir_.path(), writer, &fs_));
    std::vector<DirEntry> entries;
    Status s = fs_->ReadDir("/d", &entries);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    for (const char* part : {"/d", "\".\"", "\"..\"", "\"\"", "\"a/b\"",
                             "\"nul\\x00byte\"", "(256 bytes)"}) {
      EXPECT_NE(s.message().find(part), std::string::npos)
          << part << " not in " << s.ToString();
    }
    EXPECT_EQ(s.message().find('\0'), std::string::npos);
    std::vector<std::string> names;
    for (const auto& e : entries) names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{"ok", "sub"}));
    entries.clear();
    s = fs_->ReadDir("/d/sub", &entries);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    for (const char* part : {"/d/sub", "\"up\"", "\"self\""}) {
      EXPECT_NE(s.message().find(part), std::string::npos)
          << part << " not in " << s.ToString();
    }
    EXPECT_TRUE(entries.empty());
    FileInfo info;
    for (const char* p : {"/d/sub/up", "/d/sub/self", "/d/sub/up/sub/up/ok"}) {
      s = fs_->Stat(p, &info);
      EXPECT_TRUE(s.IsCorruption()) << p << ": " << s.ToString();
    }
    ASSERT_OK(fs_->Stat("/d/ok", &info));
    ASSERT_OK(fs_->Close());
    fs_.reset();
  }
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_));
  std::unique_ptr<File> f;
  EXPECT_EQ(fs_->Mkdir("/" + long_name, 0755).code(), Code::kNameTooLong);
  EXPECT_EQ(fs_->OpenFile("/" + long_name, kWrite | kCreate, 0644, &f).code(),
            Code::kNameTooLong);
  EXPECT_EQ(fs_->OpenFile(std::string("/nul\0", 5), kWrite | kCreate, 0644, &f)
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(fs_->Rename("/d/ok", "/" + long_name).code(), Code::kNameTooLong);
  ASSERT_OK(fs_->Mkdir("/" + std::string(255, 'y'), 0755));  // the longest
}

// A file is complete once its writer has closed it after its last change.
// A sync makes the data and the file checksum durable, but a writer that
// synced and then died (or is still writing) has not finished the file:
// Verify says Incomplete and Stat says not complete, in the writer's view
// and in the merged one; the close completes it.
TEST_P(FsTest, SyncedButNeverClosedIsIncomplete) {
  auto f = Open("/open", kWrite | kCreate);
  Write(f.get(), Pattern(1, 5000), 0);
  ASSERT_OK(f->Sync());
  FileInfo info;
  ASSERT_OK(fs_->Stat("/open", &info));
  EXPECT_TRUE(info.checksum_valid);
  EXPECT_FALSE(info.complete);
  EXPECT_EQ(fs_->Verify("/open").code(), Code::kIncomplete);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Stat("/open", &info));
  EXPECT_TRUE(info.complete);
  ASSERT_OK(fs_->Verify("/open"));
  ASSERT_OK(fs_->Close());
  fs_.reset();
  // Another process: /synced written and synced, /unsynced written (the
  // sync's barrier stored its creation), then it died.
  const std::string options = test::BackendParamOptions(GetParam());
  std::string out;
  ASSERT_EQ(test::RunCommand(std::string(FS_HELPER) + " died " + dir_.path() +
                                 " 0 " + options,
                             &out),
            0)
      << out;
  for (int writer : {FileSystem::kReader, 0}) {
    SCOPED_TRACE(writer == 0 ? "writer" : "reader");
    ASSERT_OK(FileSystem::Open(Options(), dir_.path(), writer, &fs_));
    ASSERT_OK(fs_->Stat("/synced", &info));
    EXPECT_EQ(info.size, 10000u);
    EXPECT_TRUE(info.checksum_valid);
    EXPECT_FALSE(info.complete);
    Status v = fs_->Verify("/synced");
    EXPECT_EQ(v.code(), Code::kIncomplete) << v.ToString();
    ASSERT_OK(fs_->Stat("/unsynced", &info));
    EXPECT_FALSE(info.checksum_valid);
    EXPECT_FALSE(info.complete);
    EXPECT_EQ(fs_->Verify("/unsynced").code(), Code::kIncomplete);
    ASSERT_OK(fs_->Stat("/open", &info));
    EXPECT_TRUE(info.complete);
    ASSERT_OK(fs_->Close());
    fs_.reset();
  }
}

// A writer that dies in the middle of a write call, after the call has
// stored its first extents and a barrier (another file's sync) has made
// them durable, leaves a file that holds its bytes from before the write
// and a prefix of the written ones: a later sync and close of it leave it
// readable whole, and growing it reads zeros past its end.
TEST_P(FsTest, WriterDeadInAWriteLeavesNoBytesPastTheEnd) {
  auto f = Open("/f", kWrite | kCreate);
  Write(f.get(), std::string(100000, 'a'), 0);
  ASSERT_OK(f->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  const std::string options = test::BackendParamOptions(GetParam());
  std::string out;
  ASSERT_EQ(test::RunCommand(std::string(FS_HELPER) + " cut " + dir_.path() +
                                 " 0 " + options + ",extent_bytes=64k",
                             &out),
            0)
      << out;
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_));
  const std::string got = ReadAll("/f");
  ASSERT_GE(got.size(), 100000u);
  ASSERT_LE(got.size(), 200000u);
  EXPECT_TRUE(got == std::string(100000, 'a') +
                        std::string(got.size() - 100000, 'b'))
      << got.size() << " bytes";
  // An fsync of it (on a read-only descriptor) and its close set its
  // checksum: a reader reads it whole.
  auto r = Open("/f", kRead);
  ASSERT_OK(r->Sync());
  ASSERT_OK(r->Close());
  ASSERT_OK(fs_->Close());
  fs_.reset();
  auto read_whole = [&](std::string* data) {
    std::unique_ptr<FileSystem> reader;
    Status s = FileSystem::Open(Options(), dir_.path(), FileSystem::kReader, &reader);
    std::unique_ptr<File> file;
    if (s.ok()) s = reader->OpenFile("/f", kRead, 0, &file);
    char buf[16384];
    size_t n = 1;
    while (s.ok() && n > 0) {
      s = file->Read(buf, sizeof buf, &n);
      if (s.ok()) data->append(buf, n);
    }
    if (file) file->Close();
    if (reader) reader->Close();
    return s;
  };
  std::string whole;
  const Status read = read_whole(&whole);
  EXPECT_OK(read);
  if (read.ok()) EXPECT_TRUE(whole == got);
  // Made longer, it reads zeros past its old end, not the rest of an
  // extent the dead writer stored.
  ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_));
  ASSERT_OK(fs_->Truncate("/f", got.size() + 50000));
  const std::string grown = ReadAll("/f");
  ASSERT_EQ(grown.size(), got.size() + 50000);
  EXPECT_TRUE(grown.compare(0, got.size(), got) == 0);
  EXPECT_EQ(std::count(grown.begin() + got.size(), grown.end(), '\0'), 50000)
      << "zero bytes past the old end, " << got.size();
}

INSTANTIATE_TEST_SUITE_P(Backends, FsTest,
                         ::testing::Values("rocksdb", "leveldb", "rocksdb_lsm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace sluice
