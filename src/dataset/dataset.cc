// Dataset ids and their elements: opening, the atomic commit, reading
// through the commit record's index, non-blocking requests
// (sluice/dataset.h).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "dataset/internal.h"
#include "dataset/tiers.h"
#include "util/coding.h"
#include "util/posix.h"

namespace sluice {

using dataset::CheckName;
using dataset::CommitRecord;
using dataset::ElementRecord;
using dataset::Group;
using dataset::NowNs;
using dataset::PartRecord;

namespace dataset {

std::string IdText(const std::string& name, int64_t id) {
  return "dataset " + name + " id " + std::to_string(id);
}

Status CheckStrided(uint64_t offset, size_t count, size_t block,
                    uint64_t stride) {
  if (count > 0 && block > 0 && stride < block) {
    return Status::InvalidArgument("stride " + std::to_string(stride) +
                                   " is smaller than the block " +
                                   std::to_string(block) +
                                   ": the blocks would overlap");
  }
  if (count > 0 && block > SIZE_MAX / count) {
    return Status::InvalidArgument("count * block overflows");
  }
  // The last block's end, within the largest element offset (2^62).
  constexpr uint64_t kMax = 1ull << 62;
  if (count > 0 && block > 0 &&
      (offset > kMax || (count - 1) > (kMax - offset) / stride ||
       block > kMax - offset - (count - 1) * stride)) {
    return Status::InvalidArgument("strided blocks end past offset 2^62");
  }
  return Status::OK();
}

}  // namespace dataset

using dataset::IdText;

namespace {

std::string Rate(uint64_t bytes, uint64_t ns) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.1f MiB/s",
           ns ? bytes / 1048576.0 / (ns / 1e9) : 0.0);
  return buf;
}

}  // namespace

// ---- Context::OpenDataset ------------------------------------------------

