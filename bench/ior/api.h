// One I/O interface under test (IOR calls these "aiori" backends). The
// runner owns the layout, timing and verification; an Api only moves bytes.
#ifndef SLUICE_BENCH_IOR_API_H_
#define SLUICE_BENCH_IOR_API_H_

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ior/params.h"
#include "sluice/status.h"

namespace sluice {
namespace bench {

enum class Access { kWrite, kRead };

struct OpenInfo {
  std::string path;       // the file: shared, or this data rank's with -F
  Access access;
  bool shared;            // one file written by every rank (no -F)
  MPI_Comm comm;          // ranks opening `path` together
  int data_rank;          // whose data this rank writes or reads
  uint64_t file_size;     // final size of `path`
  uint64_t rank_bytes;    // bytes of one rank's data
};

class Api {
 public:
  virtual ~Api() = default;
  // A line printed with the results (e.g. how the API was run), or "".
  virtual std::string Note() const { return ""; }
  virtual Status Open(const OpenInfo& info) = 0;
  // `offset` is the offset in the logical file; `rank_offset` the offset
  // within data_rank's own bytes (for APIs that store per writer).
  virtual Status Xfer(Access access, char* buf, uint64_t len, uint64_t offset,
                      uint64_t rank_offset) = 0;
  virtual Status Fsync() = 0;
  virtual Status Close() = 0;
  // With --fast-root/--slow-root: true when the API writes to the fast root
  // first, so its data may reach the slow root after Close returns. False
  // (the default): it writes straight to the slow root and, with -e, its
  // data is durable when Close returns (waited == durable).
  virtual bool Tiered() const { return false; }
  // For a Tiered API, after the Close of a write: returns once everything
  // that write phase wrote is durable on the slow root (an error if it
  // cannot tell: never a guess).
  virtual Status WaitDurable() { return Status::OK(); }
  // Removes what Open created for `info` (called by one rank per file).
  virtual void Remove(const OpenInfo& info) = 0;
  // True when each writer keeps its own files even in shared mode, so every
  // rank removes its own.
  virtual bool PerWriterStorage() const { return false; }
};

// Creates the API `name`, or sets *why_not (built without it).
std::unique_ptr<Api> MakeApi(const std::string& name, const Params& params,
                             std::string* why_not);

// Helpers shared by file-based APIs.
Status ErrnoStatus(const std::string& what, const std::string& path, int err);
void RemovePath(const std::string& path);  // rm -rf, errors ignored

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_API_H_
