// The configuration of the entry points that are no context: the K/V open
// (Store::Open) and the file layer (FileSystem::Open, and so sluice_mount
// and the stream API). One function for both: Config::Load of the
// process's environment and of the file config_file names ([global]
// lines; SLUICE_CONFIG_FILE), then Config::ToFsOptions over the caller's
// options. Read at each open: a store open costs milliseconds, this
// microseconds (a file read when SLUICE_CONFIG_FILE is set).
#ifndef SLUICE_UTIL_CONFIGURE_H_
#define SLUICE_UTIL_CONFIGURE_H_

#include "sluice/fs.h"
#include "sluice/options.h"
#include "sluice/status.h"

namespace sluice {

// *out = `given`, completed from the configuration when
// given.store.use_configuration is on: each option the caller did not give
// (FsOptions::Given) takes its configured value, else its default. *out
// has use_configuration off. An error in the environment or the file is
// returned as Config::Load gives it (naming the variable, or file and
// line); *out is then unchanged.
Status ConfigureFsOptions(const FsOptions& given, FsOptions* out);
// The same for a store alone (extent_bytes is not used).
Status ConfigureStoreOptions(const StoreOptions& given, StoreOptions* out);

}  // namespace sluice

#endif  // SLUICE_UTIL_CONFIGURE_H_
