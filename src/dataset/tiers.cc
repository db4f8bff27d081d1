// Data roots, record copies, drains and where ids are read from
// (tiers.h).
#include "dataset/tiers.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "fs/writer_fs.h"
#include "util/coding.h"
#include "util/env.h"

namespace sluice {
namespace dataset {

namespace {

bool Exists(const std::string& path) {
  posix::PathKind k;
  return posix::Probe(path, &k).ok() && k != posix::PathKind::kMissing;
}

// Writes, syncs and removes a small file in `dir`: whether the root takes
// data at all (missing and unmakeable, read-only, full, failing).
Status ProbeRoot(const std::string& dir, int rank) {
  Status s = posix::CreateDirs(posix::JoinPath(dir, "commit"));
  if (!s.ok()) return s;
  // An unnamed file (O_TMPFILE) leaves the directory as it was; a named
  // one where the file system has none.
  std::string path = dir;
  Env* env = Env::Default();
  int fd = env->Open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    path = posix::JoinPath(dir, ".probe." + std::to_string(rank) + "." +
                                    std::to_string(getpid()));
    fd = env->Open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                   0644);
  }
  if (fd < 0) return posix::Error("cannot create a file in", dir, errno);
  char block[4096] = {0};
  int err = env->WriteFull(fd, block, sizeof block, 0);
  if (err == 0 && env->Fsync(fd) != 0) err = errno;
  env->Close(fd);
  if (path != dir) env->Unlink(path.c_str());
  if (err != 0) return posix::Error("cannot write a file in", dir, err);
  return Status::OK();
}

// The index files of a root's commit directory: DATASET.ID.index.
bool ParseIndexName(const std::string& n, std::string* ds, int64_t* id) {
  const std::string suffix = ".index";
  if (n.size() <= suffix.size() ||
      n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  bool reclaimed = false;
  return ParseRecordName(n.substr(0, n.size() - suffix.size()), ds, id,
                         &reclaimed) &&
         !reclaimed;
}

// This process's store on one root (open as long as the context).
// "writer.<N>" (fs::WriterStorePath's names) -> N.
bool ParseWriterName(const std::string& n, int* w) {
  if (n.size() <= 7 || n.compare(0, 7, "writer.") != 0) return false;
  long v = 0;
  for (size_t i = 7; i < n.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(n[i])) || v > 99999999) {
      return false;
    }
    v = v * 10 + (n[i] - '0');
  }
  *w = static_cast<int>(v);
  return true;
}

class OwnSource : public tier::StoreSource {
 public:
  OwnSource(FileSystem* f, int writer) : f_(f), writer_(writer) {}
  Status Get(int writer, fs::FsStore** out) override {
    auto* w = dynamic_cast<fs::WriterFs*>(f_);
    if (writer != writer_ || !w) {
      return Status::NotFound("writer " + std::to_string(writer) +
                              " is not this process's store");
    }
    *out = w->store();
    return Status::OK();
  }

 private:
  FileSystem* f_;
  int writer_;
};

