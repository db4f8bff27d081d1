// Read-only access to a context's directory, for tools (the `sluice` tool's
// ls, cat and export of dataset ids): a Context that opens no store for
// writing, creates nothing and reclaims nothing, so it may be used while a
// job holds the context; and the listing of every id the context holds,
// torn ones (data in the stores without a commit record) included.
//
// Everything here is local (a single-process context); what it reads goes
// through the context's own read path (Context::OpenDataset for reading,
// Dataset::OpenElement, Element::Read), so ids are read as a restart reads
// them, every byte checked.
//
// Thread-safety: as sluice/dataset.h.
#ifndef SLUICE_DATASET_READ_ONLY_H_
#define SLUICE_DATASET_READ_ONLY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/dataset.h"
#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {
namespace dataset {

// Opens the context in directory `dir` (DATA_ROOT/NAME, as a job made it:
// it holds commit/) for reading only. Its configuration is context NAME's
// (the last component of `dir`, symbolic links resolved), from the SLUICE_*
// environment and `config_file` (may be empty); data_roots is not used:
// `dir` is the context. OpenDataset for reading, ListIds and ListDatasets
// work as on any context: a reader opens the stores it reads read-only,
// with snapshot reads (a RocksDB store is read while its writer has it
// open, as the writer last made it durable; a LevelDB store is Busy
// then). OpenDataset for writing and UnlinkId are InvalidArgument. NotFound
// when `dir` is missing or holds no commit/ directory.
SLUICE_EXPORT Status OpenContextReadOnly(const std::string& dir,
                                         const std::string& config_file,
                                         std::unique_ptr<Context>* out);

// Whether a context opened read-only.
SLUICE_EXPORT bool IsReadOnly(Context* ctx);

enum class StoredState : int {
  kCommitted = 0,
  // Found without a commit record and removed (IdState::kReclaimed).
  kReclaimed = 1,
  // Data in the stores without a commit record: a job killed before its
  // commit, a close that failed, or an id a running job is writing now.
  // Never readable; the next context open (read-write) reclaims it.
  kTorn = 2,
};

struct StoredId {
  int64_t id = 0;
  StoredState state = StoredState::kCommitted;
  // Committed: the data of every element (the record's sizes). Torn: the
  // bytes its files hold in the stores (what reclaiming it gives back).
  uint64_t bytes = 0;
  int64_t commit_time_ns = 0;  // committed or reclaimed; 0 when torn
  int ranks = 0;               // committed: ranks that wrote it
  int writers = 0;             // committed: stores in the record; torn:
                               // stores holding data of it
};

// Every id of dataset `dataset` (every dataset when empty), ascending per
// dataset, as *out[dataset]: the committed and reclaimed ids of the commit
// directory and the torn ids found by listing every store of the context
// read-only (snapshot reads). A store that cannot be read is reported in
// *unreadable (naming it) and the others listed; torn ids held only there
// are then missing. The stores are listed before the records, so an id
// committed meanwhile shows as committed. Errors of the commit directory
// are returned. Local.
SLUICE_EXPORT Status ListStoredIds(
    Context* ctx, const std::string& dataset,
    std::map<std::string, std::vector<StoredId>>* out,
    std::vector<Status>* unreadable);

struct ElementInfo {
  std::string name;
  ElementKind kind = ElementKind::kShared;
  int rank = -1;      // unique: its rank; shared: -1
  uint64_t size = 0;  // the committed size
  int writers = 0;    // stores holding parts of it
};

// The elements of id `ds` (opened for reading), from its commit record:
// in the record's order (by name; shared before unique of one name).
SLUICE_EXPORT Status ListElementInfo(Dataset* ds,
                                     std::vector<ElementInfo>* out);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_READ_ONLY_H_
