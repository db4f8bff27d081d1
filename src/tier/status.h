// What a process that is no job needs of the drain (the `sluice drain`
// tool and `sluice ls`): the ids a context directory holds and where their
// drains to the next root stand, read without changing anything; and the
// drain of an id by a process that opens the source's stores read-only.
// These are exported from libsluice for the tool; the rest of drain.h is
// the library's own.
//
// SRC is a context directory on one data root (ROOT/NAME), DST the same
// context's directory on the next root; the layout is container.h's.
//
// Thread-safety: the functions may be called from several threads at
// once; a SourceDrainer is used by one thread at a time (the progress
// counters of its DrainOptions may be read by any).
#ifndef SLUICE_TIER_STATUS_H_
#define SLUICE_TIER_STATUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sluice/export.h"
#include "sluice/options.h"
#include "sluice/status.h"
#include "tier/drain.h"

namespace sluice {
namespace tier {

// An id of a dataset.
struct IdName {
  std::string dataset;
  int64_t id = 0;
  bool operator<(const IdName& o) const {
    return dataset != o.dataset ? dataset < o.dataset : id < o.id;
  }
  bool operator==(const IdName& o) const {
    return dataset == o.dataset && id == o.id;
  }
};

// The committed ids of context directory `ctx_dir`: the commit records in
// its commit/ (not the reclaimed ones), ascending. Local.
SLUICE_EXPORT Status ListCommitted(const std::string& ctx_dir,
                                   std::vector<IdName>* out);

// The ids DST holds: published (an index in DST/commit) and being drained
// (a directory in DST/drain), each ascending. A missing DST or
// subdirectory holds none. Local.
SLUICE_EXPORT Status ListDrained(const std::string& dst_dir,
                                 std::vector<IdName>* published,
                                 std::vector<IdName>* staged);

// Whether DST holds the index of id `id` of `dataset`: the id is durable
// there. Reads only: unlike Published (drain.h), it never finishes a
// publication a drainer left half done. Local.
SLUICE_EXPORT bool HasIndex(const std::string& dst_dir,
                            const std::string& dataset, int64_t id);

// One writer of an id being drained, as DST's drain directory says now.
struct WriterStatus {
  int writer = 0;
  uint64_t bytes = 0;  // durable on DST (its journal)
  uint64_t total = 0;  // the bytes of its parts
  bool done = false;   // its done marker is there
  // A process of this machine holding its journal's lock (draining it
  // now), as /proc/locks shows; 0: none seen (a drainer on another node
  // sharing DST is not seen).
  int holder_pid = 0;
};

// Where one id stands.
struct IdStatus {
  IdName name;
  bool on_source = false;  // a commit record in SRC/commit
  bool durable = false;    // its index in DST/commit
  bool staged = false;     // a drain directory DST/drain/DATASET.ID
  uint64_t bytes = 0;      // the id's data (its record's, or its index's)
  // Staged and recorded on SRC: every writer of the record.
  std::vector<WriterStatus> writers;
  Status error;  // what could not be read of it (a damaged record, journal)
};

// Every id committed in SRC, drained to DST or being drained there,
// ascending, each with where it stands. Reads only, so it may run beside
// a job or a drainer: a journal being appended reads as far as it is
// whole. The error of one id is in its entry; errors of the directories
// themselves are returned. Local.
SLUICE_EXPORT Status DrainStatus(const std::string& src_dir,
                                 const std::string& dst_dir,
                                 std::vector<IdStatus>* out);

// Drains ids of context directory SRC to DST, opening SRC's stores
// read-only (snapshot reads) as they are first needed: what a process that
// is no job runs (`sluice drain`) to finish the drains a job left.
class SLUICE_EXPORT SourceDrainer {
 public:
  SourceDrainer(const std::string& src_dir, const std::string& dst_dir,
                const StoreOptions& options);
  ~SourceDrainer();
  SourceDrainer(const SourceDrainer&) = delete;
  SourceDrainer& operator=(const SourceDrainer&) = delete;

  // DrainId (drain.h) of every writer of the id whose store SRC holds:
  // writers another process drains now are out->busy, those whose store
  // is not in SRC (another node's local root) out->absent. A store a job
  // holds and that cannot be opened beside it (LevelDB) is Busy.
  Status Drain(const std::string& dataset, int64_t id,
               const DrainOptions& options, DrainResult* out);
  // Published (drain.h): whether the id is durable on DST, finishing a
  // publication a drainer left half done.
  Status Durable(const std::string& dataset, int64_t id, bool* durable);

 private:
  std::string src_, dst_;
  std::unique_ptr<StoreSource> source_;
};

}  // namespace tier
}  // namespace sluice

#endif  // SLUICE_TIER_STATUS_H_
