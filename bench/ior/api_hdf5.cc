// HDF5: one 1-D dataset of bytes per file, a hyperslab per transfer, through
// parallel HDF5's MPI-IO driver (independent, or collective with -c).
#include <hdf5.h>

#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

class Hdf5Api : public Api {
 public:
  explicit Hdf5Api(bool collective) : collective_(collective) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become Status
  }
  ~Hdf5Api() override { CloseAll(); }
  std::string Note() const override {
    return std::string("parallel HDF5 (MPI-IO driver), ") +
           (collective_ ? "collective" : "independent") + " transfers";
  }
  Status Open(const OpenInfo& info) override {
    path_ = info.path;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, info.comm, MPI_INFO_NULL);
    if (info.access == Access::kWrite) {
      file_ = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    } else {
      file_ = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl);
    }
    H5Pclose(fapl);
    if (file_ < 0) return Error("open");
    if (info.access == Access::kWrite) {
      hsize_t dims[1] = {info.file_size};
      hid_t space = H5Screate_simple(1, dims, nullptr);
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
      dset_ = H5Dcreate2(file_, "data", H5T_NATIVE_UINT8, space, H5P_DEFAULT,
                         dcpl, H5P_DEFAULT);
      H5Pclose(dcpl);
      H5Sclose(space);
    } else {
      dset_ = H5Dopen2(file_, "data", H5P_DEFAULT);
    }
    if (dset_ < 0) return Error("open dataset in");
    fspace_ = H5Dget_space(dset_);
    dxpl_ = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl_, collective_ ? H5FD_MPIO_COLLECTIVE
                                        : H5FD_MPIO_INDEPENDENT);
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t) override {
    hsize_t start[1] = {offset}, count[1] = {len};
    hid_t mspace = H5Screate_simple(1, count, nullptr);
    H5Sselect_hyperslab(fspace_, H5S_SELECT_SET, start, nullptr, count,
                        nullptr);
    herr_t rc = access == Access::kWrite
                    ? H5Dwrite(dset_, H5T_NATIVE_UINT8, mspace, fspace_, dxpl_,
                               buf)
                    : H5Dread(dset_, H5T_NATIVE_UINT8, mspace, fspace_, dxpl_,
                              buf);
    H5Sclose(mspace);
    if (rc < 0) return Error(access == Access::kWrite ? "write" : "read");
    return Status::OK();
  }
  Status Fsync() override {
    // With the MPI-IO driver this ends in MPI_File_sync.
    if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) return Error("flush");
    return Status::OK();
  }
  Status Close() override {
    bool ok = CloseAll();
    return ok ? Status::OK() : Error("close");
  }
  void Remove(const OpenInfo& info) override { RemovePath(info.path); }

 private:
  Status Error(const char* what) const {
    return Status::IOError(std::string("HDF5 ") + what + " " + path_ +
                           " failed");
  }
  bool CloseAll() {
    bool ok = true;
    if (dxpl_ >= 0) H5Pclose(dxpl_);
    if (fspace_ >= 0) H5Sclose(fspace_);
    if (dset_ >= 0) ok = H5Dclose(dset_) >= 0 && ok;
    if (file_ >= 0) ok = H5Fclose(file_) >= 0 && ok;
    dxpl_ = fspace_ = dset_ = file_ = -1;
    return ok;
  }

  const bool collective_;
  std::string path_;
  hid_t file_ = -1, dset_ = -1, fspace_ = -1, dxpl_ = -1;
};

}  // namespace

std::unique_ptr<Api> MakeHdf5Api(const Params& p) {
  return std::make_unique<Hdf5Api>(p.collective);
}

}  // namespace bench
}  // namespace sluice