Status Context::OpenDataset(const std::string& name, int64_t id, int flags,
                            std::unique_ptr<Dataset>* out) {
  out->reset();
  ContextImpl* c = impl_.get();
  Group* g = c->group.get();
  const uint64_t t0 = NowNs();
  const bool write = flags == kDatasetWrite;
  Status s = CheckName(name, "dataset name");
  if (s.ok() && flags != kDatasetWrite && flags != kDatasetRead) {
    s = Status::InvalidArgument("open a dataset to read or to write");
  }
  if (s.ok() && write && id < 0) {
    s = Status::InvalidArgument("a dataset id to write must be >= 0, not " +
                                std::to_string(id));
  }
  if (s.ok() && write && c->read_only) {
    s = Status::InvalidArgument("context " + c->name + " is open read-only");
  }
  if (s.ok() && !write && id < kDatasetIdNewest) {
    s = Status::InvalidArgument("no dataset id " + std::to_string(id));
  }
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (s.ok() && c->finished) {
      s = Status::InvalidArgument("context " + c->name + " has ended");
    }
  }
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (s.ok() && write && c->writing.count({name, id})) {
      s = Status::InvalidArgument(IdText(name, id) +
                                  " is already open for writing in context " +
                                  c->name);
    }
  }
  auto d = std::make_shared<DatasetImpl>();
  d->ctx = impl_;
  d->name = name;
  d->write = write;
  d->open_ns = dataset::WallNs();
  d->open_mono_ns = t0;
  std::string record;
  // Where the parts go: rank 0's setting, so that every rank agrees.
  std::string mode = c->Get("dataset_mode", name).value;
  // Reading: which stores some rank sees (a node-local root shows each
  // node its own).
  std::set<int> visible;
  if (!write) {
    Status v = g->Agree(s, "opening " + IdText(name, id));
    if (v.ok()) v = dataset::VisibleWriters(c, &visible);
    if (!v.ok()) return v;
  }
  if (s.ok() && g->rank() == 0) {
    if (write) {
      // Committed on any root, or drained to one: unlink it first.
      for (size_t k = 0; s.ok() && k < c->roots.size(); ++k) {
        const std::string commit =
            posix::JoinPath(c->RootDir(static_cast<int>(k)), "commit");
        for (const std::string& n :
             {dataset::RecordName(name, id), tier::IndexName(name, id)}) {
          posix::PathKind kind;
          Status p = posix::Probe(posix::JoinPath(commit, n), &kind);
          if (p.ok() && kind != posix::PathKind::kMissing) {
            s = Status::AlreadyExists(
                IdText(name, id) + " is already committed (" +
                posix::JoinPath(commit, n) + "; unlink it first)");
          } else if (!p.ok() && static_cast<int>(k) == c->root_index) {
            s = p;
          }
          if (!s.ok()) break;
        }
      }
    } else {
      s = dataset::FindReadable(c, name, id, visible, &record, {});
    }
  }
  s = g->Agree(s, "opening " + IdText(name, id));
  if (!s.ok()) return s;
  if (write) {
    d->id = id;
    d->root_k = c->root_index;
    d->dir = "/" + name + "/" + std::to_string(id);
    s = g->Broadcast(&mode, 0);
    d->mode = mode == "file_per_node" ? dataset::kModeFilePerNode
                                      : dataset::kModeBasic;
    // The store that takes the parts: this rank's, or its node leader's.
    const bool holder = c->HoldsParts(d->mode);
    if (s.ok() && holder) s = c->OwnStore();
    // Data of this id from a close that failed: not committed, so not
    // anyone's; the id starts empty.
    if (s.ok() && c->fs) {
      FileInfo info;
      s = c->fs->Stat(d->dir, &info);
      if (s.ok()) s = dataset::RemoveFsTree(c->fs.get(), d->dir);
      if (s.IsNotFound()) s = Status::OK();
    }
    if (s.ok()) s = c->Sink(d->mode, &d->sink);
    if (s.ok() && holder) s = d->sink->MakeDirs(d->dir);
    s = g->Agree(s, "creating " + IdText(name, id));
    if (!s.ok()) return s;
  } else {
    // Ids found in a store of the context's root that no longer holds
    // them (a store made anew for a rank of a lost node) are passed over.
    std::set<int64_t> passed;
    for (;;) {
      s = g->Broadcast(&record, 0);
      if (s.ok() && record.size() < 12) {
        s = Status::Corruption("malformed record of " + IdText(name, id));
      }
      if (s.ok()) {
        // The root it is read from as drained, that of its drained copy
        // (-1: none), and the root of its stores.
        const int from = static_cast<int32_t>(DecodeFixed32(record.data()));
        d->drained_root =
            static_cast<int32_t>(DecodeFixed32(record.data() + 4));
        d->store_root = static_cast<int32_t>(DecodeFixed32(record.data() + 8));
        d->from_drained = from >= 0;
        if (d->from_drained) d->drained_root = from;
        s = dataset::DecodeRecord(std::string_view(record).substr(12),
                                  "of " + IdText(name, id), &d->record);
      }
      if (!s.ok()) return s;
      bool lacking = !d->from_drained &&
                     !dataset::HoldsItsParts(c, d->record, d->store_root);
      s = g->AnyTrue(&lacking);
      if (!s.ok()) return s;
      if (!lacking) break;
      if (d->drained_root >= 0) {
        d->from_drained = true;  // its drained copy is whole
        break;
      }
      if (id >= 0) {
        // As FindReadable says of an id some store of which no rank sees.
        return Status::NotFound(
            IdText(name, id) + " is incomplete: a store that held parts of "
            "it was made anew (its node was lost), and no data root holds "
            "a drained copy");
      }
      passed.insert(d->record.id);
      if (g->rank() == 0) {
        s = dataset::FindReadable(c, name, id, visible, &record, passed);
      }
      s = g->Agree(s, "opening " + IdText(name, id));
      if (!s.ok()) return s;
    }
    d->id = d->record.id;
    d->dir = "/" + name + "/" + std::to_string(d->id);
  }
  {
    std::lock_guard<std::mutex> lock(c->mu);
    ++c->open_datasets;
    if (write) c->writing.insert({name, id});
  }
  d->open.Add(0, NowNs() - t0);
  out->reset(new Dataset(std::move(d)));
  return Status::OK();
}

// ---- DatasetImpl -----------------------------------------------------------