int KeepLast(ContextImpl* c, const std::string& dataset, int root) {
  const std::string v = c->Get("keep_last", dataset).value;
  std::vector<int> per;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    per.push_back(atoi(v.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  if (per.size() == 1) return per[0];
  return root < static_cast<int>(per.size()) ? per[static_cast<size_t>(root)]
                                             : 0;
}

// The drain of id `id`, which root `src` holds, to the root after it.
std::shared_ptr<DrainJob> MakeJob(ContextImpl* c, const std::string& dataset,
                                  int64_t id, int mode, int src) {
  const int dst = src + 1 < static_cast<int>(c->roots.size()) ? src + 1 : -1;
  if (dst < 0 || !c->drains || !c->HoldsParts(mode)) return nullptr;
  FileSystem* f = nullptr;
  if (!c->StoreAt(src, false, &f).ok() || !f) return nullptr;
  auto job = std::make_shared<DrainJob>();
  job->dataset = dataset;
  job->id = id;
  job->source = std::make_unique<OwnSource>(f, c->group->rank());
  job->src_dir = c->RootDir(src);
  job->dst_dir = c->RootDir(dst);
  job->dst_root = dst;
  job->dst_root_path = c->roots[static_cast<size_t>(dst)];
  job->writers = {c->group->rank()};
  job->keep_dst = KeepLast(c, dataset, dst);
  tier::ParseAggregation(c->Get("aggregation", dataset).value,
                         &job->options.aggregation);
  job->options.group = atoi(c->Get("aggregation_group", dataset).value.c_str());
  size_t bw = 0;
  ParseSize(c->Get("drain_bandwidth").value, &bw);
  // The node's cap, shared by the processes of the node that drain.
  const int drainers = mode == kModeBasic ? c->group->node_size() : 1;
  job->options.bandwidth = bw / static_cast<uint64_t>(drainers);
  if (bw > 0 && job->options.bandwidth == 0) job->options.bandwidth = 1;
  return job;
}

// Committed ids in this node's commit directory whose parts this
// process's store holds and that are not yet on the drain root, ascending.
Status Undrained(ContextImpl* c,
                 std::vector<std::pair<CommitRecord, std::string>>* out) {
  out->clear();
  const int dst = c->DrainRoot();
  if (dst < 0 || !c->fs) return Status::OK();
  std::vector<std::string> names;
  Status s = posix::ListDir(c->commit_dir, &names);
  if (!s.ok()) return s;
  // Per dataset, ids by number; an id older than one already drained
  // is not drained again (keep_last may have removed it there).
  std::map<std::string, std::vector<int64_t>> ids;
  for (const auto& n : names) {
    std::string ds;
    int64_t id;
    bool reclaimed;
    if (ParseRecordName(n, &ds, &id, &reclaimed) && !reclaimed) {
      ids[ds].push_back(id);
    }
  }
  for (auto& [ds, list] : ids) {
    std::sort(list.rbegin(), list.rend());
    for (int64_t id : list) {
      // One bad record or drain directory is reported; the others go on.
      const std::string path =
          posix::JoinPath(c->commit_dir, RecordName(ds, id));
      std::string data;
      CommitRecord rec;
      bool durable = false;
      s = posix::ReadFile(path, &data);
      if (s.IsNotFound()) continue;
      if (s.ok()) s = DecodeRecord(data, path, &rec);
      if (s.ok()) {
        s = tier::Published(c->RootDir(dst), ds, id, &durable, &data);
      }
      if (!s.ok()) {
        fprintf(stderr, "sluice: context %s: not draining %s: %s\n",
                c->name.c_str(), IdText(ds, id).c_str(), s.ToString().c_str());
        continue;
      }
      if (durable) break;  // it, and the older ones
      bool mine = false;
      for (const auto& e : rec.elements) {
        for (const auto& p : e.parts) mine |= p.writer == c->group->rank();
      }
      // A store made anew (its node lost) has nothing of the id to drain.
      if (mine && !HoldsItsParts(c, rec, c->root_index)) {
        fprintf(stderr,
                "sluice: context %s: not draining %s: store %s holds "
                "nothing of it (made anew?)\n",
                c->name.c_str(), IdText(ds, id).c_str(),
                c->StorePath(c->group->rank()).c_str());
        continue;
      }
      if (mine) out->push_back({rec, ds});
    }
  }
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return a.first.id < b.first.id;
  });
  return Status::OK();
}

}  // namespace

