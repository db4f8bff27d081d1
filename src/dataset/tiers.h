// A context's data roots (data_roots): the root chosen at init, the copies
// of commit records a node-local root needs, the drains of committed ids
// to the next root, and where an id is read from.
#ifndef SLUICE_DATASET_TIERS_H_
#define SLUICE_DATASET_TIERS_H_

#include <cstdint>
#include <set>
#include <string>

#include "dataset/internal.h"

namespace sluice {
namespace dataset {

// Init: splits data_roots into c->roots and picks the first root every
// rank can write to (it exists or can be made, and takes a small file
// durably); a root skipped is reported on stderr with why. Sets data_root,
// root and commit_dir. Collective.
// Roots before `first` are not tried.
Status ChooseRoot(ContextImpl* c, int first = 0);

// Init, once the stores are open and uncommitted ids reclaimed: on a job
// of several nodes, every node's copy of the commit records (a node-local
// root holds the records of the ids its stores hold parts of); then the
// drain queue, and the drains of committed ids of this process's store
// that were not finished (a job killed mid-drain). Collective.
Status StartTiers(ContextImpl* c);

// Dataset::Close, once id `id` is committed (`record` its record, on rank
// 0): on a job of several nodes, each node's leader writes the record into
// its commit directory unless it is there (a shared root); the drain of
// the id is queued as stage_mode says (auto, immediate) when this
// process's store holds its parts (in dataset mode `mode`); ids of the
// dataset beyond keep_last on the context's root go (only those already
// drained when a drain is due). The id is committed whatever happens
// here: a failure is reported on stderr, and the next context repairs
// it (records are copied at init, old ids go at a later commit).
// Collective.
// `root` is the data root that holds the id (the context's, or one this
// id fell back to).
void AfterCommit(ContextImpl* c, std::string record,
                 const std::string& dataset, int64_t id, int mode, int root);

// Fini: queues the end_of_job drains, waits for every drain (progress on
// stderr with SLUICE_PROGRESS=1), stops the queue. With `wait` false (a
// destructor), stops the drains in flight instead (they resume later).
Status FinishTiers(ContextImpl* c, bool wait);

// OpenDataset for reading, on every rank: the stores each rank sees on
// the context's root, joined on rank 0 (collective); then, on rank 0, the
// record of the id to open (kDatasetIdHighest, kDatasetIdNewest or an id)
// among those complete on the context's root (a record, and every store
// it names seen by some rank) or drained to a later root, prefixed by the
// root the id is read from as drained, the root of its drained copy and
// the root of its record and stores (4 bytes each, -1: none).
Status VisibleWriters(ContextImpl* c, std::set<int>* visible);
// Ids in `passed` are not candidates.
Status FindReadable(ContextImpl* c, const std::string& name, int64_t id,
                    const std::set<int>& visible, std::string* out,
                    const std::set<int64_t>& passed);
// Whether this rank's own store, if the record of an id on root `root`
// names it as holding parts, holds the id's directory (a store made anew
// for a rank of a lost node does not). Local.
bool HoldsItsParts(ContextImpl* c, const CommitRecord& rec, int root);

// UnlinkId on rank 0: removes the drained copies of the id on every root
// (index first), then its records on every root (the context's last);
// *roots lists the roots that held a record ("K\n" each). NotFound when
// no root holds the id. Local.
Status UnlinkEverywhere(ContextImpl* c, const std::string& dataset,
                        int64_t id, std::string* roots);
// UnlinkId on every rank after it: a node leader's copies of the records
// on `roots` (node-local roots). Local.
Status UnlinkCopies(ContextImpl* c, const std::string& dataset, int64_t id,
                    const std::string& roots);

}  // namespace dataset
}  // namespace sluice

#endif  // SLUICE_DATASET_TIERS_H_
