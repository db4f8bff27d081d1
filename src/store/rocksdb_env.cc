#include "store/rocksdb_env.h"

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

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

IOStatus Error(const std::string& what, const std::string& path, int err) {
  const std::string msg = what + " " + path;
  if (err == ENOSPC || err == EDQUOT)
    return IOStatus::NoSpace(msg, strerror(err));
  if (err == ENOENT) return IOStatus::PathNotFound(msg, strerror(err));
  return IOStatus::IOError(msg, strerror(err));
}

// Reads up to n bytes at offset, short only at the end of the file.
IOStatus ReadAt(int fd, const std::string& path, uint64_t offset, size_t n,
                Slice* result, char* scratch) {
  size_t got = 0;
  if (int err =
          Sys()->ReadFull(fd, scratch, n, static_cast<off_t>(offset), &got)) {
    return Error("cannot read", path, err);
  }
  *result = Slice(scratch, got);
  return IOStatus::OK();
}

class EnvSequentialFile : public rocksdb::FSSequentialFile {
 public:
  EnvSequentialFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~EnvSequentialFile() override { Sys()->Close(fd_); }
  IOStatus Read(size_t n, const IOOptions&, Slice* result, char* scratch,
                IODebugContext*) override {
    IOStatus s = ReadAt(fd_, path_, pos_, n, result, scratch);
    if (s.ok()) pos_ += result->size();
    return s;
  }
  IOStatus Skip(uint64_t n) override {
    pos_ += n;
    return IOStatus::OK();
  }

 private:
  const std::string path_;
  const int fd_;
  uint64_t pos_ = 0;
};

class EnvRandomAccessFile : public rocksdb::FSRandomAccessFile {
 public:
  EnvRandomAccessFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~EnvRandomAccessFile() override { Sys()->Close(fd_); }
  IOStatus Read(uint64_t offset, size_t n, const IOOptions&, Slice* result,
                char* scratch, IODebugContext*) const override {
    return ReadAt(fd_, path_, offset, n, result, scratch);
  }

 private:
  const std::string path_;
  const int fd_;
};

class EnvWritableFile : public rocksdb::FSWritableFile {
 public:
  EnvWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~EnvWritableFile() override {
    if (fd_ >= 0) Sys()->Close(fd_);
  }
  IOStatus Append(const Slice& data, const IOOptions& o,
                  IODebugContext* dbg) override {
    IOStatus s = PositionedAppend(data, size_, o, dbg);
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions&, IODebugContext*) override {
    if (int err = Sys()->WriteFull(fd_, data.data(), data.size(),
                                   static_cast<off_t>(offset))) {
      return Error("cannot write", path_, err);
    }
    if (offset + data.size() > size_) size_ = offset + data.size();
    return IOStatus::OK();
  }
  IOStatus Truncate(uint64_t size, const IOOptions&, IODebugContext*) override {
    if (Sys()->Ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      return Error("cannot truncate", path_, errno);
    }
    size_ = size;
    return IOStatus::OK();
  }
  IOStatus Close(const IOOptions&, IODebugContext*) override {
    if (fd_ < 0) return IOStatus::OK();
    const int rc = Sys()->Close(fd_);
    fd_ = -1;
    return rc == 0 ? IOStatus::OK() : Error("cannot close", path_, errno);
  }
  IOStatus Flush(const IOOptions&, IODebugContext*) override {
    return IOStatus::OK();  // nothing is buffered here
  }
  IOStatus Sync(const IOOptions&, IODebugContext*) override {
    if (Sys()->Fdatasync(fd_) != 0) {
      return Error("cannot sync", path_, errno);
    }
    return IOStatus::OK();
  }
  IOStatus Fsync(const IOOptions&, IODebugContext*) override {
    if (Sys()->Fsync(fd_) != 0) {
      return Error("cannot sync", path_, errno);
    }
    return IOStatus::OK();
  }
  bool IsSyncThreadSafe() const override { return true; }
  uint64_t GetFileSize(const IOOptions&, IODebugContext*) override {
    return size_;
  }

 private:
  const std::string path_;
  int fd_;
  uint64_t size_;
};

class EnvDirectory : public rocksdb::FSDirectory {
 public:
  EnvDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~EnvDirectory() override {
    if (fd_ >= 0) Sys()->Close(fd_);
  }
  IOStatus Fsync(const IOOptions&, IODebugContext*) override {
    if (Sys()->Fsync(fd_) != 0) {
      return Error("cannot sync directory", path_, errno);
    }
    return IOStatus::OK();
  }
  IOStatus Close(const IOOptions&, IODebugContext*) override {
    const int rc = fd_ >= 0 ? Sys()->Close(fd_) : 0;
    fd_ = -1;
    return rc == 0 ? IOStatus::OK() : Error("cannot close", path_, errno);
  }

 private:
  const std::string path_;
  int fd_;
};

class EnvFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit EnvFileSystem(const std::shared_ptr<rocksdb::FileSystem>& base)
      : rocksdb::FileSystemWrapper(base) {}
  static const char* kClassName() { return "SluiceEnvFileSystem"; }
  const char* Name() const override { return kClassName(); }

  IOStatus NewSequentialFile(const std::string& f, const rocksdb::FileOptions&,
                             std::unique_ptr<rocksdb::FSSequentialFile>* out,
                             IODebugContext*) override {
    int fd = Sys()->Open(f.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open", f, errno);
    out->reset(new EnvSequentialFile(f, fd));
    return IOStatus::OK();
  }
  IOStatus NewRandomAccessFile(
      const std::string& f, const rocksdb::FileOptions&,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* out,
      IODebugContext*) override {
    int fd = Sys()->Open(f.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open", f, errno);
    out->reset(new EnvRandomAccessFile(f, fd));
    return IOStatus::OK();
  }
  IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions&,
                           std::unique_ptr<rocksdb::FSWritableFile>* out,
                           IODebugContext*) override {
    int fd =
        Sys()->Open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Error("cannot create", f, errno);
    out->reset(new EnvWritableFile(f, fd, 0));
    return IOStatus::OK();
  }
  IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions&,
                              std::unique_ptr<rocksdb::FSWritableFile>* out,
                              IODebugContext*) override {
    int fd = Sys()->Open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Error("cannot open", f, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const int err = errno;
      Sys()->Close(fd);
      return Error("cannot stat", f, err);
    }
    out->reset(new EnvWritableFile(f, fd, static_cast<uint64_t>(st.st_size)));
    return IOStatus::OK();
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string&,
                             const rocksdb::FileOptions&,
                             std::unique_ptr<rocksdb::FSWritableFile>*,
                             IODebugContext*) override {
    return IOStatus::NotSupported("recycled logs over a test Env", f);
  }
  IOStatus NewRandomRWFile(const std::string& f, const rocksdb::FileOptions&,
                           std::unique_ptr<rocksdb::FSRandomRWFile>*,
                           IODebugContext*) override {
    return IOStatus::NotSupported("random read-write files over a test Env", f);
  }
  IOStatus NewDirectory(const std::string& d, const IOOptions&,
                        std::unique_ptr<rocksdb::FSDirectory>* out,
                        IODebugContext*) override {
    int fd = Sys()->Open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open directory", d, errno);
    out->reset(new EnvDirectory(d, fd));
    return IOStatus::OK();
  }
  IOStatus DeleteFile(const std::string& f, const IOOptions&,
                      IODebugContext*) override {
    if (Sys()->Unlink(f.c_str()) != 0) {
      return Error("cannot remove", f, errno);
    }
    return IOStatus::OK();
  }
  IOStatus RenameFile(const std::string& from, const std::string& to,
                      const IOOptions&, IODebugContext*) override {
    if (Sys()->Rename(from.c_str(), to.c_str()) != 0) {
      return Error("cannot rename to " + to + ":", from, errno);
    }
    return IOStatus::OK();
  }
  IOStatus LinkFile(const std::string& from, const std::string&,
                    const IOOptions&, IODebugContext*) override {
    return IOStatus::NotSupported("links over a test Env", from);
  }
  IOStatus CreateDir(const std::string& d, const IOOptions&,
                     IODebugContext*) override {
    if (Sys()->Mkdir(d.c_str(), 0755) != 0) {
      return Error("cannot create directory", d, errno);
    }
    return IOStatus::OK();
  }
  IOStatus CreateDirIfMissing(const std::string& d, const IOOptions&,
                              IODebugContext*) override {
    if (Sys()->Mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error("cannot create directory", d, errno);
    }
    struct stat st;
    if (stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return IOStatus::IOError("cannot create directory " + d +
                               ": not a directory");
    }
    return IOStatus::OK();
  }
  IOStatus DeleteDir(const std::string& d, const IOOptions&,
                     IODebugContext*) override {
    if (Sys()->Rmdir(d.c_str()) != 0) {
      return Error("cannot remove directory", d, errno);
    }
    return IOStatus::OK();
  }
  IOStatus Truncate(const std::string& f, size_t size, const IOOptions&,
                    IODebugContext*) override {
    int fd = Sys()->Open(f.c_str(), O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0) return Error("cannot open", f, errno);
    const int rc = Sys()->Ftruncate(fd, static_cast<off_t>(size));
    const int err = errno;
    Sys()->Close(fd);
    return rc == 0 ? IOStatus::OK() : Error("cannot truncate", f, err);
  }
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> RocksDBFileSystemOverEnv(
    const std::shared_ptr<rocksdb::FileSystem>& base) {
  if (Env::DefaultIsPosix()) return base;
  return std::make_shared<EnvFileSystem>(base);
}

}  // namespace sluice