Status DatasetImpl::Store(int w, std::shared_ptr<fs::FsStore>* out) {
  std::lock_guard<std::mutex> lock(stores_mu);
  auto it = stores.find(w);
  if (it != stores.end()) {
    *out = it->second;
    return Status::OK();
  }
  StoreOptions so = ctx->fs_options.store;
  so.read_only = true;
  // The writers of this job keep their stores open for the context's
  // lifetime; a committed id is durable, which is what a snapshot sees.
  so.snapshot_reads = true;
  so.create_if_missing = false;
  std::unique_ptr<fs::FsStore> st;
  const std::string path =
      store_root == ctx->root_index || ctx->roots.empty()
          ? ctx->StorePath(w)
          : fs::WriterStorePath(ctx->RootDir(store_root), w);
  Status s = fs::FsStore::Open(so, path, w, &st);
  if (s.IsBusy()) {
    return Status::Busy(std::string(s.message()) +
                        " (a LevelDB store cannot be read while its writer "
                        "has it open; use RocksDB to read ids while writing)");
  }
  if (!s.ok()) return s;
  *out = std::shared_ptr<fs::FsStore>(std::move(st));
  stores[w] = *out;
  return Status::OK();
}

Status DatasetImpl::DrainedCopy(std::shared_ptr<tier::DrainedId>* out) {
  std::lock_guard<std::mutex> lock(stores_mu);
  if (!drained) {
    ContextImpl* c = ctx.get();
    // The root it was found drained to at open, else any later root (a
    // drain may have ended since).
    Status s = Status::NotFound(IdText(name, id) + " has no drained copy");
    for (int k = drained_root >= 0 ? drained_root : c->root_index + 1;
         k < static_cast<int>(c->roots.size()); ++k) {
      std::unique_ptr<tier::DrainedId> d;
      s = tier::DrainedId::Open(c->RootDir(k), name, id, &d);
      if (s.ok()) {
        drained = std::move(d);
        drained_root = k;
        break;
      }
      if (!s.IsNotFound()) return s;
    }
    if (!s.ok()) return s;
  }
  *out = drained;
  return Status::OK();
}

DatasetStats DatasetImpl::Stats() const {
  DatasetStats st;
  st.open = open.Get();
  st.write = write_c.Get();
  st.sync = sync.Get();
  st.commit = commit.Get();
  st.read = read.Get();
  st.close = close.Get();
  st.root = ctx->data_root;
  if (write && !ctx->roots.empty()) {
    // Where the id went: the context's root, or one it fell back to.
    st.root = ctx->roots[static_cast<size_t>(root_k)];
  }
  if (!write) {
    std::lock_guard<std::mutex> lock(stores_mu);
    if (from_drained && drained_root >= 0) {
      st.read_root = ctx->roots[static_cast<size_t>(drained_root)];
    } else if (!ctx->roots.empty()) {
      st.read_root = ctx->roots[static_cast<size_t>(store_root)];
    } else {
      st.read_root = ctx->data_root;
    }
    st.fallback_reads = fallback_reads.load();
  }
  return st;
}

Status DatasetImpl::CloseElements(std::vector<ElementRecord>* index) {
  std::vector<std::shared_ptr<ElementImpl>> els;
  {
    std::lock_guard<std::mutex> lock(mu);
    els = elements;
  }
  Status s;
  for (auto& e : els) {
    Status c = e->Close();
    if (s.ok()) s = c;
    if (!index || !c.ok()) continue;
    std::lock_guard<std::mutex> lock(e->mu);
    ElementRecord r;
    r.name = e->name;
    r.kind = e->kind;
    r.rank = e->kind == ElementKind::kUnique ? e->rank : -1;
    r.size = e->part.size;
    if (!e->ranges.empty() || e->kind == ElementKind::kUnique) {
      r.parts.push_back(e->part);
    }
    // A rank that opened a shared element and wrote none of it holds no
    // part; the element is listed all the same.
    index->push_back(std::move(r));
  }
  return s;
}

// ---- Dataset -----------------------------------------------------------------

Dataset::Dataset(std::shared_ptr<DatasetImpl> impl) : impl_(std::move(impl)) {}

