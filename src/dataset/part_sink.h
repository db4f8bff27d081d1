// Where a rank writes its parts of a dataset id: its own store (dataset
// mode basic), or its node's store (file_per_node), which the node's leader
// writes for every rank of the node (node_writer.h). The dataset layer
// writes through this seam and does not care which.
//
// Thread-safety: a PartSink and distinct PartFiles may be used from several
// threads; one PartFile's calls are not to race with its Close.
#ifndef SLUICE_DATASET_PART_SINK_H_
#define SLUICE_DATASET_PART_SINK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "sluice/fs.h"
#include "sluice/status.h"

namespace sluice {
namespace dataset {

class PartFile {
 public:
  virtual ~PartFile() = default;
  // An error may also be reported by a later call (a node writer's writes
  // do not wait for their outcome), at the latest by Close.
  virtual Status PWrite(const char* buf, size_t n, uint64_t offset) = 0;
  // Closes the file without a store barrier (the dataset's close makes the
  // store durable) and fills *info (size, checksum, complete) as the store
  // has it now. The first error of any write, if one failed.
  virtual Status Close(FileInfo* info) = 0;
  // Writes what the file buffers into the store (no barrier): where a
  // full root shows, before Close.
  virtual Status Flush() { return Status::OK(); }
  // The bytes [offset, offset + n) written so far, those a failed flush
  // left in memory included (to write them to another root). NotSupported
  // where the bytes are not in this process (a node writer's).
  virtual Status ReadBack(char* buf, size_t n, uint64_t offset) {
    (void)buf;
    (void)n;
    (void)offset;
    return Status::NotSupported("this file's bytes cannot be read back");
  }
};

class PartSink {
 public:
  virtual ~PartSink() = default;
  // mkdir -p inside the store.
  virtual Status MakeDirs(const std::string& path) = 0;
  // Opens `path` for writing, creating it.
  virtual Status Create(const std::string& path,
                        std::unique_ptr<PartFile>* out) = 0;
};

// Parts written straight into `fs` (not owned; it must outlive the sink
// and its files).
std::unique_ptr<PartSink> NewStoreSink(FileSystem* fs);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_PART_SINK_H_
