// Loading a backend's module (see BackendModule in backend.h).
#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "store/backend.h"

namespace sluice {
namespace {

std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadBackendModule), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string LastDlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown error";
}

}  // namespace

Status LoadBackendModule(const std::string& name, const BackendModule** out) {
  static std::mutex mu;
  static std::map<std::string, const BackendModule*> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(name);
  if (it != loaded.end()) {
    *out = it->second;
    return Status::OK();
  }
  const std::string file = "libsluice_" + name + ".so";
  // Beside libsluice first: an installed tree, or a build tree, finds its
  // own modules whatever the search path says.
  const std::string dir = OwnDirectory();
  std::string tried;
  void* handle = nullptr;
  if (!dir.empty()) {
    const std::string path = dir + "/" + file;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) tried = LastDlError();
  }
  if (handle == nullptr) {
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const std::string e = LastDlError();
      tried = tried.empty() ? e : tried + "; " + e;
    }
  }
  if (handle == nullptr) {
    return Status::NotSupported("backend " + name + ": cannot load " + file +
                                " (" + tried + ")");
  }
  using Entry = const BackendModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kBackendModuleSymbol));
  const BackendModule* m = entry != nullptr ? entry() : nullptr;
  if (m == nullptr || m->open == nullptr || m->version == nullptr) {
    return Status::NotSupported("backend " + name + ": " + file +
                                " is not a Sluice backend module");
  }
  if (strcmp(m->version, SLUICE_BUILD_VERSION) != 0) {
    return Status::NotSupported("backend " + name + ": " + file +
                                " is from Sluice " + m->version +
                                ", this library is " + SLUICE_BUILD_VERSION);
  }
  loaded[name] = m;  // the module stays loaded for the process's life
  *out = m;
  return Status::OK();
}

}  // namespace sluice