Status ChooseRoot(ContextImpl* c, int first) {
  Group* g = c->group.get();
  const std::string roots = c->config.Get("data_roots").value;
  c->roots.clear();
  size_t pos = 0;
  while (pos <= roots.size()) {
    size_t comma = roots.find(',', pos);
    if (comma == std::string::npos) comma = roots.size();
    c->roots.push_back(roots.substr(pos, comma - pos));
    pos = comma + 1;
  }
  Status s;
  if (c->roots.empty() || c->roots[0].empty()) {
    s = Status::InvalidArgument("data_roots is empty");
  }
  // This rank's first usable root, and why each before it was not.
  int mine = -1;
  std::string why;
  for (size_t k = static_cast<size_t>(first); s.ok() && k < c->roots.size();
       ++k) {
    Status p = ProbeRoot(posix::JoinPath(c->roots[k], c->name), g->rank());
    if (p.ok()) {
      mine = static_cast<int>(k);
      break;
    }
    why += "data root " + c->roots[k] + " is not usable on rank " +
           std::to_string(g->rank()) + ": " + p.ToString() + "\n";
  }
  if (s.ok() && mine < 0) {
    s = Status::IOError("no data root of " + roots + " is usable: " + why);
  }
  s = g->Agree(s, "choosing a data root of context " + c->name);
  if (!s.ok()) return s;
  char k4[4];
  EncodeFixed32(k4, static_cast<uint32_t>(mine));
  std::vector<std::string> all;
  s = g->Gather(std::string(k4, 4) + why, &all, 0);
  std::string chosen;
  if (s.ok() && g->rank() == 0) {
    int k = first;
    std::string reasons;
    for (const auto& a : all) {
      if (a.size() < 4) continue;
      k = std::max(k, static_cast<int>(DecodeFixed32(a.data())));
      reasons += a.substr(4);
    }
    if (k > 0) {
      fprintf(stderr, "sluice: context %s: %swriting to data root %s\n",
              c->name.c_str(), reasons.c_str(),
              c->roots[static_cast<size_t>(k)].c_str());
    }
    chosen = std::to_string(k);
  }
  if (s.ok()) s = g->Broadcast(&chosen, 0);
  if (!s.ok()) return s;
  c->root_index = atoi(chosen.c_str());
  // A rank that stopped at an earlier root has not tried this one.
  Status p;
  if (mine < c->root_index) {
    p = ProbeRoot(c->RootDir(c->root_index), g->rank());
  }
  s = g->Agree(p, "choosing data root " +
                      c->roots[static_cast<size_t>(c->root_index)] +
                      " of context " + c->name);
  if (!s.ok()) return s;
  c->data_root = c->roots[static_cast<size_t>(c->root_index)];
  c->root = c->RootDir(c->root_index);
  c->commit_dir = c->root + "/commit";
  c->total.root = c->data_root;
  return Status::OK();
}

Status StartTiers(ContextImpl* c) {
  Group* g = c->group.get();
  Status s;
  if (g->nodes() > 1) {
    // Records this node lacks (a node-local root; a job killed between
    // rank 0's commit and the copies): rank 0 sends them.
    std::string mine;
    if (g->rank() == g->node_leader() && g->rank() != 0) {
      std::vector<std::string> names;
      s = posix::ListDir(c->commit_dir, &names);
      mine = ".\n";  // a leader, even of an empty directory
      for (const auto& n : names) mine += n + "\n";
    }
    std::vector<std::string> all;
    Status gs = g->Gather(mine, &all, 0);
    std::string send;
    if (gs.ok() && g->rank() == 0) {
      // What each other node's leader holds.
      std::vector<std::set<std::string>> held;
      for (size_t r = 1; r < all.size(); ++r) {
        if (all[r].empty()) continue;  // not a leader
        std::set<std::string> names;
        size_t pos = 0;
        while (pos < all[r].size()) {
          const size_t nl = all[r].find('\n', pos);
          names.insert(all[r].substr(pos, nl - pos));
          pos = nl + 1;
        }
        held.push_back(std::move(names));
      }
      std::vector<std::string> names;
      Status l = posix::ListDir(c->commit_dir, &names);
      std::set<std::string> wanted;
      for (const auto& n : names) {
        std::string ds;
        int64_t id;
        bool reclaimed;
        if (!ParseRecordName(n, &ds, &id, &reclaimed) || reclaimed) continue;
        for (const auto& have : held) {
          if (!have.count(n)) wanted.insert(n);
        }
      }
      for (const auto& n : wanted) {
        std::string data;
        if (!posix::ReadFile(posix::JoinPath(c->commit_dir, n), &data).ok()) {
          continue;
        }
        char len[4];
        EncodeFixed32(len, static_cast<uint32_t>(n.size()));
        send += std::string(len, 4) + n;
        EncodeFixed32(len, static_cast<uint32_t>(data.size()));
        send += std::string(len, 4) + data;
      }
      if (!l.ok()) send.clear();
    }
    if (gs.ok()) gs = g->Broadcast(&send, 0);
    if (gs.ok() && g->rank() == g->node_leader() && g->rank() != 0) {
      std::string_view in = send;
      while (s.ok() && in.size() >= 8) {
        const uint32_t nl = DecodeFixed32(in.data());
        if (in.size() < 8 + nl) break;
        const std::string n(in.substr(4, nl));
        const uint32_t dl = DecodeFixed32(in.data() + 4 + nl);
        if (in.size() < 8 + nl + dl) break;
        const std::string_view data = in.substr(8 + nl, dl);
        in.remove_prefix(8 + nl + dl);
        const std::string path = posix::JoinPath(c->commit_dir, n);
        if (!Exists(path)) s = posix::WriteFileAtomic(path, data);
      }
    }
    if (s.ok()) s = gs;
    s = g->Agree(s, "copying the commit records of " + c->root);
    if (!s.ok()) return s;
  }
  c->drains = std::make_unique<DrainQueue>(
      std::max(1, atoi(c->Get("drain_threads").value.c_str())));
  // Drains a killed job left unfinished, and ids committed but never
  // drained.
  std::vector<std::pair<CommitRecord, std::string>> ids;
  s = Undrained(c, &ids);
  // auto: the newest undrained id of each dataset (the same on every rank:
  // the records are); immediate: every one.
  std::map<std::string, int64_t> newest;
  for (const auto& [rec, ds] : ids) {
    newest[ds] = std::max(newest.count(ds) ? newest[ds] : rec.id, rec.id);
  }
  for (const auto& [rec, ds] : ids) {
    const std::string mode = c->Get("stage_mode", ds).value;
    if (mode != "auto" && mode != "immediate") continue;
    if (mode == "auto" && rec.id != newest[ds]) continue;
    auto job = MakeJob(c, ds, rec.id, rec.mode, c->root_index);
    if (job) c->drains->Add(job);
  }
  return g->Agree(s, "resuming the drains of " + c->root);
}

