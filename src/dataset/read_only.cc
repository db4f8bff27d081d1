// Read-only contexts and the listing of every id a context holds
// (dataset/read_only.h).
#include "dataset/read_only.h"

#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <set>

#include "dataset/internal.h"
#include "fs/fs_store.h"
#include "util/posix.h"

extern char** environ;

namespace sluice {
namespace dataset {

Status OpenContextReadOnly(const std::string& dir,
                           const std::string& config_file,
                           std::unique_ptr<Context>* out) {
  out->reset();
  char real[PATH_MAX];
  if (realpath(dir.c_str(), real) == nullptr) {
    return posix::Error("no context at", dir, errno);
  }
  const std::string root = real;
  const size_t slash = root.rfind('/');
  auto c = std::make_shared<ContextImpl>();
  c->name = root.substr(slash + 1);
  c->data_root = slash == 0 ? "/" : root.substr(0, slash);
  c->root = root;
  c->commit_dir = root + "/commit";
  c->total.root = c->data_root;
  c->read_only = true;
  // One data root: the directory's; drained copies on other roots are not
  // looked for.
  c->roots = {c->data_root};
  c->root_index = 0;
  posix::PathKind kind;
  Status s = posix::Probe(c->commit_dir, &kind);
  if (s.ok() && kind != posix::PathKind::kDirectory) {
    return Status::NotFound(dir + " is not a Sluice context directory (it "
                            "has no commit/ directory)");
  }
  if (s.ok()) s = CheckName(c->name, "context name");
  if (s.ok()) s = Config::Load(c->name, config_file, environ, &c->config);
  if (s.ok()) s = c->config.ToFsOptions(&c->fs_options);
  if (!s.ok()) return s;
  c->group = NewSingleGroup();
  out->reset(new Context(std::move(c)));
  return Status::OK();
}

bool IsReadOnly(Context* ctx) { return ctx->impl()->read_only; }

namespace {

// What one store holds of a torn id.
struct Found {
  uint64_t bytes = 0;
  int writers = 0;
};
using FoundIds = std::map<std::string, std::map<int64_t, Found>>;

// The bytes the files below directory `path` (inode `ino`, reached through
// `ancestors`) hold, `depth` levels at most (an id's directory holds
// shared/ and rank.R/, and those the elements).
Status TreeBytes(fs::FsStore* st, const std::string& path, uint64_t ino,
                 std::vector<uint64_t> ancestors, int depth, uint64_t* bytes) {
  std::vector<DirEntry> entries;
  Status s = st->ListDir(ino, ancestors, path, &entries);
  ancestors.push_back(ino);
  for (const auto& e : entries) {
    if (!s.ok()) break;
    const std::string child = path + "/" + e.name;
    fs::Inode parent, inode;
    std::string leaf;
    bool exists = false;
    s = st->Resolve(child, &parent, &leaf, &inode, &exists);
    if (!s.ok() || !exists) continue;
    if (!e.is_dir) {
      *bytes += inode.allocated;
    } else if (depth > 0) {
      s = TreeBytes(st, child, inode.ino, ancestors, depth - 1, bytes);
    }
  }
  return s;
}

// Adds the ids (directories /DATASET/ID) of store `st` to *found, of
// dataset `only` (every dataset when empty).
Status ListStore(fs::FsStore* st, const std::string& only, FoundIds* found) {
  fs::Inode parent, root;
  std::string leaf;
  bool exists = false;
  std::vector<uint64_t> ancestors;
  Status s = st->Resolve("/", &parent, &leaf, &root, &exists);
  std::vector<DirEntry> datasets;
  if (s.ok()) s = st->ListDir(root.ino, ancestors, "/", &datasets);
  for (const auto& d : datasets) {
    if (!s.ok()) break;
    if (!d.is_dir || !CheckName(d.name, "dataset").ok() ||
        (!only.empty() && d.name != only)) {
      continue;
    }
    const std::string dpath = "/" + d.name;
    fs::Inode dino;
    s = st->Resolve(dpath, &parent, &leaf, &dino, &exists, &ancestors);
    std::vector<DirEntry> ids;
    if (s.ok() && exists) s = st->ListDir(dino.ino, ancestors, dpath, &ids);
    ancestors.push_back(dino.ino);
    for (const auto& i : ids) {
      if (!s.ok()) break;
      std::string ds;
      int64_t id;
      bool reclaimed;
      // The id's name as the commit directory spells it: digits only.
      if (!i.is_dir || !ParseRecordName(d.name + "." + i.name, &ds, &id,
                                        &reclaimed) ||
          reclaimed) {
        continue;
      }
      const std::string ipath = dpath + "/" + i.name;
      fs::Inode iino;
      s = st->Resolve(ipath, &parent, &leaf, &iino, &exists);
      Found& f = (*found)[d.name][id];
      ++f.writers;
      if (s.ok() && exists) {
        s = TreeBytes(st, ipath, iino.ino, ancestors, 1, &f.bytes);
      }
    }
  }
  return s;
}

// Every store of the context, opened read-only with snapshot reads (as a
// reader of ids opens them, DatasetImpl::Store), listed into *found.
void ListStores(ContextImpl* c, const std::string& only, FoundIds* found,
                std::vector<Status>* unreadable) {
  std::vector<std::string> names;
  Status s = posix::ListDir(c->root, &names);
  if (!s.ok()) {
    unreadable->push_back(s);
    return;
  }
  StoreOptions so = c->fs_options.store;
  so.read_only = true;
  so.snapshot_reads = true;
  so.create_if_missing = false;
  std::set<int> writers;
  for (const auto& n : names) {
    if (n.compare(0, 7, "writer.") == 0) writers.insert(atoi(n.c_str() + 7));
  }
  for (int w : writers) {
    std::unique_ptr<fs::FsStore> st;
    s = fs::FsStore::Open(so, c->StorePath(w), w, &st);
    if (s.IsNotFound()) continue;  // a creation that did not finish: empty
    FoundIds mine;
    if (s.ok()) s = ListStore(st.get(), only, &mine);
    st.reset();
    if (!s.ok()) {
      unreadable->push_back(Status(
          s.code(), "the torn ids of store " + c->StorePath(w) +
                        " cannot be listed: " + std::string(s.message())));
      continue;
    }
    for (const auto& [ds, ids] : mine) {
      for (const auto& [id, f] : ids) {
        Found& all = (*found)[ds][id];
        all.bytes += f.bytes;
        all.writers += f.writers;
      }
    }
  }
}

}  // namespace

Status ListStoredIds(Context* ctx, const std::string& dataset,
                     std::map<std::string, std::vector<StoredId>>* out,
                     std::vector<Status>* unreadable) {
  out->clear();
  ContextImpl* c = ctx->impl();
  Status s;
  if (!dataset.empty()) s = CheckName(dataset, "dataset name");
  if (!s.ok()) return s;
  // The stores first: an id committed after they are listed is among the
  // records, not taken for torn.
  FoundIds found;
  ListStores(c, dataset, &found, unreadable);
  std::vector<std::string> names;
  s = posix::ListDir(c->commit_dir, &names);
  if (!s.ok()) return s;
  std::set<std::string> datasets;
  for (const auto& n : names) {
    std::string ds;
    int64_t id;
    bool reclaimed;
    if (ParseRecordName(n, &ds, &id, &reclaimed) &&
        (dataset.empty() || ds == dataset)) {
      datasets.insert(ds);
    }
  }
  for (const auto& [ds, ids] : found) datasets.insert(ds);
  for (const auto& ds : datasets) {
    std::vector<DatasetIdInfo> listed;
    s = c->ListRecords(ds, &listed, nullptr);
    if (!s.ok()) return s;
    std::map<int64_t, StoredId> all;
    for (const auto& i : listed) {
      StoredId& x = all[i.id];
      x.id = i.id;
      x.state = i.state == IdState::kCommitted ? StoredState::kCommitted
                                               : StoredState::kReclaimed;
      x.bytes = i.bytes;
      x.commit_time_ns = i.commit_time_ns;
      x.ranks = i.ranks;
      x.writers = i.writers;
    }
    auto f = found.find(ds);
    if (f != found.end()) {
      for (const auto& [id, where] : f->second) {
        auto it = all.find(id);
        if (it != all.end() && it->second.state == StoredState::kCommitted) {
          continue;  // its data, committed
        }
        StoredId& x = all[id];  // new, or torn again since a reclaim
        x = StoredId();
        x.id = id;
        x.state = StoredState::kTorn;
        x.bytes = where.bytes;
        x.writers = where.writers;
      }
    }
    std::vector<StoredId>& v = (*out)[ds];
    for (auto& [id, x] : all) v.push_back(x);
  }
  return Status::OK();
}

Status ListElementInfo(Dataset* ds, std::vector<ElementInfo>* out) {
  out->clear();
  DatasetImpl* d = ds->impl();
  if (d->write) {
    return Status::InvalidArgument("elements are listed from ids opened for "
                                   "reading");
  }
  for (const auto& e : d->record.elements) {
    ElementInfo i;
    i.name = e.name;
    i.kind = e.kind;
    i.rank = e.kind == ElementKind::kUnique ? e.rank : -1;
    i.size = e.size;
    // Stores, not parts: in file_per_node mode a node's ranks share one.
    std::set<int> stores;
    for (const auto& p : e.parts) stores.insert(p.writer);
    i.writers = static_cast<int>(stores.size());
    out->push_back(i);
  }
  return Status::OK();
}

}  // namespace dataset
}  // namespace sluice
