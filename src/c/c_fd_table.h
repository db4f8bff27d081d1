// The descriptors of the C file API (sluice_open): one table for every
// mount of the process, so that a descriptor names its mount and no other.
#ifndef SLUICE_C_C_FD_TABLE_H_
#define SLUICE_C_C_FD_TABLE_H_

#include <memory>
#include <shared_mutex>
#include <vector>

#include "sluice/fs.h"

namespace sluice {
namespace capi {

// One open descriptor. Calls on it hold `mu` shared; closing it holds it
// exclusively, so a close waits for the calls in flight, and calls after
// it find no file.
struct Descriptor {
  std::shared_mutex mu;
  std::unique_ptr<File> file;  // GUARDED_BY(mu); null once closed
  std::shared_ptr<FileSystem> fs;  // its mount; kept alive while open
  int flags = 0;
};

// Enters `d` and returns its number: the one after the last given out,
// skipping those still open. Numbers go round only after INT_MAX, so a
// closed descriptor's number is not given out again for about 2^31 opens:
// a stale one fails with EBADF instead of reaching another file, of this
// mount or of another.
int AddDescriptor(std::shared_ptr<Descriptor> d);
// The open descriptor `fd`, or null.
std::shared_ptr<Descriptor> FindDescriptor(int fd);
// Takes `fd` out of the table (null if it is not there).
std::shared_ptr<Descriptor> RemoveDescriptor(int fd);
// Takes out every descriptor of mount `fs` (null: of every mount).
std::vector<std::shared_ptr<Descriptor>> RemoveDescriptors(
    const FileSystem* fs);
// Closes d's file (once), after the calls in flight on it.
Status CloseDescriptor(Descriptor* d);

}  // namespace capi
}  // namespace sluice

#endif  // SLUICE_C_C_FD_TABLE_H_
