// Backend: the interface between Sluice's store logic and one LSM-tree
// implementation. Each adapter converts its library's status to a Status in
// its own file, and nothing outside src/store/*_backend.cc sees RocksDB or
// LevelDB types.
//
// Thread-safety: every method may be called concurrently, except Close.
#ifndef SLUICE_STORE_BACKEND_H_
#define SLUICE_STORE_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>

#include "sluice/iterator.h"
#include "sluice/options.h"
#include "sluice/status.h"
#include "store/write_buffer.h"

namespace sluice {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual Status Get(std::string_view key, std::string* value) = 0;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // Appends without reading (RocksDB's merge operator). Only called when
  // HasNativeAppend().
  virtual Status Append(std::string_view key, std::string_view value) = 0;
  // Writes every entry of `buffer` as one atomic batch.
  virtual Status Write(const WriteBuffer& buffer) = 0;
  // An ordered scan of what is written so far, within [lower, upper)
  // (empty: unbounded).
  virtual std::unique_ptr<Iterator> NewIterator(std::string_view lower,
                                                std::string_view upper) = 0;
  // Makes everything written so far durable; blocks until it is on disk.
  virtual Status Flush() = 0;
  virtual Status Close() = 0;

  virtual bool HasNativeAppend() const = 0;
  // True when Sluice must buffer updates itself because the backend would
  // otherwise log each one (LevelDB with wal=false).
  virtual bool WantsWriteBuffer() const = 0;
};

// `dir` is the backend's own directory inside the store.
Status OpenRocksDBBackend(const StoreOptions& options, const std::string& dir,
                          std::unique_ptr<Backend>* out);
// NotSupported, naming the option, for options LevelDB cannot honour.
Status CheckLevelDBOptions(const StoreOptions& options);
Status OpenLevelDBBackend(const StoreOptions& options, const std::string& dir,
                          std::unique_ptr<Backend>* out);

// Layout vlog over `tree`: `dir` holds the value log.
Status OpenVlogBackend(const StoreOptions& options, const std::string& dir,
                       std::unique_ptr<Backend> tree,
                       std::unique_ptr<Backend>* out);

}  // namespace sluice

#endif  // SLUICE_STORE_BACKEND_H_
