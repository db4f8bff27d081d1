#include "fs/mount.h"

#include <mutex>

namespace sluice {
namespace fs {
namespace {
std::mutex mu;
std::shared_ptr<FileSystem> mounted;  // GUARDED_BY(mu)
}  // namespace

Status Mount(const FsOptions& options, const std::string& root, int writer) {
  std::lock_guard<std::mutex> lock(mu);
  if (mounted) {
    return Status::InvalidArgument("a Sluice file system is already mounted "
                                   "in this process (unmount it first)");
  }
  std::unique_ptr<FileSystem> fs;
  Status s = FileSystem::Open(options, root, writer, &fs);
  if (s.ok()) mounted = std::move(fs);
  return s;
}

Status Unmount() {
  std::shared_ptr<FileSystem> fs;
  {
    std::lock_guard<std::mutex> lock(mu);
    fs.swap(mounted);
  }
  if (!fs) return Status::InvalidArgument("no Sluice file system is mounted");
  return fs->Close();
}

std::shared_ptr<FileSystem> Mounted() {
  std::lock_guard<std::mutex> lock(mu);
  return mounted;
}

}  // namespace fs
}  // namespace sluice
