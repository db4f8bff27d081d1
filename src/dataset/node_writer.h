// The node writer of dataset mode file_per_node: one store per node,
// written by the node's leader (its lowest rank) for every rank of the
// node. The leader serves the other ranks' parts on a Unix socket of the
// abstract namespace (which stays within the node's network namespace and
// leaves no file behind) from one thread per rank; a rank's PartSink over
// it sends its writes there.
//
// Protocol (little-endian, one connection per rank, requests in order):
//   request: magic "SLNW" u32 | op u32 | handle u64 | offset u64 |
//            path length u32 | 0 u32 | data length u64 | path | data
//   reply (every op but write): code i32 | flags u32 (1 checksum valid,
//            2 complete) | handle u64 | size u64 | checksum u64 |
//            message length u32 | message
// ops: hello (data: the token the leader handed out over MPI; anything
// else first, or a peer of another user, and the leader shuts the
// connection down), mkdirs, create (-> handle), write
// (no reply: its error is kept and returned by the file's close), close
// (-> size, checksum). A write carries at most kMaxNodeWrite bytes.
//
// Thread-safety: a NodeServer's Stop and destructor may run from any one
// thread. A client sink is thread-safe; its requests are serialised on its
// connection.
#ifndef SLUICE_DATASET_NODE_WRITER_H_
#define SLUICE_DATASET_NODE_WRITER_H_

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dataset/part_sink.h"
#include "sluice/fs.h"
#include "sluice/status.h"

namespace sluice {
namespace dataset {

// The largest write a request carries (a larger one is split), and so the
// buffer the leader keeps per rank of its node.
constexpr size_t kMaxNodeWrite = 1u << 20;

class NodeServer {
 public:
  // Serves writes into `fs` (not owned: it must outlive Stop) for at most
  // `clients` connections of processes of this user. *address is what
  // ConnectNodeWriter needs (the socket's name and the token).
  static Status Start(FileSystem* fs, int clients,
                      std::unique_ptr<NodeServer>* out, std::string* address);
  ~NodeServer();
  // Ends every connection (files still open are closed, without a
  // barrier: their id does not commit) and joins the threads. Idempotent.
  void Stop();

 private:
  NodeServer(FileSystem* fs, int clients, int listen_fd, std::string token);
  void Accept();
  void Serve(int fd);

  FileSystem* const fs_;
  const int clients_;
  const int listen_fd_;
  const std::string token_;
  std::thread acceptor_;
  std::mutex mu_;
  bool stopping_ = false;                            // GUARDED_BY(mu_)
  std::vector<std::pair<int, std::thread>> conns_;  // GUARDED_BY(mu_)
};

// A sink whose parts the node's leader writes. `leader` (its rank) is for
// messages.
Status ConnectNodeWriter(const std::string& address, int leader,
                         std::unique_ptr<PartSink>* out);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_NODE_WRITER_H_
