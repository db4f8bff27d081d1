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
#include "fs/peers.h"
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
// For a writer's own files, whose extents change as it writes. With
// `covered`, the holes are left as they are in buf, and the ranges the
// store supplied are appended to *covered, in order.
Status ReadRange(FsStore* store, uint64_t ino, const std::string& what,
                 uint64_t offset, size_t n, char* buf, Cursor* cursor,
                 std::vector<std::pair<uint64_t, uint64_t>>* covered = nullptr);

// Checks every extent and index entry of a file, and the file checksum.
// Incomplete when the writer did not close the file after its last change
// (no checksum, or one set by a sync: see kUnclosed).
Status VerifyFile(FsStore* store, const Inode& inode, const std::string& path);

// root/writer.<8 digits>
std::string WriterStorePath(const std::string& root, int writer);

// The open flags every FileSystem refuses before looking `path` up:
// kDirectory with kCreate (InvalidArgument, as Linux's open(2)).
Status CheckOpenFlags(const std::string& path, int flags);

// A read-only File over the parts several writers hold of one file, merged
// as the reader file system merges them (a byte from two writers is
// Corruption). A writer reads the other writers' parts through one.
class PartsFile : public File {
 public:
  struct Covered {
    uint64_t begin, end;
    int writer;
  };
  // Reads [offset, offset + n) as PRead does, clipped to the parts' size
  // (*got), and appends to *covered the ranges the parts supplied, in
  // order (the rest of the bytes read are holes).
  virtual Status ReadCovered(char* buf, size_t n, uint64_t offset,
                             size_t* got, std::vector<Covered>* covered) = 0;
  virtual uint64_t size() const = 0;
  virtual const std::vector<Inode>& inodes() const = 0;
};
std::unique_ptr<PartsFile> NewPartsFile(const std::string& path,
                                        std::vector<PeerPart> parts);

// The merged attributes of a file's records in several stores: the
// largest size and times, the first record's mode, complete when each is,
// the checksum combined from theirs (MergedChecksum in format.h).
FileInfo MergeInfo(const std::vector<Inode>& parts);

Status OpenReaderFs(const FsOptions& options, const std::string& root,
                    std::unique_ptr<FileSystem>* out);

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_READER_H_
