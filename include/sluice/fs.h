// Files over the store: a POSIX-like namespace (files, directories) kept in
// per-writer LSM stores.
//
// A file system lives in a directory `root`. Each writer process writes
// through its own store, root/writer.<N> (N = its MPI rank, or 0), so N
// processes writing disjoint ranges of one logical file each write only
// their own store (IOR's shared-file mode, PLFS's design). A reader
// (FileSystem::kReader) opens every writer's store read-only and sees the
// merge: a file's size is the largest any writer gave it and its bytes come
// from whichever writer wrote them. Writers must not overlap: bytes written
// by two writers are reported as an error when read, never silently picked.
//
// For one writer the semantics are POSIX's: writes at any offset, later
// writes win, holes read as zeros, O_APPEND, O_TRUNC, O_CREAT|O_EXCL,
// truncate (shrink and grow), unlink (data kept until the last handle
// closes), rename, stat, mkdir/rmdir/readdir.
//
// A writer also sees the other writers: reads, stat and listings merge its
// own store (as it writes it) with theirs as they last made them durable
// (close, sync, barrier), by the reader's rules. Unlink, Rename, Truncate,
// SetAttr and Rmdir of a path others also hold change every writer's part
// (each other store opened as its writer, without waiting), or fail with
// Busy before changing any when another process has one of those stores
// open; the stores change one after the other, not atomically. When other
// writers' stores exist, each O_APPEND write goes, under a lock on the
// root, after the end of the file as every writer has made it durable,
// and is made durable at once: appends of several writers to one log
// never overlap and none is lost.
//
// Data is stored as extents keyed by (inode, offset), so reading a range is
// an ordered scan. Small sequential writes are combined in memory into
// extents of up to FsOptions::extent_bytes before they reach the store. Each
// extent carries a checksum verified on every read; each file a checksum
// over its extents, set when the writer closes or syncs it and checked when
// the file is read whole or verified.
//
// Thread-safety: a FileSystem and its Files may be used from several
// threads; one File's offset is shared by the threads that use it.
// Local: nothing here communicates; every process opens its own FileSystem.
#ifndef SLUICE_FS_H_
#define SLUICE_FS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/export.h"
#include "sluice/options.h"
#include "sluice/status.h"

struct stat;
struct timespec;

namespace sluice {

struct SLUICE_EXPORT FsOptions {
  // Options of every writer's store.
  StoreOptions store;

  // Largest extent, and the write-combining buffer of each open file:
  // sequential writes collect here and reach the store as one value. Bounds
  // the memory of buffered writes to this much per file being written.
  // Default: 4 MiB (4 KiB..256 MiB).
  size_t extent_bytes = 4u << 20;

  // Sets "extent_bytes" or, by any other name, a store option
  // (StoreOptions::Set), and records it as given. Unknown names and bad
  // values are InvalidArgument.
  Status Set(std::string_view name, std::string_view value);
  // Sets options from "name=value" pairs separated by ',' or ';'.
  Status SetAll(std::string_view list);
  // extent_bytes: set by name or not its default; any other name:
  // StoreOptions::Given. FileSystem::Open completes the options not given
  // from the configuration when store.use_configuration is on.
  bool Given(std::string_view name) const;