Dataset::~Dataset() {
  DatasetImpl* d = impl_.get();
  bool open;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    open = !d->closed;
    d->closed = true;
  }
  // Not closed: abandoned without a commit (a destructor cannot make a
  // collective call). Its data goes as a failed close's does.
  if (open) {
    d->CloseElements(nullptr);
    std::lock_guard<std::mutex> lock(d->ctx->mu);
    --d->ctx->open_datasets;
    if (d->write) d->ctx->writing.erase({d->name, d->id});
  }
  // Element handles may live on; they keep the dataset, not it them.
  std::lock_guard<std::mutex> lock(d->mu);
  d->elements.clear();
}

const std::string& Dataset::name() const { return impl_->name; }
int64_t Dataset::id() const { return impl_->id; }
bool Dataset::writable() const { return impl_->write; }
DatasetStats Dataset::stats() const { return impl_->Stats(); }

Status Dataset::OpenElement(const std::string& name, ElementKind kind,
                            std::unique_ptr<Element>* out, int rank) {
  out->reset();
  DatasetImpl* d = impl_.get();
  ContextImpl* c = d->ctx.get();
  const int me = c->group->rank();
  Status s = CheckName(name, "element name");
  if (!s.ok()) return s;
  if (kind != ElementKind::kShared && kind != ElementKind::kUnique) {
    return Status::InvalidArgument("unknown element kind");
  }
  if (rank != -1 && (kind != ElementKind::kUnique || d->write || rank < 0)) {
    return Status::InvalidArgument(
        "only an element of kind unique, opened for reading, may name "
        "another rank");
  }
  const int owner = rank == -1 ? me : rank;
  // Reading, the parts' paths come from the record (ElementImpl::Read);
  // this one names the element among the dataset's.
  const std::string path = dataset::PartPath(
      d->dir, d->write ? d->mode : dataset::kModeBasic, kind, name, owner);
  if (c->Finished()) {
    return Status::InvalidArgument("context " + c->name + " has ended");
  }
  for (;;) {
    // Writing: shared with writes, before the dataset's mutex (the order a
    // move of the parts to another root takes them in).
    std::shared_lock<std::shared_mutex> sw(d->switch_mu, std::defer_lock);
    if (d->write) sw.lock();
    std::unique_lock<std::mutex> lock(d->mu);
    if (d->closed) {
      return Status::InvalidArgument(IdText(d->name, d->id) + " is closed");
    }
    std::shared_ptr<ElementImpl> e;
    for (auto& x : d->elements) {
      if (x->path == path) e = x;
    }
    if (e) {
      std::lock_guard<std::mutex> elock(e->mu);
      if (!e->closed) {
        out->reset(new Element(e));
        return Status::OK();
      }
    }
    if (!e) {
      e = std::make_shared<ElementImpl>();
      e->ds = impl_;
      e->name = name;
      e->kind = kind;
      e->rank = owner;
      e->path = path;
      e->write = d->write;
    }
    if (d->write) {
      std::unique_ptr<dataset::PartFile> f;
      const int at = d->root_k;
      s = d->sink->MakeDirs(path.substr(0, path.rfind('/')));
      if (s.ok()) s = d->sink->Create(path, &f);
      if (!s.ok() && dataset::RootFailed(s)) {
        lock.unlock();
        sw.unlock();
        s = d->FallBack(s, at);  // then again, on the next root
        if (s.ok()) continue;
      }
      if (!s.ok()) return s;
      std::lock_guard<std::mutex> elock(e->mu);
      e->file = std::move(f);
      e->closed = false;
      e->closing = false;
    } else {
      e->rec = d->record.Find(name, kind, owner);
      if (!e->rec) {
        return Status::NotFound(
            "element " + name +
            (kind == ElementKind::kShared ? " (shared)"
                                          : " (unique, rank " +
                                                std::to_string(owner) + ")") +
            " is not in " + IdText(d->name, d->id));
      }
      std::lock_guard<std::mutex> elock(e->mu);
      e->rec_size = e->rec->size;
      e->closed = false;
      e->closing = false;
    }
    if (std::find(d->elements.begin(), d->elements.end(), e) ==
        d->elements.end()) {
      d->elements.push_back(e);
    }
    out->reset(new Element(e));
    return Status::OK();
  }
}

