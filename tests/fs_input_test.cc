// Bad input to the file layer: each call fails with its own code, naming
// what is wrong, and changes nothing. Every case runs on both backends.
#include "sluice/fs.h"

#include <fcntl.h>

#include "test_util.h"

namespace sluice {
namespace {

using test::TempDir;

class FsInputTest : public ::testing::TestWithParam<const char*> {
 protected:
  FsOptions Options() const {
    FsOptions o;
    EXPECT_OK(test::ApplyBackendParam(GetParam(), &o.store));
    return o;
  }
  void SetUp() override {
    ASSERT_OK(FileSystem::Open(Options(), dir_.path(), 0, &fs_));
  }
  void TearDown() override {
    if (fs_) EXPECT_OK(fs_->Close());
  }
  // A closed file holding `data`.
  void MakeFile(const std::string& path, const std::string& data) {
    std::unique_ptr<File> f;
    ASSERT_OK(fs_->OpenFile(path, kWrite | kCreate | kTruncate, 0644, &f));
    ASSERT_OK(f->Write(data.data(), data.size()));
    ASSERT_OK(f->Close());
  }
  std::string ReadAll(const std::string& path) {
    std::unique_ptr<File> f;
    Status s = fs_->OpenFile(path, kRead, 0, &f);
    if (!s.ok()) return "<" + s.ToString() + ">";
    FileInfo info;
    EXPECT_OK(f->Stat(&info));
    std::string out(info.size, '\0');
    size_t got = 0;
    EXPECT_OK(f->PRead(&out[0], out.size(), 0, &got));
    EXPECT_EQ(got, out.size());
    EXPECT_OK(f->Close());
    return out;
  }

  TempDir dir_;
  std::unique_ptr<FileSystem> fs_;
};

// A size of 2^63 or more is what a negative off_t becomes: InvalidArgument,
// and the file keeps its size and bytes.
TEST_P(FsInputTest, TruncateToANegativeSizeFailsAndChangesNothing) {
  MakeFile("/f", "12345");
  for (uint64_t bad : {~uint64_t{0}, uint64_t{1} << 63}) {
    Status s = fs_->Truncate("/f", bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad << ": " << s.ToString();
    EXPECT_NE(s.message().find("/f"), std::string::npos) << s.ToString();
    std::unique_ptr<File> f;
    ASSERT_OK(fs_->OpenFile("/f", kReadWrite, 0, &f));
    s = f->Truncate(bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad << ": " << s.ToString();
    FileInfo info;
    ASSERT_OK(f->Stat(&info));
    EXPECT_EQ(info.size, 5u);
    ASSERT_OK(f->Close());
    ASSERT_OK(fs_->Stat("/f", &info));
    EXPECT_EQ(info.size, 5u);
    EXPECT_TRUE(info.checksum_valid);
    EXPECT_EQ(ReadAll("/f"), "12345");
  }
  // The largest size an off_t holds is a size.
  const uint64_t largest = (uint64_t{1} << 63) - 1;
  ASSERT_OK(fs_->Truncate("/f", largest));
  FileInfo info;
  ASSERT_OK(fs_->Stat("/f", &info));
  EXPECT_EQ(info.size, largest);
}

// O_DIRECTORY with O_CREAT is EINVAL, as on Linux, and makes nothing;
// O_DIRECTORY names a directory: on a file it is NotADirectory (and an
// O_TRUNC with it truncates nothing), on a directory IsADirectory (a File
// is never a directory), on nothing NotFound. The same on the merged view.
TEST_P(FsInputTest, OpenDirectoryFlag) {
  MakeFile("/f", "12345");
  ASSERT_OK(fs_->Mkdir("/d", 0755));
  auto check = [&](FileSystem* fs, const std::string& path, int flags,
                   Code want) {
    std::unique_ptr<File> f;
    Status s = fs->OpenFile(path, flags, 0644, &f);
    EXPECT_EQ(s.code(), want) << path << " flags 0" << std::oct << flags
                              << ": " << s.ToString();
    EXPECT_FALSE(f) << path;
    if (!s.ok()) EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  };
  for (FileSystem* fs : {fs_.get(), static_cast<FileSystem*>(nullptr)}) {
    std::unique_ptr<FileSystem> reader;
    if (fs == nullptr) {  // the merged view, after the writer closed
      ASSERT_OK(fs_->Close());
      fs_.reset();
      ASSERT_OK(FileSystem::Open(Options(), dir_.path(), FileSystem::kReader,
                                 &reader));
      fs = reader.get();
    }
    for (int acc : {kRead, kWrite, kReadWrite}) {
      check(fs, "/new", acc | kDirectory | kCreate, Code::kInvalidArgument);
      check(fs, "/new", acc | kDirectory | kCreate | kExclusive,
            Code::kInvalidArgument);
      check(fs, "/f", acc | kDirectory | kCreate, Code::kInvalidArgument);
      check(fs, "/d", acc | kDirectory | kCreate, Code::kInvalidArgument);
    }
    check(fs, "/f", kRead | kDirectory, Code::kNotADirectory);
    check(fs, "/d", kRead | kDirectory, Code::kIsADirectory);
    check(fs, "/none", kRead | kDirectory, Code::kNotFound);
    if (!fs->read_only()) {
      check(fs, "/f", kReadWrite | kDirectory | kTruncate, Code::kNotADirectory);
      check(fs, "/f", kWrite | kDirectory | kAppend, Code::kNotADirectory);
    }
    FileInfo info;
    EXPECT_TRUE(fs->Stat("/new", &info).IsNotFound());
    ASSERT_OK(fs->Stat("/f", &info));
    EXPECT_FALSE(info.is_dir);
    EXPECT_EQ(info.size, 5u);
    if (reader) ASSERT_OK(reader->Close());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FsInputTest,
                         ::testing::Values("rocksdb", "leveldb"));

}  // namespace
}  // namespace sluice
