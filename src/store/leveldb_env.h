// LevelDB's Env over Env::Default() (src/util/env.h), for when a test
// replaced the default Env: see rocksdb_env.h.
#ifndef SLUICE_STORE_LEVELDB_ENV_H_
#define SLUICE_STORE_LEVELDB_ENV_H_

#include <leveldb/env.h>

namespace sluice {

// leveldb::Env::Default() when Env::Default() is the POSIX Env, else an Env
// over Env::Default() that leaves to LevelDB's own what holds no data
// (locks, info logs, listings, sizes, threads). Never destroyed.
leveldb::Env* LevelDBEnvOverEnv();

}  // namespace sluice

#endif  // SLUICE_STORE_LEVELDB_ENV_H_
