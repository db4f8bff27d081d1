// Bad input to the file layer: each call fails with its own code, naming
// what is wrong, and changes nothing. Every case runs on both backends.
#include "sluice/fs.h"

#include <fcntl.h>

#include <algorithm>

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

// A name of more than 255 bytes (NAME_MAX), or a path of 4096 bytes
// (PATH_MAX, its terminating zero included) or more, could not be exported
// to a real file system: every call that makes a name refuses it with
// NameTooLong and makes nothing.
TEST_P(FsInputTest, OverlongNamesAndPathsAreNotCreated) {
  MakeFile("/f", "data");
  ASSERT_OK(fs_->Mkdir("/d", 0755));
  auto refused = [&](const std::string& what, const Status& s) {
    EXPECT_EQ(s.code(), Code::kNameTooLong) << what << ": " << s.ToString();
  };
  auto creates = [&](const std::string& path) {
    std::unique_ptr<File> f;
    refused("create " + path.substr(0, 20),
            fs_->OpenFile(path, kWrite | kCreate, 0644, &f));
    refused("create excl " + path.substr(0, 20),
            fs_->OpenFile(path, kReadWrite | kCreate | kExclusive, 0644, &f));
    refused("mkdir " + path.substr(0, 20), fs_->Mkdir(path, 0755));
    refused("rename a file to " + path.substr(0, 20), fs_->Rename("/f", path));
    refused("rename a directory to " + path.substr(0, 20),
            fs_->Rename("/d", path));
  };
  const std::string n255(255, 'n'), n256(256, 'm');
  creates("/" + n256);
  creates("/d/" + n256);
  creates("/" + n256 + "/x");  // under a directory that could not exist
  Status s = fs_->Mkdir("/" + n256, 0755);
  EXPECT_NE(s.message().find("255"), std::string::npos) << s.ToString();
  // NAME_MAX itself is a name.
  ASSERT_OK(fs_->Mkdir("/d/" + n255, 0755));
  std::unique_ptr<File> f;
  ASSERT_OK(fs_->OpenFile("/" + n255, kWrite | kCreate, 0644, &f));
  ASSERT_OK(f->Close());

  // Fifteen levels of 255-byte names: 3840 bytes. A last name of 254 bytes
  // makes a path of 4095, one of 255 bytes a path of 4096.
  const std::string l255(255, 'l');
  std::string deep;
  for (int i = 0; i < 15; ++i) {
    deep += "/" + l255;
    ASSERT_OK(fs_->Mkdir(deep, 0755));
  }
  const std::string longest = deep + "/" + std::string(254, 'p');
  const std::string too_long = deep + "/" + std::string(255, 'q');
  ASSERT_EQ(longest.size(), 4095u);
  creates(too_long);
  s = fs_->Mkdir(too_long, 0755);
  EXPECT_NE(s.message().find("4096"), std::string::npos) << s.ToString();
  ASSERT_OK(fs_->OpenFile(longest, kWrite | kCreate, 0644, &f));
  ASSERT_OK(f->Close());

  // Nothing was made, and what the refused renames named is where it was.
  std::vector<DirEntry> entries;
  ASSERT_OK(fs_->ReadDir("/", &entries));
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"d", "f", l255, n255}));
  entries.clear();
  ASSERT_OK(fs_->ReadDir("/d", &entries));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, n255);
  entries.clear();
  ASSERT_OK(fs_->ReadDir(deep, &entries));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, std::string(254, 'p'));
  EXPECT_EQ(ReadAll("/f"), "data");
}

INSTANTIATE_TEST_SUITE_P(Backends, FsInputTest,
                         ::testing::Values("rocksdb", "leveldb"));

}  // namespace
}  // namespace sluice