namespace {

// Ids of `dataset` beyond keep_last on the context's root: rank 0 picks
// them, every rank removes its store's data of them. Collective.
Status KeepLastHere(ContextImpl* c, const std::string& dataset) {
  Group* g = c->group.get();
  // Rank 0's setting, so that every rank makes the same calls.
  std::string k = std::to_string(KeepLast(c, dataset, c->root_index));
  Status s = g->Broadcast(&k, 0);
  if (!s.ok()) return s;
  const int keep = atoi(k.c_str());
  if (keep <= 0) return Status::OK();
  std::string list;
  if (g->rank() == 0) {
    std::vector<std::string> names;
    s = posix::ListDir(c->commit_dir, &names);
    std::vector<int64_t> ids;
    for (const auto& n : names) {
      std::string ds;
      int64_t id;
      bool reclaimed;
      if (ParseRecordName(n, &ds, &id, &reclaimed) && !reclaimed &&
          ds == dataset) {
        ids.push_back(id);
      }
    }
    std::sort(ids.begin(), ids.end());
    const int dst = c->DrainRoot();
    const std::string stage = c->Get("stage_mode", dataset).value;
    const bool drained_first = dst >= 0 && stage != "disable";
    // Never the last complete copy: with a drain due, an id goes only
    // once it is safe on the next root, or a newer one is (an id auto
    // skipped is superseded by it).
    int64_t newest_drained = -1;
    for (size_t i = ids.size(); drained_first && i-- > 0;) {
      bool durable = false;
      Status p = tier::Published(c->RootDir(dst), dataset, ids[i], &durable);
      if (p.ok() && durable) {
        newest_drained = ids[i];
        break;
      }
    }
    for (size_t i = 0; s.ok() && i + static_cast<size_t>(keep) < ids.size();
         ++i) {
      if (drained_first && (newest_drained < 0 || ids[i] > newest_drained)) {
        continue;
      }
      list += std::to_string(ids[i]) + "\n";
    }
    // The records go first: then the ids are gone, whatever happens to
    // their data (reclaimed by the next context if not removed now).
    size_t pos = 0;
    while (s.ok() && pos < list.size()) {
      const size_t nl = list.find('\n', pos);
      const int64_t id = strtoll(list.c_str() + pos, nullptr, 10);
      pos = nl + 1;
      const std::string path =
          posix::JoinPath(c->commit_dir, RecordName(dataset, id));
      if (unlink(path.c_str()) != 0 && errno != ENOENT) {
        s = posix::Error("cannot remove", path, errno);
      }
    }
    if (s.ok() && !list.empty()) s = posix::SyncDir(c->commit_dir);
  }
  s = g->Agree(s, "removing ids of dataset " + dataset + " beyond keep_last");
  if (!s.ok()) return s;
  s = g->Broadcast(&list, 0);
  size_t pos = 0;
  while (s.ok() && pos < list.size()) {
    const size_t nl = list.find('\n', pos);
    const int64_t id = strtoll(list.c_str() + pos, nullptr, 10);
    pos = nl + 1;
    if (g->rank() == g->node_leader() && g->rank() != 0) {
      const std::string path =
          posix::JoinPath(c->commit_dir, RecordName(dataset, id));
      if (unlink(path.c_str()) != 0 && errno != ENOENT) {
        s = posix::Error("cannot remove", path, errno);
      }
    }
    if (s.ok() && c->fs) {
      const std::string dir = "/" + dataset + "/" + std::to_string(id);
      FileInfo info;
      Status r = c->fs->Stat(dir, &info);
      if (r.ok()) r = RemoveFsTree(c->fs.get(), dir);
      if (!r.IsNotFound()) s = r;
    }
  }
  return g->Agree(s, "removing the data of ids of dataset " + dataset +
                         " beyond keep_last");
}

// stage_mode auto, after id `id` of `dataset` committed: the queued
// drains of older ids of it no rank began are skipped. Collective.
Status SkipSuperseded(ContextImpl* c, const std::string& dataset, int64_t id) {
  Group* g = c->group.get();
  std::vector<std::shared_ptr<DrainJob>> taken;
  std::vector<int64_t> began;
  if (c->drains) c->drains->TakeQueued(dataset, id, &taken, &began);
  std::string mine;
  for (int64_t b : began) mine += std::to_string(b) + "\n";
  std::vector<std::string> all;
  Status s = g->Gather(mine, &all, 0);
  std::string keep;
  if (s.ok() && g->rank() == 0) {
    std::set<int64_t> ids;
    for (const auto& a : all) {
      for (size_t pos = 0; pos < a.size();) {
        const size_t nl = a.find('\n', pos);
        ids.insert(strtoll(a.c_str() + pos, nullptr, 10));
        pos = nl + 1;
      }
    }
    for (int64_t i : ids) keep += std::to_string(i) + "\n";
  }
  if (s.ok()) s = g->Broadcast(&keep, 0);
  std::set<int64_t> drain;
  for (size_t pos = 0; s.ok() && pos < keep.size();) {
    const size_t nl = keep.find('\n', pos);
    drain.insert(strtoll(keep.c_str() + pos, nullptr, 10));
    pos = nl + 1;
  }
  // On a failed exchange nothing is skipped.
  for (auto& j : taken) c->drains->Return(j, s.ok() && !drain.count(j->id));
  return s;
}

}  // namespace

