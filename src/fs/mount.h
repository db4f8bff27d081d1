// The process's mounted file system, shared by the POSIX-like C API
// (sluice_mount) and the stream API (sluice::fstream::initialize).
#ifndef SLUICE_FS_MOUNT_H_
#define SLUICE_FS_MOUNT_H_

#include <memory>
#include <string>

#include "sluice/fs.h"

namespace sluice {
namespace fs {

Status Mount(const FsOptions& options, const std::string& root, int writer);
Status Unmount();
// The mounted file system, or null. Stays valid until Unmount; callers
// hold the returned reference while they use it.
std::shared_ptr<FileSystem> Mounted();
// `hook` runs at exit, before a file system still mounted is closed (the
// C API closes its open files there).
void SetBeforeExit(void (*hook)());

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_MOUNT_H_
