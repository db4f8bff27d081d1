// The key/value API: one LSM-tree store per writer, as in LSMIO.
//
// A Store is a directory holding one LSM-tree (RocksDB or LevelDB), a header
// (magic number, format version, checksum) and a lock. Only one process may
// have a store open for writing; readers (read_only) share it.
//
// Updates are synchronous or asynchronous per call:
//   - WriteMode::kSync: the update is applied to the store before the call
//     returns; a later Get from any thread sees it. It is durable after the
//     next WriteBarrier (or at once with options wal + sync_writes).
//   - WriteMode::kAsync: the call copies the key and value into a bounded
//     queue and returns; a background thread applies queued updates in the
//     order they were issued. Any later synchronous call on the store
//     (Get included) first waits for the queue, so a thread always reads its
//     own writes. An error in an asynchronous update is reported by the next
//     WriteBarrier, StopBatch or Close (and by every synchronous update
//     until then); the updates issued after the failed one, asynchronous or
//     synchronous, are not applied until a WriteBarrier has reported it, so
//     the store holds a prefix of what was issued.
//
// WriteBarrier makes every update issued before it durable and blocks until
// it is on disk. Updates between StartBatch and StopBatch are written to the
// store as one atomic batch at StopBatch (a barrier inside a batch leaves the
// batch pending).
//
// Local: every call here is local to the calling process (see sluice/mpi.h
// for the collective barrier).
//
// Thread-safety: every method may be called from several threads at once.
#ifndef SLUICE_KV_H_
#define SLUICE_KV_H_

#include <memory>
#include <string>
#include <string_view>

#include "sluice/export.h"
#include "sluice/iterator.h"
#include "sluice/options.h"
#include "sluice/stats.h"
#include "sluice/status.h"
#include "sluice/write_batch.h"

namespace sluice {

enum class WriteMode : int { kSync = 0, kAsync = 1 };

class SLUICE_EXPORT Store {
 public:
  // Opens (or creates, see StoreOptions::create_if_missing) the store in
  // directory `path`. Errors name the path: Busy (another process has it
  // open for writing), NotAStore (a file, or a non-empty directory without a
  // Sluice header), VersionTooNew, Corruption, IOError (cannot be created).
  // The options the caller did not give come from the configuration
  // (StoreOptions::use_configuration, docs/CONFIG.md): a bad SLUICE_*
  // value or configuration file is InvalidArgument naming it, before the
  // disk is touched.
  static Status Open(const StoreOptions& options, const std::string& path,
                     std::unique_ptr<Store>* store);

  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Closes the store if Close was not called; errors are then lost, so call
  // Close to see them.
  virtual ~Store();

  // Writes `value` under `key`, replacing any value.
  virtual Status Put(std::string_view key, std::string_view value,
                     WriteMode mode = WriteMode::kSync) = 0;
  // Reads the value of `key`. A missing key is Status::NotFound (check
  // IsNotFound()), distinct from every error.
  virtual Status Get(std::string_view key, std::string* value) = 0;
  // Appends `value` to the value of `key` (a missing key starts empty).
  virtual Status Append(std::string_view key, std::string_view value,
                        WriteMode mode = WriteMode::kSync) = 0;
  // Removes `key`. Removing a missing key is not an error.
  virtual Status Delete(std::string_view key,
                        WriteMode mode = WriteMode::kSync) = 0;

  // Applies every update of `batch` atomically.
  virtual Status Write(const WriteBatch& batch,
                       WriteMode mode = WriteMode::kSync) = 0;

  // An ordered scan over the store as it is now (earlier asynchronous
  // updates included). Never null; check status() for errors. Keys outside
  // [lower_bound, upper_bound) are not visited, and (with RocksDB) table
  // blocks holding only such keys are not even read, so a damaged block
  // elsewhere cannot fail the scan. Empty means unbounded.
  virtual std::unique_ptr<Iterator> NewIterator(
      std::string_view lower_bound = {}, std::string_view upper_bound = {}) = 0;

  // Makes every update issued before the call durable; blocks until done.
  virtual Status WriteBarrier() = 0;

  // Groups the following updates into one atomic batch, written at
  // StopBatch. Batches do not nest.
  virtual Status StartBatch() = 0;
  virtual Status StopBatch() = 0;

  // Gives back to the file system the space of every stored value that no
  // key points at any more (layout vlog; other layouts leave it to their
  // compactions and give 0). Values dropped by updates are given back at
  // their barrier anyway; this finds the rest: those of a process that died
  // before its barrier, or held back by a reader when their writer closed.
  // A barrier first. Busy while another process reads the store. Updates
  // issued meanwhile wait for it. *bytes_freed: the bytes given back.
  virtual Status ReclaimSpace(uint64_t* bytes_freed) = 0;

  // Waits for queued updates, writes what is buffered, flushes and releases
  // the store. Further calls return InvalidArgument. Idempotent.
  virtual Status Close() = 0;

  virtual StoreStats GetStats() const = 0;
  virtual const std::string& path() const = 0;
  virtual BackendKind backend() const = 0;
  virtual StoreLayout layout() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_KV_H_
