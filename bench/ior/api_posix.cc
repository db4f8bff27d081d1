// POSIX: open/pwrite/pread/fsync/close, as IOR's POSIX backend.
// SLUICE-POSIX: the same calls on a file under SLUICE_MOUNT, in a process
// that runs under the LD_PRELOAD interposer (sluice-bench re-executes itself
// with libsluice_preload.so preloaded when SLUICE-POSIX is asked for; see
// sluice_bench.cc). Each rank writes its own store, as with SLUICE-STREAM.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "ior/api.h"
#include "sluice/fs.h"

namespace sluice {
namespace bench {
namespace {

class PosixApi : public Api {
 public:
  // `mount`: "" for plain POSIX; else the interposer's mount prefix, under
  // which every file goes (by its base name), and `root` its store root.
  PosixApi(bool direct, std::string mount, std::string root)
      : direct_(direct), mount_(std::move(mount)), root_(std::move(root)) {}
  std::string Note() const override {
    if (!mount_.empty()) {
      return "SLUICE-POSIX: the POSIX calls under libsluice_preload.so, files "
             "under " + mount_ + ", stores in " + root_ +
             ", one store per writer, merged on read";
    }
    return direct_ ? "POSIX with O_DIRECT" : "";
  }
  bool PerWriterStorage() const override { return !mount_.empty(); }
  Status Open(const OpenInfo& info) override {
    path_ = Path(info);
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
  void Remove(const OpenInfo& info) override {
    unlink(Path(info).c_str());
    if (mount_.empty()) return;
    // The value log keeps removed data; every rank drops its whole store
    // (released by the interposer once its last stored file closed). Only
    // once every rank's unlink is done: an unlink of a file several ranks
    // wrote changes each of their stores, and would make again a store its
    // rank had already removed.
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    RemovePath(sluice::FileSystem::StorePath(root_, rank));
  }

 private:
  std::string Path(const OpenInfo& info) const {
    if (mount_.empty()) return info.path;
    const size_t slash = info.path.rfind('/');
    return mount_ + "/" +
           (slash == std::string::npos ? info.path : info.path.substr(slash + 1));
  }

  const bool direct_;
  const std::string mount_, root_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Api> MakePosixApi(const Params& p) {
  return std::make_unique<PosixApi>(p.direct, "", "");
}

bool InterposerLoaded() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("libsluice_preload") != std::string::npos) return true;
  }
  return false;
}

std::unique_ptr<Api> MakeSluicePosixApi(const Params& p, std::string* why_not) {
  const char* mount = getenv("SLUICE_MOUNT");
  const char* root = getenv("SLUICE_ROOT");
  if (!InterposerLoaded()) {
    *why_not = "libsluice_preload.so is not loaded (not found next to "
               "sluice-bench; set SLUICE_PRELOAD_LIB to its path)";
    return nullptr;
  }
  if (!mount || !*mount || !root || !*root) {
    *why_not = "SLUICE_MOUNT and SLUICE_ROOT must both be set";
    return nullptr;
  }
  return std::make_unique<PosixApi>(p.direct, mount, root);
}

}  // namespace bench
}  // namespace sluice
