// Contexts over an MPI communicator: the dataset layer's Group (agreement,
// broadcast, gather) on a duplicate of the application's communicator, so
// that Sluice's messages never meet the application's.
#include <algorithm>
#include <string>
#include <vector>

#include "dataset/group.h"
#include "mpi/agree.h"
#include "sluice/mpi.h"

namespace sluice {
namespace mpi {
namespace {

// root's *data to every rank of comm, in pieces (a count is an int).
Status BroadcastString(MPI_Comm comm, std::string* data, int root) {
  unsigned long long len = data->size();
  if (MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, root, comm) != MPI_SUCCESS) {
    return Status::IOError("MPI_Bcast failed");
  }
  data->resize(len);
  for (unsigned long long at = 0; at < len;) {
    const int n =
        static_cast<int>(std::min<unsigned long long>(len - at, 1u << 30));
    if (MPI_Bcast(&(*data)[at], n, MPI_CHAR, root, comm) != MPI_SUCCESS) {
      return Status::IOError("MPI_Bcast failed");
    }
    at += n;
  }
  return Status::OK();
}

}  // namespace

Status Agree(MPI_Comm comm, const Status& local, const std::string& what) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // The lowest failing rank, or `size` if every rank succeeded.
  int mine = local.ok() ? size : rank;
  int first = size;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
    return Status::IOError(what + ": MPI_Allreduce failed");
  }
  if (first == size) return Status::OK();
  // The failing rank tells every rank its code and message.
  int code = static_cast<int>(local.code());
  std::string msg(local.message());
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  Status s = BroadcastString(comm, &msg, first);
  if (!s.ok()) return s;
  return Status(static_cast<Code>(code),
                what + " failed on rank " + std::to_string(first) + ": " + msg);
}

namespace {

class MpiGroup : public dataset::Group {
 public:
  explicit MpiGroup(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
    MPI_Comm_free(&comm_);
  }

  // The node communicator (the ranks that share memory with this one) and
  // the node's place among the nodes. Collective over the communicator.
  Status FindNodes() {
    if (MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_,
                            MPI_INFO_NULL, &node_comm_) != MPI_SUCCESS) {
      return Status::IOError("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) "
                             "failed");
    }
    int node_rank = 0;
    MPI_Comm_rank(node_comm_, &node_rank);
    MPI_Comm_size(node_comm_, &node_size_);
    // Leaders (each node's lowest rank) number the nodes in rank order.
    MPI_Comm leaders = MPI_COMM_NULL;
    if (MPI_Comm_split(comm_, node_rank == 0 ? 0 : MPI_UNDEFINED, rank_,
                       &leaders) != MPI_SUCCESS) {
      return Status::IOError("MPI_Comm_split of the node leaders failed");
    }
    int mine[3] = {0, 0, rank_};  // node, nodes, leader
    if (leaders != MPI_COMM_NULL) {
      MPI_Comm_rank(leaders, &mine[0]);
      MPI_Comm_size(leaders, &mine[1]);
      MPI_Comm_free(&leaders);
    }
    if (MPI_Bcast(mine, 3, MPI_INT, 0, node_comm_) != MPI_SUCCESS) {
      return Status::IOError("MPI_Bcast on the node failed");
    }
    node_ = mine[0];
    nodes_ = mine[1];
    node_leader_ = mine[2];
    return Status::OK();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node() const override { return node_; }
  int nodes() const override { return nodes_; }
  int node_leader() const override { return node_leader_; }
  int node_size() const override { return node_size_; }

  Status NodeBroadcast(std::string* data) override {
    return BroadcastString(node_comm_, data, 0);
  }
  Status NodeBarrier() override {
    return MPI_Barrier(node_comm_) == MPI_SUCCESS
               ? Status::OK()
               : Status::IOError("MPI_Barrier on the node failed");
  }

  Status Agree(const Status& local, const std::string& what) override {
    return mpi::Agree(comm_, local, what);
  }

  Status AnyTrue(bool* flag) override {
    int mine = *flag ? 1 : 0, any = 0;
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, comm_) !=
        MPI_SUCCESS) {
      return Status::IOError("MPI_Allreduce failed");
    }
    *flag = any != 0;
    return Status::OK();
  }

  Status Broadcast(std::string* data, int root) override {
    return BroadcastString(comm_, data, root);
  }

  Status Gather(const std::string& mine, std::vector<std::string>* all,
                int root) override {
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank_ == root ? size_ : 0);
    if (MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, comm_) !=
        MPI_SUCCESS) {
      return Status::IOError("MPI_Gather failed");
    }
    std::vector<int> displs(lens.size());
    std::string buf;
    if (rank_ == root) {
      long long total = 0;
      for (int i = 0; i < size_; ++i) {
        displs[i] = static_cast<int>(total);
        total += lens[i];
      }
      buf.resize(static_cast<size_t>(total));
    }
    if (MPI_Gatherv(mine.data(), len, MPI_CHAR, &buf[0], lens.data(),
                    displs.data(), MPI_CHAR, root, comm_) != MPI_SUCCESS) {
      return Status::IOError("MPI_Gatherv failed");
    }
    if (rank_ == root) {
      all->clear();
      for (int i = 0; i < size_; ++i) {
        all->push_back(buf.substr(displs[i], lens[i]));
      }
    }
    return Status::OK();
  }

 private:
  MPI_Comm comm_;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  int node_ = 0, nodes_ = 1, node_leader_ = 0, node_size_ = 1;
};

}  // namespace

namespace {

Status InitOver(MPI_Comm comm, const std::string& name,
                const std::string& config_file, const Config* settings,
                std::unique_ptr<Context>* out) {
  out->reset();
  MPI_Comm dup;
  if (MPI_Comm_dup(comm, &dup) != MPI_SUCCESS) {
    return Status::IOError("MPI_Comm_dup failed");
  }
  auto group = std::make_unique<MpiGroup>(dup);
  Status s = group->FindNodes();
  if (!s.ok()) return s;
  return dataset::InitContext(std::move(group), name, config_file, out,
                              settings);
}

}  // namespace

Status InitContext(MPI_Comm comm, const std::string& name,
                   const std::string& config_file,
                   std::unique_ptr<Context>* out) {
  return InitOver(comm, name, config_file, nullptr, out);
}

Status InitContext(MPI_Comm comm, const std::string& name,
                   const Config& settings, std::unique_ptr<Context>* out) {
  return InitOver(comm, name, "", &settings, out);
}

}  // namespace mpi
}  // namespace sluice
