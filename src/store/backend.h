// Backend: the interface between Sluice's store logic and one LSM-tree
// implementation. Each adapter converts its library's status to a Status in
// its own file, and nothing outside src/store/*_backend.cc sees RocksDB or
// LevelDB types.
//
// Thread-safety: every method may be called concurrently, except Close.
#ifndef SLUICE_STORE_BACKEND_H_
#define SLUICE_STORE_BACKEND_H_

#include <functional>
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

  // Gives back the space of every value nothing points at (layout vlog);
  // *bytes says how much. Other layouts have none to give: OK, 0.
  virtual Status ReclaimUnreferenced(uint64_t* bytes) {
    *bytes = 0;
    return Status::OK();
  }

  // The tree calls `hook` (when set; null clears it) before anything
  // written to it may become durable other than through Flush: before a
  // flush it starts on its own (RocksDB, when a write buffer fills), and
  // before every write that its log takes (LevelDB always, RocksDB with
  // wal=true), since a logged write is replayed after a crash. When the
  // hook fails, so does that write, or that flush, which then writes
  // nothing. Layout vlog uses it to make the values durable before the
  // locations that point at them. Called from any thread, with no lock of
  // the tree held; the hook must outlive the tree or be cleared first.
  using DurabilityHook = std::function<Status()>;
  virtual void SetDurabilityHook(DurabilityHook hook) = 0;

  virtual bool HasNativeAppend() const = 0;
  // True when Sluice must buffer updates itself because the backend would
  // otherwise log each one (LevelDB with wal=false).
  virtual bool WantsWriteBuffer() const = 0;
};

// A backend lives in a module of its own, libsluice_rocksdb.so or
// libsluice_leveldb.so, which libsluice loads (dlopen) when a store first
// needs it: a process that opens no store, or only LevelDB stores, never
// maps RocksDB (under the LD_PRELOAD interposer, that is every process that
// does not touch the mount: RocksDB is most of the bytes the interposer
// would otherwise map into each of them, and runs its static initialisers
// there). A module exports one C function, kBackendModuleSymbol, which
// returns its BackendModule.
struct BackendModule {
  // The Sluice version the module was built with: it shares C++ types
  // (StoreOptions, Status, Backend) with libsluice, so only the same
  // version's module is taken.
  const char* version;
  // NotSupported, naming the option, for options the backend cannot
  // honour; null when it honours them all.
  Status (*check_options)(const StoreOptions& options);
  // `dir` is the backend's own directory inside the store.
  Status (*open)(const StoreOptions& options, const std::string& dir,
                 std::unique_ptr<Backend>* out);
};
constexpr const char* kBackendModuleSymbol = "sluice_backend_module_v1";

// The module of backend `name` ("rocksdb", "leveldb"): loaded once, from
// the directory libsluice itself was loaded from, else from the dynamic
// linker's search path. NotSupported, naming the file and the linker's
// error, when it cannot be loaded or is of another version.
Status LoadBackendModule(const std::string& name, const BackendModule** out);

// The capacity of the block cache a backend makes for `options`: Store::Open
// resolves block_cache_bytes=auto to the size of the tree's tables before
// it opens the backend; a backend opened directly with "auto" takes 8 MiB.
inline size_t CacheBytes(const StoreOptions& options) {
  return options.block_cache_bytes == StoreOptions::kBlockCacheAuto
             ? size_t{8} << 20
             : options.block_cache_bytes;
}

// Layout vlog over `tree`: `dir` holds the value log. `pin_fd` (or -1) is
// a read-only opener's ValueLog::PinForReading, taken before the tree was
// opened; the backend closes it (also on failure).
Status OpenVlogBackend(const StoreOptions& options, const std::string& dir,
                       std::unique_ptr<Backend> tree, int pin_fd,
                       std::unique_ptr<Backend>* out);

}  // namespace sluice

#endif  // SLUICE_STORE_BACKEND_H_
