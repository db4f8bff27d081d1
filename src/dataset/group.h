// The ranks a context spans, as the dataset layer needs them: agreement on
// an outcome, broadcast and gather of byte strings. One process (Single) in
// libsluice; MPI's communicators in libsluice_mpi (src/mpi/mpi_context.cc),
// so that the core library never needs mpi.h.
#ifndef SLUICE_DATASET_GROUP_H_
#define SLUICE_DATASET_GROUP_H_

#include <memory>
#include <string>
#include <vector>

#include "sluice/dataset.h"
#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {
namespace dataset {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The ranks sharing this rank's node (MPI_COMM_TYPE_SHARED): the node's
  // index among the nodes (ordered by their lowest rank), how many nodes
  // there are, the node's leader (its lowest rank) and how many ranks it
  // has. One process: node 0 of 1, led by rank 0.
  virtual int node() const = 0;
  virtual int nodes() const = 0;
  virtual int node_leader() const = 0;
  virtual int node_size() const = 0;
  // Collective over the node: the leader's *data to the node's ranks.
  virtual Status NodeBroadcast(std::string* data) = 0;
  // Collective over the node: returns once every rank of the node called.
  virtual Status NodeBarrier() = 0;
  // Collective: every rank passes its own outcome. OK on every rank when
  // every rank's is OK; otherwise every rank gets the lowest failing rank's
  // code, with a message "WHAT failed on rank R: its message".
  virtual Status Agree(const Status& local, const std::string& what) = 0;
  // Collective: *flag becomes true on every rank when it is on any.
  virtual Status AnyTrue(bool* flag) = 0;
  // Collective: root's *data to every rank.
  virtual Status Broadcast(std::string* data, int root) = 0;
  // Collective: every rank's `mine`; on root, *all gets size() strings in
  // rank order (untouched elsewhere).
  virtual Status Gather(const std::string& mine,
                        std::vector<std::string>* all, int root) = 0;
};

// One process: rank 0 of 1.
std::unique_ptr<Group> NewSingleGroup();

// Context::InitSingle and mpi::InitContext: reads the configuration on rank
// 0 and hands it to every rank, opens this rank's store, and reclaims the
// space of ids that were never committed. Collective over `group`.
// `settings` (may be null): variables set by the API before the file and
// the environment are read (rank 0's count).
SLUICE_EXPORT Status InitContext(std::unique_ptr<Group> group,
                                 const std::string& name,
                                 const std::string& config_file,
                                 std::unique_ptr<Context>* out,
                                 const Config* settings = nullptr);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_GROUP_H_
