// RocksDB's FileSystem over Env::Default() (src/util/env.h), for when a
// test replaced the default Env: the tree's files are then opened, read,
// written, synced, renamed and removed through it, so an Env that injects
// faults or forgets what was never synced sees them as it sees the value
// log's. With the plain POSIX Env, RocksDB keeps its own file system, which
// makes the same system calls (with its own buffering and read-ahead).
#ifndef SLUICE_STORE_ROCKSDB_ENV_H_
#define SLUICE_STORE_ROCKSDB_ENV_H_

#include <rocksdb/file_system.h>

#include <memory>

namespace sluice {

// `base` when Env::Default() is the POSIX Env, else a file system over
// Env::Default() that leaves to `base` what holds no data (locks, info
// logs, listings, sizes, times).
std::shared_ptr<rocksdb::FileSystem> RocksDBFileSystemOverEnv(
    const std::shared_ptr<rocksdb::FileSystem>& base);

}  // namespace sluice

#endif  // SLUICE_STORE_ROCKSDB_ENV_H_
