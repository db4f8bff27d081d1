#include "fs/mount.h"

#include <stdio.h>
#include <stdlib.h>

#include <atomic>
#include <mutex>

namespace sluice {
namespace fs {
namespace {
std::mutex mu;
std::shared_ptr<FileSystem> mounted;  // GUARDED_BY(mu)
std::atomic<void (*)()> before_exit{nullptr};

// A program may return from main with the file system still mounted. The
// storage engine's statics (made at its first open, some in a module
// loaded then) are destroyed by exit() in the reverse order of their
// making, and `mounted`'s destructor, older than them, would run after
// them and close the store on freed memory. This handler is registered
// after each mount, so it runs before the statics of any engine that
// mount loaded, and closes the open files and the store while they live.
void AtExit() {
  if (void (*hook)() = before_exit.load()) hook();
  std::shared_ptr<FileSystem> fs;
  {
    std::lock_guard<std::mutex> lock(mu);
    fs.swap(mounted);
  }
  if (!fs) return;
  Status s = fs->Close();
  if (!s.ok()) {
    fprintf(stderr, "sluice: closing the file system at exit: %s\n",
            s.ToString().c_str());
  }
}
}  // namespace

Status Mount(const FsOptions& options, const std::string& root, int writer) {
  std::lock_guard<std::mutex> lock(mu);
  if (mounted) {
    return Status::InvalidArgument("a Sluice file system is already mounted "
                                   "in this process (unmount it first)");
  }
  std::unique_ptr<FileSystem> fs;
  Status s = FileSystem::Open(options, root, writer, &fs);
  if (s.ok()) {
    mounted = std::move(fs);
    atexit(AtExit);  // after the open: see AtExit
  }
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

void SetBeforeExit(void (*hook)()) { before_exit.store(hook); }

}  // namespace fs
}  // namespace sluice
