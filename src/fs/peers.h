// What a writer sees of the other writers of its file system: their
// stores, opened read-only when first needed (snapshot reads: without
// waiting for, or holding up, a writer that has its store open) and
// reopened once their writer has made something durable since (a close,
// sync or barrier moves its barrier record). A writer's file system
// merges its own store with these (file_system.cc, docs/ARCHITECTURE.md).
#ifndef SLUICE_FS_PEERS_H_
#define SLUICE_FS_PEERS_H_

#include <sys/stat.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/fs_store.h"
#include "sluice/fs.h"

namespace sluice {
namespace fs {

// Another writer's record of a path, and the store that holds it (kept
// open while referred to).
struct PeerPart {
  std::shared_ptr<FsStore> store;
  Inode inode;
};

class Peers {
 public:
  Peers(const StoreOptions& options, std::string root, int self);

  // The records of `path` (normalised) in every other writer's store that
  // holds it, in writer order. A store that cannot be opened (a LevelDB
  // store while its writer has it open: Busy) is an error naming it.
  Status Find(const std::string& path, std::vector<PeerPart>* parts);
  // True when another writer's store exists under the root.
  Status Any(bool* any);
  // Adds the entries of directory `path` in every other writer's store.
  Status List(const std::string& path, std::map<std::string, bool>* names);
  // Lets go of writer `writer`'s store (before it is opened to be written).
  void Drop(int writer);
  // Lets go of every store; later calls find none.
  void Close();

 private:
  struct Peer {
    std::shared_ptr<FsStore> store;
    std::string stamp;  // its barrier record, when opened
  };
  Status RefreshLocked();

  const StoreOptions options_;
  const std::string root_;
  const int self_;
  std::mutex mu_;
  std::map<int, Peer> peers_;  // GUARDED_BY(mu_)
  bool closed_ = false;        // GUARDED_BY(mu_)
};

// A writer's file system over its store at `dir`; with a `root`, it also
// reads the other writers' stores there and acts on them (file_system.cc).
Status OpenWriterFs(const FsOptions& options, const std::string& dir,
                    int writer, const std::string& root,
                    std::unique_ptr<FileSystem>* out);

// Changes other writers' parts of a file: opens writers `writers`' stores
// to be written, each as that writer (none waits: a store another process
// has open is Busy, and then no store is changed), runs `op` on each, and
// closes them (a barrier each). `peers` lets go of its own views of them
// first. The changes of several stores are not one atomic update: a crash
// between them leaves some done.
Status ForPeerWriters(const FsOptions& options, const std::string& root,
                      Peers* peers, const std::vector<int>& writers,
                      const std::function<Status(int, FileSystem*)>& op);

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_PEERS_H_
