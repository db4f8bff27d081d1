// FsStore: the file layer's records in one writer's store (format.h):
// namespace look-ups, inode allocation, and the extent primitives.
//
// Thread-safety: look-ups may run concurrently; updates of one inode are
// serialised by the caller (the inode's mutex), namespace updates by the
// file system's mutex.
#ifndef SLUICE_FS_FS_STORE_H_
#define SLUICE_FS_FS_STORE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "fs/format.h"
#include "sluice/fs.h"
#include "sluice/kv.h"
#include "store/write_buffer.h"

namespace sluice {
namespace fs {

class FsStore {
 public:
  // Opens the store at `path` (creating it, with a superblock and the root
  // directory, when writable and new).
  static Status Open(const StoreOptions& options, const std::string& path,
                     int writer, std::unique_ptr<FsStore>* out);

  Store* store() { return store_.get(); }
  int writer() const { return writer_; }
  const std::string& path() const { return path_; }
  // Changes with every write that may touch inode `ino`'s extents, so a
  // reader of `ino` knows when to renew its iterator: every Write, and the
  // WriteFor(ino) calls.
  uint64_t generation(uint64_t ino);
  Status Write(const WriteBatch& batch);
  // Writes a batch that changes nothing but inode `ino` (its extents, index
  // and inode record): readers of other files keep their iterators (a
  // process copying one stored file into another renews only the
  // destination's).
  Status WriteFor(uint64_t ino, const WriteBatch& batch);

  // Walks `path` (normalised). *exists says whether the last component
  // exists; if it does, *inode is filled. *parent is the parent directory's
  // inode and *name the last component. NotFound if a parent is missing,
  // NotADirectory if one is a file. *ancestors, if given, receives the
  // inode numbers of the directories walked through, the root first and
  // the parent last (none for "/"). A path that comes back to a directory
  // it went through (an entry pointing at an enclosing directory, which
  // only a damaged or forged store holds) is Corruption: followed, such an
  // entry would make every walk of the tree endless.
  Status Resolve(const std::string& path, Inode* parent, std::string* name,
                 Inode* inode, bool* exists,
                 std::vector<uint64_t>* ancestors = nullptr);
  Status GetInode(uint64_t ino, Inode* inode);
  // An inode key only ever holds an inode record, so the batch is told
  // how long the value it replaces may be (WriteBuffer::Update).
  static void PutInode(WriteBatch* b, const Inode& inode) {
    b->rep().PutReplacing(InodeKey(inode.ino), EncodeInode(inode), kInodeSize);
  }
  // Reserves an inode number; the superblock update goes into `b`.
  uint64_t AllocateIno(WriteBatch* b);
  // Appends the entries of directory `ino`, reached through the
  // directories `ancestors` (as Resolve gives them) at `path`. Entries that
  // no walk may follow (a name ValidName refuses; the directory itself or
  // one of `ancestors`, a cycle; a record failing its checksum) are left
  // out and named, escaped, in a Corruption status naming `path` and the
  // store; the valid entries are appended all the same, so that a caller
  // can go on with them.
  Status ListDir(uint64_t ino, const std::vector<uint64_t>& ancestors,
                 const std::string& path, std::vector<DirEntry>* entries);
  Status DirIsEmpty(uint64_t ino, bool* empty);

  // End of the furthest extent of `ino` (0 if none).
  Status ExtentEnd(uint64_t ino, uint64_t* end);
  // Adds to `b` what removes bytes [from, to) of `ino`'s extents: covered
  // extents are deleted, straddling ones rewritten without the range.
  // *removed is the number of stored bytes that go.
  Status RemoveRange(uint64_t ino, uint64_t from, uint64_t to,
                     const std::string& what, WriteBatch* b,
                     uint64_t* removed);
  // Adds the extent [offset, offset + data.size()) to `b`.
  static void PutExtent(uint64_t ino, uint64_t offset, std::string_view data,
                        WriteBatch* b);
  // The same, for an extent built in place: *value is kExtentHeader bytes
  // of room and then the data, whose DataChecksum is `sum`. The batch takes
  // *value's memory, no copy, and leaves memory to reuse in its place
  // (WriteBuffer::PutSwap); TakeExtentValue gives the value back.
  // `fresh`: no extent of the file starts at `offset` (so the batch need
  // not look for a value it replaces).
  static void PutExtentValue(uint64_t ino, uint64_t offset, uint64_t sum,
                             std::string* value, WriteBatch* b, bool fresh);
  static bool TakeExtentValue(uint64_t ino, uint64_t offset,
                              std::string* value, WriteBatch* b);
  // Removes every extent of `ino` (in batches) and the inode record.
  Status DeleteFile(uint64_t ino);
  // The file checksum over the extent index (format.h).
  Status ComputeChecksum(uint64_t ino, uint64_t size, uint64_t* checksum);

 private:
  FsStore(std::unique_ptr<Store> store, std::string path, int writer)
      : store_(std::move(store)), path_(std::move(path)), writer_(writer) {}

  std::unique_ptr<Store> store_;
  const std::string path_;
  const int writer_;
  std::atomic<uint64_t> generation_{0};
  std::mutex gen_mu_;
  // Writes for one inode (WriteFor). A reader's generation is the sum of
  // this and generation_: both only grow, so the sum changes when either
  // does.
  std::unordered_map<uint64_t, uint64_t> ino_generation_;  // GUARDED_BY(gen_mu_)
  std::mutex ino_mu_;
  uint64_t next_ino_ = 0;      // GUARDED_BY(ino_mu_)
  uint64_t reserved_ino_ = 0;  // GUARDED_BY(ino_mu_): persisted limit
};

// The first key after every key that starts with `prefix`.
std::string PrefixEnd(std::string prefix);
// An iterator over the keys starting with `prefix` only.
inline std::unique_ptr<Iterator> PrefixIterator(Store* store,
                                                const std::string& prefix) {
  return store->NewIterator(prefix, PrefixEnd(prefix));
}

// True when `key` starts with `prefix`.
inline bool HasPrefix(std::string_view key, std::string_view prefix) {
  return key.size() >= prefix.size() && key.substr(0, prefix.size()) == prefix;
}

int64_t NowNanos();

// `name` for a message: in double quotes, with '"', '\' and every byte
// outside printable ASCII escaped ("\x1b"), and cut after 64 bytes
// ("..." and its length follow), since a damaged store's names can hold
// anything.
std::string QuoteName(std::string_view name);

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_FS_STORE_H_