void AfterCommit(ContextImpl* c, std::string record,
                 const std::string& dataset, int64_t id, int mode, int root) {
  Group* g = c->group.get();
  Status s;
  const std::string commit_dir = posix::JoinPath(c->RootDir(root), "commit");
  if (g->nodes() > 1) {
    s = g->Broadcast(&record, 0);
    if (s.ok() && g->rank() == g->node_leader() && g->rank() != 0) {
      const std::string path =
          posix::JoinPath(commit_dir, RecordName(dataset, id));
      if (!Exists(path)) s = posix::WriteFileAtomic(path, record);
    }
    s = g->Agree(s, "copying the commit record of " + IdText(dataset, id));
  }
  // Rank 0's stage mode, so that every rank makes the same calls.
  std::string stage = c->Get("stage_mode", dataset).value;
  Status b = g->Broadcast(&stage, 0);
  if (s.ok()) s = b;
  if (b.ok() && stage == "auto") {
    // Ids of the dataset superseded by this one before their drain began
    // anywhere are skipped; one some rank began is drained by all, or it
    // would never be whole on the next root.
    Status a = SkipSuperseded(c, dataset, id);
    if (s.ok()) s = a;
  }
  if (b.ok() && (stage == "auto" || stage == "immediate")) {
    auto job = MakeJob(c, dataset, id, mode, root);
    if (job) c->drains->Add(job);
  }
  Status k = KeepLastHere(c, dataset);
  if (s.ok()) s = k;
  if (!s.ok() && g->rank() == 0) {
    fprintf(stderr, "sluice: context %s: %s is committed, but: %s\n",
            c->name.c_str(), IdText(dataset, id).c_str(),
            s.ToString().c_str());
  }
}

