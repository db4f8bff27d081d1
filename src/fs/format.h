// The file layer's records inside one writer's store. Format version 1.
//
// Keys (all integers big-endian, so keys sort numerically):
//   "S"                              superblock
//   'I' ino                          inode (file or directory)
//   'D' parent-ino name              directory entry -> child ino, type
//                                    (the name as ValidName says)
//   'X' ino offset                   extent index: length, data checksum
//   'E' ino offset                   extent: header + data
// The root directory is inode 1. Extents of one inode never overlap within
// a store: a write over existing extents trims or removes them in the same
// atomic batch. Reading a byte range is an ordered scan of 'E' keys.
//
// Every value carries a checksum:
//   superblock  magic "SLUICEFS", version, next free ino, XXH64
//   inode       version, type, mode, size, allocated bytes, times (ns),
//               flags, file checksum, XXH64 of the record
//   extent      length, XXH64 of the data seeded with (ino, offset), data
//   index       length, the extent's data checksum (the same XXH64)
// A file's checksum is XXH64 over its index entries in offset order
// (offset, length, data checksum), seeded with its size: computed at close
// or sync, so it covers the file as the writer left it; a file changed
// since (still open, or whose writer died) carries kChecksumStale instead.
// Each writer's inode has the checksum of its own part; the checksum of a
// file several writers hold is combined from those when read
// (MergedChecksum), and stored nowhere.
// A file changed since its writer last closed it also carries kUnclosed,
// which a sync keeps and only a close clears: a writer that synced and
// then died has not finished the file, though what it synced checks out.
// (Stores written before kUnclosed existed have no such files: there, a
// valid checksum is all there is to go by.)
#ifndef SLUICE_FS_FORMAT_H_
#define SLUICE_FS_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice {
namespace fs {

constexpr uint32_t kFsFormatVersion = 1;
constexpr uint64_t kRootIno = 1;

enum class FileType : uint8_t { kFile = 1, kDirectory = 2 };

constexpr uint32_t kChecksumStale = 1;  // inode flag
constexpr uint32_t kUnclosed = 2;       // inode flag

struct Inode {
  uint64_t ino = 0;
  FileType type = FileType::kFile;
  uint32_t mode = 0644;
  uint64_t size = 0;
  uint64_t allocated = 0;  // bytes held in extents
  int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;
  uint32_t flags = 0;
  uint64_t checksum = 0;   // file checksum, valid unless kChecksumStale
};

struct Super {
  uint64_t next_ino = kRootIno + 1;
};

// The longest name of a file or directory, in bytes (NAME_MAX).
constexpr size_t kMaxNameBytes = 255;
// True when `name` can be one component of a path, and so the name of a
// directory entry: not empty, "." or "..", no '/' or NUL, at most
// kMaxNameBytes. Every entry a call makes has one; a store holding another
// is damaged or forged, and its readers must not follow that entry.
bool ValidName(std::string_view name);

std::string SuperKey();
std::string InodeKey(uint64_t ino);
std::string DirentKey(uint64_t parent, std::string_view name);
std::string DirentPrefix(uint64_t parent);
std::string ExtentKey(uint64_t ino, uint64_t offset);
std::string IndexKey(uint64_t ino, uint64_t offset);
std::string ExtentPrefix(uint64_t ino);
std::string IndexPrefix(uint64_t ino);
// The offset of an 'E' or 'X' key; kBadKeyOffset for a key too short to
// hold one (only a damaged store has such a key).
constexpr uint64_t kBadKeyOffset = ~0ull;
uint64_t KeyOffset(std::string_view key);

std::string EncodeSuper(const Super& s);
Status DecodeSuper(std::string_view v, Super* s);
// Every inode record this format writes is kInodeSize bytes.
constexpr size_t kInodeSize = 72;
std::string EncodeInode(const Inode& i);
Status DecodeInode(std::string_view v, uint64_t ino, Inode* i);
std::string EncodeDirent(uint64_t ino, FileType type);
Status DecodeDirent(std::string_view v, uint64_t* ino, FileType* type);

uint64_t DataChecksum(uint64_t ino, uint64_t offset, std::string_view data);
// DataChecksum of data given in pieces (the same value), so a writer can
// hash each piece as it copies it in, while it is in cache.
class DataChecksummer {
 public:
  DataChecksummer();
  ~DataChecksummer();
  DataChecksummer(const DataChecksummer&) = delete;
  DataChecksummer& operator=(const DataChecksummer&) = delete;
  void Reset(uint64_t ino, uint64_t offset);
  void Update(const char* data, size_t n);
  uint64_t Value() const;

 private:
  void* state_;
};
constexpr size_t kExtentHeader = 16;
// An extent's value is this header (length, DataChecksum) + the data.
std::string EncodeExtentHeader(uint64_t length, uint64_t checksum);
// The same header, written over the first kExtentHeader bytes of `value`.
void EncodeExtentHeaderTo(char* value, uint64_t length, uint64_t checksum);
// Checks the header and the data; *data points into `v`. `what` names the
// file in the error.
Status DecodeExtent(std::string_view v, uint64_t ino, uint64_t offset,
                    const std::string& what, std::string_view* data,
                    uint64_t* checksum);
// Every extent index entry is kIndexSize bytes.
constexpr size_t kIndexSize = 16;
std::string EncodeIndex(uint64_t length, uint64_t checksum);
Status DecodeIndex(std::string_view v, uint64_t* length, uint64_t* checksum);

// Incremental file checksum over index entries in offset order.
class FileChecksum {
 public:
  explicit FileChecksum(uint64_t size);
  ~FileChecksum();
  void Add(uint64_t offset, uint64_t length, uint64_t data_checksum);
  uint64_t Value() const;

 private:
  void* state_;
};

// One writer's part of a file several writers hold: its size and file
// checksum, as its inode has them.
struct PartChecksum {
  uint64_t size;
  uint64_t checksum;
};
// The checksum of a file from its writers' parts (never stored; computed
// by whoever merges the parts): one part's is its own; of several, XXH64
// over the (size, checksum) pairs in ascending order, seeded with their
// number. So it does not depend on the order the writers are visited in
// (nor on which writer holds which part), and parts that are alike do not
// cancel out of it, as they did from the XOR it replaces.
uint64_t MergedChecksum(std::vector<PartChecksum> parts);

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_FORMAT_H_
