#include "fs/mount.h"

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace sluice {
namespace fs {
namespace {
std::mutex mu;
std::vector<std::shared_ptr<FileSystem>> open_mounts;  // GUARDED_BY(mu)
std::shared_ptr<FileSystem> process_mount;             // GUARDED_BY(mu)
std::atomic<void (*)()> before_exit{nullptr};

// A program may return from main with file systems still mounted. The
// storage engine's statics (made at its first open, some in a module
// loaded then) are destroyed by exit() in the reverse order of their
// making, and the statics here, older than them, would be destroyed after
// them and close the stores on freed memory. This handler is registered
// after each mount, so it runs before the statics of any engine that
// mount loaded, and closes the open files and the stores while they live.
void AtExit() {
  if (void (*hook)() = before_exit.load()) hook();
  std::vector<std::shared_ptr<FileSystem>> mounts;
  {
    std::lock_guard<std::mutex> lock(mu);
    mounts.swap(open_mounts);
    process_mount.reset();
  }
  for (const auto& fs : mounts) {
    Status s = fs->Close();
    if (!s.ok()) {
      fprintf(stderr, "sluice: closing a file system at exit: %s\n",
              s.ToString().c_str());
    }
  }
}
}  // namespace

Status OpenMount(const FsOptions& options, const std::string& root,
                 int writer, std::shared_ptr<FileSystem>* fs) {
  std::unique_ptr<FileSystem> opened;
  Status s = FileSystem::Open(options, root, writer, &opened);
  if (!s.ok()) return s;
  *fs = std::move(opened);
  {
    std::lock_guard<std::mutex> lock(mu);
    open_mounts.push_back(*fs);
  }
  atexit(AtExit);  // after the open: see AtExit
  return s;
}

Status CloseMount(const std::shared_ptr<FileSystem>& fs) {
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = std::find(open_mounts.begin(), open_mounts.end(), fs);
    if (it == open_mounts.end()) return Status::OK();  // closed at exit
    open_mounts.erase(it);
  }
  return fs->Close();
}

Status Mount(const FsOptions& options, const std::string& root, int writer) {
  const Status busy = Status::InvalidArgument(
      "a Sluice file system is already initialized for the streams of this "
      "process (clean it up first)");
  {
    std::lock_guard<std::mutex> lock(mu);
    if (process_mount) return busy;
  }
  std::shared_ptr<FileSystem> fs;
  Status s = OpenMount(options, root, writer, &fs);
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!process_mount) {
      process_mount = std::move(fs);
      return s;
    }
  }
  CloseMount(fs);  // another thread initialized meanwhile
  return busy;
}

Status Unmount() {
  std::shared_ptr<FileSystem> fs;
  {
    std::lock_guard<std::mutex> lock(mu);
    fs.swap(process_mount);
  }
  if (!fs) {
    return Status::InvalidArgument(
        "no Sluice file system is initialized for the streams of this "
        "process");
  }
  return CloseMount(fs);
}

std::shared_ptr<FileSystem> Mounted() {
  std::lock_guard<std::mutex> lock(mu);
  return process_mount;
}

void SetBeforeExit(void (*hook)()) { before_exit.store(hook); }

}  // namespace fs
}  // namespace sluice