Status FinishTiers(ContextImpl* c, bool wait) {
  if (!c->drains) return Status::OK();
  Status s;
  if (wait) {
    std::vector<std::pair<CommitRecord, std::string>> ids;
    s = Undrained(c, &ids);
    for (const auto& [rec, ds] : ids) {
      if (c->Get("stage_mode", ds).value != "end_of_job") continue;
      if (c->drains->Find(ds, rec.id)) continue;
      auto job = MakeJob(c, ds, rec.id, rec.mode, c->root_index);
      if (job) c->drains->Add(job);
    }
    const char* p = getenv("SLUICE_PROGRESS");
    Status w = c->drains->WaitAll(p && std::string(p) == "1",
                                  "context " + c->name);
    if (s.ok()) s = w;
  }
  c->drains->Stop();
  return s;
}

Status VisibleWriters(ContextImpl* c, std::set<int>* visible) {
  Group* g = c->group.get();
  visible->clear();
  // Node leaders list their node's view of the root (one listing a node);
  // rank 0 joins them. One node: rank 0's view is everyone's.
  std::string mine;
  if (g->rank() == g->node_leader()) {
    std::vector<std::string> names;
    Status l = posix::ListDir(c->root, &names);
    if (!l.ok() && g->rank() == 0 && g->nodes() <= 1) return l;
    for (const auto& n : names) {
      int w = 0;
      if (ParseWriterName(n, &w)) mine += std::to_string(w) + "\n";
    }
  }
  std::vector<std::string> all;
  if (g->nodes() <= 1) {
    all.push_back(mine);
  } else {
    Status s = g->Gather(mine, &all, 0);
    if (!s.ok()) return s;
  }
  for (const auto& a : all) {
    size_t pos = 0;
    while (pos < a.size()) {
      const size_t nl = a.find('\n', pos);
      visible->insert(atoi(a.c_str() + pos));
      pos = nl + 1;
    }
  }
  return Status::OK();
}

bool HoldsItsParts(ContextImpl* c, const CommitRecord& rec, int root) {
  if (root != c->root_index || !c->fs) return true;
  const int me = c->group->rank();
  bool named = false;
  for (const auto& e : rec.elements) {
    for (const auto& p : e.parts) named |= p.writer == me;
  }
  if (!named) return true;
  FileInfo info;
  return c->fs->Stat("/" + rec.dataset + "/" + std::to_string(rec.id), &info)
      .ok();
}

