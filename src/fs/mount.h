// Mounts: file systems opened for the C API's handles (sluice_mount) and
// for the stream API's process-wide mount (sluice::fstream::initialize).
// Every mount goes through OpenMount, and every mount still open when the
// program exits is closed then.
#ifndef SLUICE_FS_MOUNT_H_
#define SLUICE_FS_MOUNT_H_

#include <memory>
#include <string>

#include "sluice/fs.h"

namespace sluice {
namespace fs {

// Opens the file system in `root` as `writer` (or FileSystem::kReader).
// The one place that decides the options a mount uses. The mount is closed
// at exit unless CloseMount closed it first.
Status OpenMount(const FsOptions& options, const std::string& root,
                 int writer, std::shared_ptr<FileSystem>* fs);
// Closes a mount of OpenMount; OK if the exit handler already closed it.
Status CloseMount(const std::shared_ptr<FileSystem>& fs);

// The stream API's process-wide mount: one at a time.
Status Mount(const FsOptions& options, const std::string& root, int writer);
Status Unmount();
// The process-wide mount, or null. Stays valid until Unmount; callers hold
// the returned reference while they use it.
std::shared_ptr<FileSystem> Mounted();

// `hook` runs at exit, before the mounts still open are closed (the C API
// closes its open files there).
void SetBeforeExit(void (*hook)());

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_MOUNT_H_