 private:
  bool extent_bytes_set_ = false;
};

struct FileInfo {
  uint64_t ino = 0;
  bool is_dir = false;
  uint32_t mode = 0;        // permission bits
  uint64_t size = 0;
  uint64_t allocated = 0;   // bytes actually stored (holes excluded)
  int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;
  bool checksum_valid = false;  // set at close/sync of the last writer
  // Every writer closed the file after its last change. A file still
  // being written, or whose writer died, is not complete, even if a sync
  // made its data and checksum durable (Verify then says Incomplete).
  bool complete = false;
  // The file checksum (meaningful when checksum_valid): of a file several
  // writers hold, one combined from each writer's, which depends on every
  // part and not on the order of the writers.
  uint64_t checksum = 0;
};

struct DirEntry {
  std::string name;
  bool is_dir = false;
};

// A change of a file's or directory's attributes (FileSystem::SetAttr):
// each field marked set is applied, the others are kept. ctime becomes now.
struct SetAttrs {
  bool set_mode = false;
  uint32_t mode = 0;  // permission bits
  bool set_atime = false;
  int64_t atime_ns = 0;
  bool set_mtime = false;
  int64_t mtime_ns = 0;
};

// chmod's change: the permission bits of `mode`.
SLUICE_EXPORT SetAttrs ModeAttrs(uint32_t mode);
// utimensat's change: times[0] access, times[1] modification; null is now
// for both, and a tv_nsec of UTIME_NOW or UTIME_OMIT means what it does
// there.
SLUICE_EXPORT SetAttrs TimeAttrs(const struct timespec* times);

// What a name made in the file system may be, so that it can be exported to
// a real one: a name of at most kNameMax bytes (NAME_MAX), a path of fewer
// than kPathMax bytes (PATH_MAX, which counts the terminating zero). A
// create, mkdir or rename that would make a longer one is NameTooLong.
constexpr size_t kNameMax = 255;
constexpr size_t kPathMax = 4096;

// Open flags, the values of <fcntl.h>'s O_* on Linux.
enum : int {
  kRead = 0,          // O_RDONLY
  kWrite = 01,        // O_WRONLY
  kReadWrite = 02,    // O_RDWR
  kCreate = 0100,     // O_CREAT
  kExclusive = 0200,  // O_EXCL
  kTruncate = 01000,  // O_TRUNC
  kAppend = 02000,    // O_APPEND
  kDataSync = 010000,    // O_DSYNC
  kSync = 04010000,      // O_SYNC (O_DSYNC's bit and one more)
  kDirectory = 0200000,  // O_DIRECTORY
};

class SLUICE_EXPORT File {
 public:
  virtual ~File();
  // Reads at the file offset and advances it; *got < n only at end of file.
  virtual Status Read(void* buf, size_t n, size_t* got) = 0;
  virtual Status Write(const void* buf, size_t n) = 0;
  virtual Status PRead(void* buf, size_t n, uint64_t offset, size_t* got) = 0;
  virtual Status PWrite(const void* buf, size_t n, uint64_t offset) = 0;
  // Writes at the end of the file, as an O_APPEND write does, whatever
  // flags the file was opened with, and says where the data went (*at);
  // the file offset is not used or moved. (For callers that keep O_APPEND
  // themselves, as the interposer does: fcntl turns it on and off.)
  virtual Status Append(const void* buf, size_t n, uint64_t* at);
  // whence: SEEK_SET, SEEK_CUR, SEEK_END; *pos is the new offset.
  virtual Status Seek(int64_t offset, int whence, uint64_t* pos) = 0;
  // Shrinks or grows the file to `size`; a size of 2^63 or more (a
  // negative off_t) is InvalidArgument and changes nothing.
  virtual Status Truncate(uint64_t size) = 0;
  // Writes buffered data, sets the file checksum, makes it durable (with
  // every other change of the writer's store). On any handle of the file,
  // read-only ones too: the data other handles of this process buffered is
  // the file's.
  virtual Status Sync() = 0;
  virtual Status Stat(FileInfo* info) = 0;
  virtual const std::string& path() const = 0;
  // Writes buffered data and the file checksum, marks the file complete
  // when this was its last open handle, and makes it durable, as Sync
  // does: an error means the file may not be what was written, and it is
  // then not complete. Idempotent.
  virtual Status Close() = 0;
  // Marks the file incomplete, durably (a write barrier), as a change
  // would until the next Close. For a handle that carries on after
  // another closed the file while the file stayed open elsewhere: the
  // interposer closes its files before fork and exec, and the program's
  // descriptor reopens its file at its next use; a failure before the
  // program's own close must not leave the file as that earlier close
  // left it, complete. The default (files that cannot be written) does
  // nothing.
  virtual Status MarkOpen();
};

class SLUICE_EXPORT FileSystem {
 public:
  static constexpr int kReader = -1;

