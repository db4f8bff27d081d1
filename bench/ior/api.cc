#include "ior/api.h"

#include <ftw.h>
#include <string.h>

namespace sluice {
namespace bench {

std::unique_ptr<Api> MakePosixApi(const Params& p);
std::unique_ptr<Api> MakeSluicePosixApi(const Params& p, std::string* why_not);
std::unique_ptr<Api> MakeMpiioApi(const Params& p);
std::unique_ptr<Api> MakeSluiceKvApi(const Params& p);
std::unique_ptr<Api> MakeSluiceStreamApi(const Params& p);
std::unique_ptr<Api> MakeSluiceDatasetApi(const Params& p);
#ifdef SLUICE_BENCH_HDF5
std::unique_ptr<Api> MakeHdf5Api(const Params& p);
#endif
#ifdef SLUICE_BENCH_ADIOS2
std::unique_ptr<Api> MakeAdios2Api(const Params& p);
std::unique_ptr<Api> MakeAdios2BbApi(const Params& p);
#endif
#ifdef SLUICE_BENCH_ADIOS2_PLUGIN
std::unique_ptr<Api> MakeSluiceAdios2Api(const Params& p);
#endif

std::unique_ptr<Api> MakeApi(const std::string& name, const Params& p,
                             std::string* why_not) {
  if (name == "POSIX") return MakePosixApi(p);
  if (name == "SLUICE-POSIX") return MakeSluicePosixApi(p, why_not);
  if (name == "MPIIO") return MakeMpiioApi(p);
  if (name == "SLUICE-KV") return MakeSluiceKvApi(p);
  if (name == "SLUICE-STREAM") return MakeSluiceStreamApi(p);
  if (name == "SLUICE-DATASET") return MakeSluiceDatasetApi(p);
  if (name == "HDF5") {
#ifdef SLUICE_BENCH_HDF5
    return MakeHdf5Api(p);
#else
    *why_not = "built without parallel HDF5 (install libhdf5-openmpi-dev and "
               "rebuild)";
    return nullptr;
#endif
  }
  if (name == "ADIOS2" || name == "ADIOS2-BB") {
#ifdef SLUICE_BENCH_ADIOS2
    return name == "ADIOS2" ? MakeAdios2Api(p) : MakeAdios2BbApi(p);
#else
    *why_not = "built without ADIOS2 (pip install adios2 and rebuild)";
    return nullptr;
#endif
  }
  if (name == "SLUICE-ADIOS2") {
#ifdef SLUICE_BENCH_ADIOS2_PLUGIN
    return MakeSluiceAdios2Api(p);
#else
    *why_not = "built without the ADIOS2 plugin engine (pip install adios2 "
               ">= 2.12 and rebuild)";
    return nullptr;
#endif
  }
  *why_not = "not an I/O API";
  return nullptr;
}

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " " + path + ": " + strerror(err));
}

void RemovePath(const std::string& path) {
  nftw(path.c_str(),
       [](const char* p, const struct stat*, int, struct FTW*) {
         return remove(p);
       },
       16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace bench
}  // namespace sluice
