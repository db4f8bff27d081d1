// Reading files: range reads over one store's extents (with a cursor that
// keeps the current, verified extent), whole-file verification, and the
// read-only file system that merges every writer's store.
#ifndef SLUICE_FS_READER_H_
#define SLUICE_FS_READER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fs/fs_store.h"
#include "sluice/fs.h"

namespace sluice {
namespace fs {

// Where a read left off in a store: the iterator and the extent it is on,
// already verified. Renewed when the store has been written since.
struct Cursor {
  std::unique_ptr<Iterator> it;
  uint64_t generation = ~0ull;
  bool on_extent = false;
  uint64_t ext_off = 0;
  std::string_view data;  // of the current extent, valid while `it` stays
  uint64_t sum = 0;       // its checksum (from its header, verified)
  // Called once for each extent the cursor decodes (offset, length, sum).
  std::function<void(uint64_t, uint64_t, uint64_t)> on_extent_entered;
};

// Copies bytes [offset, offset + n) of `ino` into buf; holes read as zeros.
// For a writer's own files, whose extents change as it writes.
Status ReadRange(FsStore* store, uint64_t ino, const std::string& what,
                 uint64_t offset, size_t n, char* buf, Cursor* cursor);

// Checks every extent and index entry of a file, and the file checksum.
// Incomplete when the writer did not close the file after its last change
// (no checksum, or one set by a sync: see kUnclosed).
Status VerifyFile(FsStore* store, const Inode& inode, const std::string& path);

// root/writer.<8 digits>
std::string WriterStorePath(const std::string& root, int writer);

// The open flags every FileSystem refuses before looking `path` up:
// kDirectory with kCreate (InvalidArgument, as Linux's open(2)).
Status CheckOpenFlags(const std::string& path, int flags);

Status OpenReaderFs(const FsOptions& options, const std::string& root,
                    std::unique_ptr<FileSystem>* out);

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_READER_H_