Status FindReadable(ContextImpl* c, const std::string& name, int64_t id,
                    const std::set<int>& visible, std::string* out,
                    const std::set<int64_t>& passed) {
  struct Candidate {
    int here = -1;     // the root with its record and stores: the
                       // context's, or one the id fell back to
    int drained = -1;  // the first later root with its index
  };
  std::map<int64_t, Candidate> cands;
  // Every root: the context's (its records, the stores every rank sees),
  // then the others as rank 0 sees them: ids that fell back there (their
  // record and stores), ids drained there (their index). A root that
  // cannot be listed is passed over; the context's own must be.
  std::map<int, std::set<int>> writers_at;
  std::vector<int> order{c->root_index};
  for (int k = 0; k < static_cast<int>(c->roots.size()); ++k) {
    if (k != c->root_index) order.push_back(k);
  }
  std::string unlisted;  // roots that could not be listed, and why
  for (int k : order) {
    std::vector<std::string> names;
    Status l = posix::ListDir(posix::JoinPath(c->RootDir(k), "commit"), &names);
    if (!l.ok()) {
      if (k == c->root_index) return l;
      if (!l.IsNotFound()) unlisted += "; " + l.ToString();
      continue;
    }
    for (const auto& n : names) {
      std::string ds;
      int64_t i;
      bool reclaimed;
      if (ParseIndexName(n, &ds, &i) && ds == name) {
        Candidate& cd = cands[i];
        if (cd.drained < 0) cd.drained = k;
      } else if (ParseRecordName(n, &ds, &i, &reclaimed) && !reclaimed &&
                 ds == name) {
        Candidate& cd = cands[i];
        if (cd.here < 0) cd.here = k;
      }
    }
    if (k == c->root_index) {
      writers_at[k] = visible;
      continue;
    }
    std::vector<std::string> stores;
    if (posix::ListDir(c->RootDir(k), &stores).ok()) {
      for (const auto& n : stores) {
        int w = 0;
        if (ParseWriterName(n, &w)) writers_at[k].insert(w);
      }
    }
  }
  for (auto it = cands.begin(); it != cands.end();) {
    const bool keep = (id < 0 || it->first == id) && !passed.count(it->first);
    it = keep ? std::next(it) : cands.erase(it);
  }
  // Each candidate's record (and commit time), newest first.
  struct Found {
    int64_t id;
    int from;     // -1: the stores of root `stores`
    int drained;  // root of a drained copy, -1: none
    int stores;   // root of the record and stores, -1: none
    std::string record;
    int64_t time;
  };
  std::vector<Found> found;
  std::string incomplete;
  Status s;
  for (auto it = cands.rbegin(); it != cands.rend(); ++it) {
    const int64_t i = it->first;
    const Candidate& cd = it->second;
    Found f{i, -1, cd.drained, cd.here, "", 0};
    CommitRecord rec;
    bool ok = false;
    if (cd.here >= 0) {
      const std::string path = posix::JoinPath(
          posix::JoinPath(c->RootDir(cd.here), "commit"), RecordName(name, i));
      s = posix::ReadFile(path, &f.record);
      if (s.ok()) s = DecodeRecord(f.record, path, &rec);
      if (s.ok() && (rec.dataset != name || rec.id != i)) {
        s = Status::Corruption("commit record " + path + " is of " +
                               rec.dataset + " id " + std::to_string(rec.id));
      }
      if (!s.ok() && !s.IsNotFound()) {
        // A damaged record: the id is passed over (an older one may do),
        // unless it was asked for by number.
        if (id >= 0) return s;
        incomplete += " " + std::to_string(i) + " (" + s.ToString() + ")";
      }
      if (s.ok()) {
        ok = true;
        const std::set<int>& seen = writers_at[cd.here];
        for (const auto& e : rec.elements) {
          for (const auto& p : e.parts) ok &= seen.count(p.writer) > 0;
        }
        if (!ok) {
          incomplete += " " + std::to_string(i);
          f.record.clear();
        }
      }
    }
    if (!ok && cd.drained >= 0) {
      std::unique_ptr<tier::DrainedId> d;
      s = tier::DrainedId::Open(c->RootDir(cd.drained), name, i, &d);
      if (s.ok()) {
        rec = d->record();
        f.record = EncodeRecord(rec);
        f.from = cd.drained;
        ok = true;
      } else if (id >= 0) {
        return s;
      } else {
        incomplete += " " + std::to_string(i) + " (" + s.ToString() + ")";
      }
    }
    if (!ok) continue;
    f.time = rec.commit_time_ns;
    found.push_back(std::move(f));
    if (id != kDatasetIdNewest) break;  // the highest (or the one asked)
  }
  if (id == kDatasetIdNewest) {
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) {
                       return a.time != b.time ? a.time > b.time : a.id > b.id;
                     });
  }
  if (found.empty()) {
    std::string why = incomplete.empty()
                          ? ""
                          : " (incomplete: id(s)" + incomplete +
                                ": stores no rank sees, and no data root "
                                "holds a whole drained copy)";
    why += unlisted;
    if (id >= 0) {
      return Status::NotFound(IdText(name, id) + " is not committed in " +
                              c->root + why);
    }
    return Status::NotFound("dataset " + name + " has no committed id in " +
                            c->root + why);
  }
  char b[12];
  EncodeFixed32(b, static_cast<uint32_t>(found[0].from));
  EncodeFixed32(b + 4, static_cast<uint32_t>(found[0].drained));
  EncodeFixed32(b + 8, static_cast<uint32_t>(
                           found[0].stores < 0 ? c->root_index
                                               : found[0].stores));
  *out = std::string(b, 12) + found[0].record;
  return Status::OK();
}

Status UnlinkEverywhere(ContextImpl* c, const std::string& dataset,
                        int64_t id, std::string* roots) {
  roots->clear();
  bool found = false;
  Status s;
  const int n = static_cast<int>(c->roots.size());
  for (int k = 0; s.ok() && k < n; ++k) {
    const std::string dir = c->RootDir(k);
    if (!Exists(posix::JoinPath(posix::JoinPath(dir, "commit"),
                                tier::IndexName(dataset, id)))) {
      continue;
    }
    found = true;
    s = tier::RemoveDrained(dir, dataset, id);
  }
  std::vector<int> order;
  for (int k = 0; k < n; ++k) {
    if (k != c->root_index) order.push_back(k);
  }
  order.push_back(c->root_index);
  for (int k : order) {
    if (!s.ok()) break;
    const std::string commit = posix::JoinPath(c->RootDir(k), "commit");
    const std::string path = posix::JoinPath(commit, RecordName(dataset, id));
    if (unlink(path.c_str()) == 0) {
      found = true;
      *roots += std::to_string(k) + "\n";
      s = posix::SyncDir(commit);
    } else if (errno != ENOENT) {
      s = posix::Error("cannot remove", path, errno);
    }
  }
  if (s.ok() && !found) {
    s = Status::NotFound("dataset " + dataset + " has no committed id " +
                         std::to_string(id));
  }
  return s;
}

