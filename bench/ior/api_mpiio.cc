// MPIIO: MPI_File_{write,read}_at[_all], MPI_File_sync, as IOR's MPIIO.
#include <mpi.h>

#include "ior/api.h"

namespace sluice {
namespace bench {
namespace {

Status MpiError(const std::string& what, const std::string& path, int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return Status::IOError("MPI " + what + " " + path + ": " +
                         std::string(msg, len));
}

class MpiioApi : public Api {
 public:
  explicit MpiioApi(bool collective) : collective_(collective) {}
  std::string Note() const override {
    return collective_ ? "MPIIO collective (write_at_all/read_at_all)"
                       : "MPIIO independent (write_at/read_at)";
  }
  Status Open(const OpenInfo& info) override {
    path_ = info.path;
    int mode = info.access == Access::kWrite ? MPI_MODE_WRONLY | MPI_MODE_CREATE
                                             : MPI_MODE_RDONLY;
    int rc = MPI_File_open(info.comm, path_.c_str(), mode, MPI_INFO_NULL, &fh_);
    if (rc != MPI_SUCCESS) return MpiError("open", path_, rc);
    MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
    return Status::OK();
  }
  Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
              uint64_t) override {
    MPI_Status st;
    const int n = static_cast<int>(len);
    const MPI_Offset off = static_cast<MPI_Offset>(offset);
    int rc;
    if (access == Access::kWrite) {
      rc = collective_ ? MPI_File_write_at_all(fh_, off, buf, n, MPI_BYTE, &st)
                       : MPI_File_write_at(fh_, off, buf, n, MPI_BYTE, &st);
    } else {
      rc = collective_ ? MPI_File_read_at_all(fh_, off, buf, n, MPI_BYTE, &st)
                       : MPI_File_read_at(fh_, off, buf, n, MPI_BYTE, &st);
    }
    if (rc != MPI_SUCCESS) {
      return MpiError(access == Access::kWrite ? "write" : "read", path_, rc);
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count != n) {
      return Status::IOError("MPI short transfer on " + path_ + " at offset " +
                             std::to_string(offset));
    }
    return Status::OK();
  }
  Status Fsync() override {
    int rc = MPI_File_sync(fh_);
    return rc == MPI_SUCCESS ? Status::OK() : MpiError("sync", path_, rc);
  }
  Status Close() override {
    int rc = MPI_File_close(&fh_);
    return rc == MPI_SUCCESS ? Status::OK() : MpiError("close", path_, rc);
  }
  void Remove(const OpenInfo& info) override {
    MPI_File_delete(info.path.c_str(), MPI_INFO_NULL);
  }

 private:
  const bool collective_;
  std::string path_;
  MPI_File fh_ = MPI_FILE_NULL;
};

}  // namespace

std::unique_ptr<Api> MakeMpiioApi(const Params& p) {
  return std::make_unique<MpiioApi>(p.collective);
}

}  // namespace bench
}  // namespace sluice