  // Opens (creating if needed) the file system in directory `root` as
  // writer `writer` (>= 0), or read-only over every writer (kReader). The
  // options the caller did not give (FsOptions::Given) come from the
  // configuration, as for Store::Open.
  static Status Open(const FsOptions& options, const std::string& root,
                     int writer, std::unique_ptr<FileSystem>* fs);

  // The directory of writer `writer`'s store under `root`
  // (root/writer.<8 digits>): removing it, while no process has it open,
  // drops everything that writer stored.
  static std::string StorePath(const std::string& root, int writer);

  virtual ~FileSystem();
  // `path` is absolute within the file system ("/a/b"); ".." may not
  // climb above the root. With kCreate, its names must fit kNameMax and
  // kPathMax (so must those of Mkdir and of Rename's target), else
  // NameTooLong; a name holding a NUL is InvalidArgument. A path through
  // an entry that points back at an enclosing directory (a cycle, which
  // only a damaged or forged store holds) is Corruption. A File is never a
  // directory: opening one is IsADirectory. kDirectory asks for a
  // directory: on a file it is NotADirectory, and with kCreate
  // InvalidArgument (as Linux's open(2)), both before anything is created
  // or truncated. With kSync or kDataSync, each write of the File returns
  // once its data is durable: it commits the file's buffered data and
  // makes a write barrier, as Sync does (except the file checksum, still
  // set at Sync or Close). Costly: every write is then an extent of its own
  // and a barrier.
  virtual Status OpenFile(const std::string& path, int flags, uint32_t mode,
                          std::unique_ptr<File>* file) = 0;
  virtual Status Stat(const std::string& path, FileInfo* info) = 0;
  // Appends the entries of directory `path`. Entries no walk may follow
  // (a name no path can hold: empty, "." or "..", with '/' or NUL, over
  // 255 bytes; an entry pointing back at an enclosing directory; a record
  // failing its checksum) are left out and named, escaped, in a Corruption
  // status naming the directory; the valid entries are appended all the
  // same, so that a caller walking the tree can go on with them.
  virtual Status ReadDir(const std::string& path,
                         std::vector<DirEntry>* entries) = 0;
  virtual Status Mkdir(const std::string& path, uint32_t mode) = 0;
  virtual Status Rmdir(const std::string& path) = 0;
  virtual Status Unlink(const std::string& path) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // As File::Truncate, on the file at `path`.
  virtual Status Truncate(const std::string& path, uint64_t size) = 0;
  // Sets the permission bits and times `attrs` marks (chmod, utimensat);
  // on an open file too. A writer changes every writer's record of it.
  virtual Status SetAttr(const std::string& path, const SetAttrs& attrs) = 0;
  // Reads every extent of the file and checks every checksum; Corruption
  // names the file and the extent. Incomplete when what is stored checks
  // out but the file is not complete (FileInfo::complete).
  virtual Status Verify(const std::string& path) = 0;
  // Writes buffered data of open files and makes everything durable
  // (a write barrier on the writer's store).
  virtual Status Sync() = 0;
  // Closes open files and the stores.
  virtual Status Close() = 0;
  virtual bool read_only() const = 0;
};

// Fills *st from `info`: type and permission bits, inode, link count, size,
// 512-byte blocks and times; st_dev, st_uid, st_gid and st_blksize are left
// 0 for the caller to choose.
SLUICE_EXPORT void FileInfoToStat(const FileInfo& info, struct stat* st);

// Normalises "a//b/./c/../d" to "/a/b/d"; InvalidArgument if ".." would
// leave the root.
SLUICE_EXPORT Status NormalizePath(const std::string& path, std::string* out);

}  // namespace sluice

#endif  // SLUICE_FS_H_
