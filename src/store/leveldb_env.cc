#include "store/leveldb_env.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/env.h"

namespace sluice {
namespace {

// The Env every call goes through (inside classes derived from the
// backend's own Env types, a bare `Env` names theirs).
sluice::Env* Sys() { return sluice::Env::Default(); }

using leveldb::Slice;

leveldb::Status Error(const std::string& what, const std::string& path,
                      int err) {
  if (err == ENOENT)
    return leveldb::Status::NotFound(what + " " + path, strerror(err));
  return leveldb::Status::IOError(what + " " + path, strerror(err));
}

leveldb::Status ReadAt(int fd, const std::string& path, uint64_t offset,
                       size_t n, Slice* result, char* scratch) {
  size_t got = 0;
  if (int err =
          Sys()->ReadFull(fd, scratch, n, static_cast<off_t>(offset), &got)) {
    return Error("cannot read", path, err);
  }
  *result = Slice(scratch, got);
  return leveldb::Status::OK();
}

class EnvSequentialFile : public leveldb::SequentialFile {
 public:
  EnvSequentialFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~EnvSequentialFile() override { Sys()->Close(fd_); }
  leveldb::Status Read(size_t n, Slice* result, char* scratch) override {
    leveldb::Status s = ReadAt(fd_, path_, pos_, n, result, scratch);
    if (s.ok()) pos_ += result->size();
    return s;
  }
  leveldb::Status Skip(uint64_t n) override {
    pos_ += n;
    return leveldb::Status::OK();
  }

 private:
  const std::string path_;
  const int fd_;
  uint64_t pos_ = 0;
};

class EnvRandomAccessFile : public leveldb::RandomAccessFile {
 public:
  EnvRandomAccessFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~EnvRandomAccessFile() override { Sys()->Close(fd_); }
  leveldb::Status Read(uint64_t offset, size_t n, Slice* result,
                       char* scratch) const override {
    return ReadAt(fd_, path_, offset, n, result, scratch);
  }

 private:
  const std::string path_;
  const int fd_;
};

// Unbuffered: every Append is a write. A MANIFEST's Sync also syncs its
// directory, as LevelDB's own Env does, so a new MANIFEST that CURRENT
// names survives a power loss.
class EnvWritableFile : public leveldb::WritableFile {
 public:
  EnvWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {
    const size_t slash = path_.rfind('/');
    const std::string base =
        slash == std::string::npos ? path_ : path_.substr(slash + 1);
    manifest_ = base.rfind("MANIFEST", 0) == 0;
    dir_ = slash == std::string::npos ? "." : path_.substr(0, slash);
  }
  ~EnvWritableFile() override {
    if (fd_ >= 0) Sys()->Close(fd_);
  }
  leveldb::Status Append(const Slice& data) override {
    if (int err = Sys()->WriteFull(fd_, data.data(), data.size(),
                                   static_cast<off_t>(size_))) {
      return Error("cannot write", path_, err);
    }
    size_ += data.size();
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override {
    if (fd_ < 0) return leveldb::Status::OK();
    const int rc = Sys()->Close(fd_);
    fd_ = -1;
    return rc == 0 ? leveldb::Status::OK()
                   : Error("cannot close", path_, errno);
  }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override {
    if (manifest_) {
      const int dfd =
          Sys()->Open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
      if (dfd < 0) return Error("cannot open directory", dir_, errno);
      const int rc = Sys()->Fsync(dfd);
      const int err = errno;
      Sys()->Close(dfd);
      if (rc != 0) return Error("cannot sync directory", dir_, err);
    }
    if (Sys()->Fdatasync(fd_) != 0) {
      return Error("cannot sync", path_, errno);
    }
    return leveldb::Status::OK();
  }

 private:
  const std::string path_;
  int fd_;
  uint64_t size_;
  bool manifest_ = false;
  std::string dir_;
};

class EnvOverEnv : public leveldb::EnvWrapper {
 public:
  EnvOverEnv() : leveldb::EnvWrapper(leveldb::Env::Default()) {}

  leveldb::Status NewSequentialFile(const std::string& f,
                                    leveldb::SequentialFile** out) override {
    int fd = Sys()->Open(f.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open", f, errno);
    *out = new EnvSequentialFile(f, fd);
    return leveldb::Status::OK();
  }
  leveldb::Status NewRandomAccessFile(
      const std::string& f, leveldb::RandomAccessFile** out) override {
    int fd = Sys()->Open(f.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open", f, errno);
    *out = new EnvRandomAccessFile(f, fd);
    return leveldb::Status::OK();
  }
  leveldb::Status NewWritableFile(const std::string& f,
                                  leveldb::WritableFile** out) override {
    int fd =
        Sys()->Open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Error("cannot create", f, errno);
    *out = new EnvWritableFile(f, fd, 0);
    return leveldb::Status::OK();
  }
  leveldb::Status NewAppendableFile(const std::string& f,
                                    leveldb::WritableFile** out) override {
    int fd = Sys()->Open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Error("cannot open", f, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const int err = errno;
      Sys()->Close(fd);
      return Error("cannot stat", f, err);
    }
    *out = new EnvWritableFile(f, fd, static_cast<uint64_t>(st.st_size));
    return leveldb::Status::OK();
  }
  leveldb::Status RemoveFile(const std::string& f) override {
    if (Sys()->Unlink(f.c_str()) != 0) {
      return Error("cannot remove", f, errno);
    }
    return leveldb::Status::OK();
  }
  leveldb::Status DeleteFile(const std::string& f) override {
    return RemoveFile(f);
  }
  leveldb::Status CreateDir(const std::string& d) override {
    if (Sys()->Mkdir(d.c_str(), 0755) != 0) {
      return Error("cannot create directory", d, errno);
    }
    return leveldb::Status::OK();
  }
  leveldb::Status RemoveDir(const std::string& d) override {
    if (Sys()->Rmdir(d.c_str()) != 0) {
      return Error("cannot remove directory", d, errno);
    }
    return leveldb::Status::OK();
  }
  leveldb::Status DeleteDir(const std::string& d) override {
    return RemoveDir(d);
  }
  leveldb::Status RenameFile(const std::string& from,
                             const std::string& to) override {
    if (Sys()->Rename(from.c_str(), to.c_str()) != 0) {
      return Error("cannot rename to " + to + ":", from, errno);
    }
    return leveldb::Status::OK();
  }
};

}  // namespace

leveldb::Env* LevelDBEnvOverEnv() {
  if (Env::DefaultIsPosix()) return leveldb::Env::Default();
  static leveldb::Env* env = new EnvOverEnv;
  return env;
}

}  // namespace sluice
