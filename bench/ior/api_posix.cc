// POSIX: open/pwrite/pread/fsync/close, as IOR's POSIX backend.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

class PosixApi : public Api {
 public:
  explicit PosixApi(bool direct) : direct_(direct) {}
  std::string Note() const override {
    return direct_ ? "POSIX with O_DIRECT" : "";
  }
  Status Open(const OpenInfo& info) override {
    path_ = info.path;
    int flags = info.access == Access::kWrite ? O_WRONLY | O_CREAT : O_RDONLY;
    if (direct_) flags |= O_DIRECT;
    fd_ = open(path_.c_str(), flags | O_CLOEXEC, 0644);
    if (fd_ < 0) return ErrnoStatus("open", path_, errno);
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t) override {
    while (len > 0) {
      ssize_t n = access == Access::kWrite ? pwrite(fd_, buf, len, offset)
                                           : pread(fd_, buf, len, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return ErrnoStatus(access == Access::kWrite ? "write" : "read", path_,
                           errno);
      }
      if (n == 0) {
        return Status::IOError("short read of " + path_ + " at offset " +
                               std::to_string(offset) + " (end of file)");
      }
      buf += n;
      len -= static_cast<uint64_t>(n);
      offset += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }
  Status Fsync() override {
    if (fsync(fd_) != 0) return ErrnoStatus("fsync", path_, errno);
    return Status::OK();
  }
  Status Close() override {
    int rc = close(fd_);
    fd_ = -1;
    if (rc != 0) return ErrnoStatus("close", path_, errno);
    return Status::OK();
  }
  void Remove(const OpenInfo& info) override { unlink(info.path.c_str()); }

 private:
  const bool direct_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Api> MakePosixApi(const Params& p) {
  return std::make_unique<PosixApi>(p.direct);
}

}  // namespace bench
}  // namespace sluice
