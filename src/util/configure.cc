#include "util/configure.h"

#include <unistd.h>

#include "sluice/config.h"

namespace sluice {

Status ConfigureFsOptions(const FsOptions& given, FsOptions* out) {
  if (!given.store.use_configuration) {
    *out = given;
    return Status::OK();
  }
  Config config;
  Status s = Config::Load("", "", environ, &config);
  if (s.ok()) s = config.ToFsOptions(given, FsOptions(), out);
  return s;
}

Status ConfigureStoreOptions(const StoreOptions& given, StoreOptions* out) {
  FsOptions fs;
  fs.store = given;
  Status s = ConfigureFsOptions(fs, &fs);
  if (s.ok()) *out = fs.store;
  return s;
}

}  // namespace sluice