Status UnlinkCopies(ContextImpl* c, const std::string& dataset, int64_t id,
                    const std::string& roots) {
  Group* g = c->group.get();
  Status s;
  if (g->rank() == g->node_leader() && g->rank() != 0) {
    for (size_t pos = 0; s.ok() && pos < roots.size();) {
      const size_t nl = roots.find('\n', pos);
      const int k = atoi(roots.c_str() + pos);
      pos = nl + 1;
      const std::string commit = posix::JoinPath(c->RootDir(k), "commit");
      const std::string path = posix::JoinPath(commit, RecordName(dataset, id));
      if (unlink(path.c_str()) == 0) {
        s = posix::SyncDir(commit);
      } else if (errno != ENOENT) {
        s = posix::Error("cannot remove", path, errno);
      }
    }
  }
  return s;
}

}  // namespace dataset
}  // namespace sluice

// ---- Context: drain state ------------------------------------------------

namespace sluice {

Status Context::GetDrainState(const std::string& name, int64_t id,
                              DrainState* out) {
  ContextImpl* c = impl_.get();
  *out = DrainState();
  Status s = dataset::CheckName(name, "dataset name");
  if (!s.ok()) return s;
  const int dst = c->DrainRoot();
  if (dst < 0) return Status::OK();
  std::shared_ptr<dataset::DrainJob> job =
      c->drains ? c->drains->Find(name, id) : nullptr;
  if (job) *out = c->drains->State(*job);
  out->root = dst;
  out->root_path = c->roots[static_cast<size_t>(dst)];
  if (!job || out->phase == DrainPhase::kDurable) {
    // Whole on the next root, or only this process's share done (the
    // other writers' drains go on).
    bool durable = false;
    s = tier::Published(c->RootDir(dst), name, id, &durable);
    if (!s.ok()) return s;
    if (durable) {
      out->phase = DrainPhase::kDurable;
    } else if (job) {
      out->phase = DrainPhase::kDraining;
    }
  }
  return Status::OK();
}

Status Context::DrainWait(const std::string& name, int64_t id,
                          DrainState* out) {
  ContextImpl* c = impl_.get();
  dataset::Group* g = c->group.get();
  *out = DrainState();
  Status s = dataset::CheckName(name, "dataset name");
  std::shared_ptr<dataset::DrainJob> job =
      s.ok() && c->drains ? c->drains->Find(name, id) : nullptr;
  if (job) c->drains->Wait(job);
  DrainState mine;
  if (job) mine = c->drains->State(*job);
  if (s.ok() && mine.phase == DrainPhase::kFailed) s = mine.error;
  s = g->Agree(s, "draining dataset " + name + " id " + std::to_string(id));
  bool skipped = mine.phase == DrainPhase::kSkipped;
  bool queued = job != nullptr;
  Status a = g->AnyTrue(&skipped);
  if (a.ok()) a = g->AnyTrue(&queued);
  if (s.ok()) s = a;
  // Every share is done: the last writer published the id before its
  // drain ended.
  if (s.ok()) s = GetDrainState(name, id, out);
  if (s.ok()) {
    if (skipped && out->phase != DrainPhase::kDurable) {
      out->phase = DrainPhase::kSkipped;
    } else if (!queued && out->phase != DrainPhase::kDurable) {
      out->phase = DrainPhase::kNone;
    }
  }
  std::string phase = std::to_string(static_cast<int>(out->phase));
  Status b = g->Broadcast(&phase, 0);
  if (s.ok()) s = b;
  if (s.ok()) out->phase = static_cast<DrainPhase>(atoi(phase.c_str()));
  if (!s.ok()) {
    out->phase = DrainPhase::kFailed;
    out->error = s;
  }
  return s;
}

}  // namespace sluice