Status Dataset::ListElements(std::vector<std::string>* shared,
                             std::vector<std::string>* unique,
                             int rank) const {
  const DatasetImpl* d = impl_.get();
  if (d->write) {
    return Status::InvalidArgument("elements are listed from ids opened for "
                                   "reading");
  }
  const int owner = rank == -1 ? d->ctx->group->rank() : rank;
  if (shared) shared->clear();
  if (unique) unique->clear();
  for (const auto& e : d->record.elements) {
    if (e.kind == ElementKind::kShared) {
      if (shared) shared->push_back(e.name);
    } else if (e.rank == owner && unique) {
      unique->push_back(e.name);
    }
  }
  return Status::OK();
}

Status Dataset::Close() { return Close(Status::OK()); }

Status Dataset::Close(const Status& local) {
  DatasetImpl* d = impl_.get();
  ContextImpl* c = d->ctx.get();
  Group* g = c->group.get();
  {
    std::lock_guard<std::mutex> lock(d->mu);
    if (d->closed) return d->close_status;
  }
  {
    // The same on every rank: they end the context together.
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->finished) {
      return Status::InvalidArgument("context " + c->name + " has ended");
    }
  }
  {
    std::lock_guard<std::mutex> lock(d->mu);
    d->closed = true;
  }
  const uint64_t t0 = NowNs();
  const std::string what = "closing " + IdText(d->name, d->id);
  Status s;
  if (!d->write) {
    s = d->CloseElements(nullptr);
    std::lock_guard<std::mutex> lock(d->stores_mu);
    d->stores.clear();
  } else {
    std::vector<ElementRecord> index;
    s = d->CloseElements(&index);
    if (s.ok()) s = local;
    // Every rank's parts on one root: where any rank had to fall back to.
    const int was = d->root_k;
    int top = d->root_k;
    Status o = d->OneRoot(&top);
    if (s.ok()) s = o;
    if (s.ok() && d->root_k != was) {
      index.clear();
      s = d->CloseElements(&index);  // the parts as they are there
    }
    const std::string commit_dir =
        posix::JoinPath(c->RootDir(top), "commit");
    const ConfigValue fail = c->Get("test_fail_commit_rank", d->name);
    if (s.ok() && atoi(fail.value.c_str()) == g->rank() &&
        fail.value != "-1") {
      s = Status::IOError("failure injected by test_fail_commit_rank (" +
                          fail.SourceText() + ")");
    }
    // This rank's data is durable (file_per_node: once every rank of the
    // node has closed its parts, the leader makes the node's store
    // durable)...
    const uint64_t ts = NowNs();
    const bool holder = c->HoldsParts(d->mode);
    if (d->mode == dataset::kModeFilePerNode) {
      Status b = g->NodeBarrier();
      if (s.ok()) s = b;
    }
    if (s.ok() && holder) {
      FileSystem* f = nullptr;
      s = c->StoreAt(top, true, &f);
      if (s.ok()) s = f->Sync();
    }
    // ...and every rank's, or none commits. (The wait for the slowest
    // rank's data counts as sync, not as the commit's cost.)
    s = g->Agree(s, what);
    const uint64_t tc = NowNs();
    d->sync.Add(0, tc - ts);
    std::vector<std::string> all;
    if (s.ok()) {
      // Each rank's node (4 bytes) then its share of the index.
      char node[4];
      EncodeFixed32(node, static_cast<uint32_t>(g->node()));
      s = g->Gather(std::string(node, 4) + dataset::EncodeElements(index),
                    &all, 0);
    }
    Status r;
    std::string rec_bytes;  // rank 0: the record written
    if (s.ok() && g->rank() == 0) {
      CommitRecord rec;
      rec.dataset = d->name;
      rec.id = d->id;
      rec.ranks = g->size();
      rec.writers =
          d->mode == dataset::kModeFilePerNode ? g->nodes() : g->size();
      rec.mode = d->mode;
      rec.commit_time_ns = dataset::WallNs();
      rec.nodes = g->nodes();
      rec.node_of_rank.assign(all.size(), 0);
      std::vector<std::vector<ElementRecord>> ranks(all.size());
      for (size_t i = 0; i < all.size() && r.ok(); ++i) {
        if (all[i].size() < 4) {
          r = Status::Corruption("malformed element index from a rank");
          break;
        }
        const uint32_t node = DecodeFixed32(all[i].data());
        if (node >= static_cast<uint32_t>(rec.nodes)) {
          r = Status::Corruption("a rank's node number is out of range");
          break;
        }
        rec.node_of_rank[i] = static_cast<int>(node);
        r = dataset::DecodeElements(std::string_view(all[i]).substr(4),
                                    &ranks[i]);
      }
      if (r.ok()) {
        rec.elements = dataset::MergeElements(ranks);
        const std::string path =
            commit_dir + "/" + dataset::RecordName(d->name, d->id);
        posix::PathKind kind;
        r = posix::Probe(path, &kind);
        if (r.ok() && kind != posix::PathKind::kMissing) {
          r = Status::AlreadyExists(IdText(d->name, d->id) +
                                    " was committed meanwhile (" + path + ")");
        } else if (r.ok()) {
          rec_bytes = dataset::EncodeRecord(rec);
          r = posix::WriteFileAtomic(path, rec_bytes);
          if (!r.ok()) {
            // The rename may have happened before what failed (the
            // directory's fsync): a close that fails must leave no id.
            if (unlink(path.c_str()) == 0) posix::SyncDir(commit_dir);
          }
        }
      }
      if (r.ok()) {
        // The id was reclaimed once; it is committed now.
        unlink((c->commit_dir + "/" + dataset::ReclaimedName(d->name, d->id))
                   .c_str());
      }
    }
    // Every rank takes part, whatever happened to it before.
    s = g->Agree(s.ok() ? r : s, what + " (writing its commit record)");
    // The id is committed. A node-local root gets the record on every
    // node; then the drain to the next root is queued, and older ids
    // beyond keep_last go.
    if (s.ok()) {
      dataset::AfterCommit(c, rec_bytes, d->name, d->id, d->mode, top);
    }
    d->commit.Add(0, NowNs() - tc);
  }
  d->close.Add(0, NowNs() - t0);
  {
    std::lock_guard<std::mutex> lock(d->mu);
    d->close_status = s;
    d->elements.clear();  // element handles keep the dataset, not it them
  }
  const DatasetStats st = d->Stats();
  {
    std::lock_guard<std::mutex> lock(c->mu);
    --c->open_datasets;
    if (d->write) c->writing.erase({d->name, d->id});
    auto add = [](PhaseStats* t, const PhaseStats& p) {
      t->calls += p.calls;
      t->bytes += p.bytes;
      t->nanos += p.nanos;
    };
    add(&c->total.open, st.open);
    add(&c->total.write, st.write);
    add(&c->total.sync, st.sync);
    add(&c->total.commit, st.commit);
    add(&c->total.read, st.read);
    add(&c->total.close, st.close);
    char line[512];
    snprintf(line, sizeof line,
             "sluice: %s %s id %" PRId64 " (%s): open %.3f ms, write %" PRIu64
             " B in %.3f s (%s), sync %.3f ms, commit %.3f ms, read %" PRIu64
             " B in %.3f s (%s), root %s%s",
             c->name.c_str(), d->name.c_str(), d->id,
             d->write ? "write" : "read", st.open.nanos / 1e6, st.write.bytes,
             st.write.nanos / 1e9, Rate(st.write.bytes, st.write.nanos).c_str(),
             st.sync.nanos / 1e6, st.commit.nanos / 1e6, st.read.bytes, st.read.nanos / 1e9,
             Rate(st.read.bytes, st.read.nanos).c_str(), st.root.c_str(),
             s.ok() ? "" : ", FAILED");
    c->stat_lines.push_back(line);
    c->id_stats[{d->name, d->id}] = st;
    if (d->write && s.ok()) {
      const uint64_t end = NowNs();
      c->last_checkpoint[d->name] = {(end - d->open_mono_ns) / 1e9, end};
    }
  }
  return s;
}

}  // namespace sluice
