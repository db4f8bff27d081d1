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

std::string IdText(const std::string& name, int64_t id) {
  return "dataset " + name + " id " + std::to_string(id);
}

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

class OwnSource : public tier::StoreSource {
 public:
  explicit OwnSource(ContextImpl* c) : c_(c) {}
  Status Get(int writer, fs::FsStore** out) override {
    if (writer != c_->group->rank() || !c_->fs) {
      return Status::NotFound("writer " + std::to_string(writer) +
                              " is not this process's store");
    }
    auto* w = dynamic_cast<fs::WriterFs*>(c_->fs.get());
    if (!w) return Status::NotFound("no writer store here");
    *out = w->store();
    return Status::OK();
  }

 private:
  ContextImpl* c_;
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

std::shared_ptr<DrainJob> MakeJob(ContextImpl* c, const std::string& dataset,
                                  int64_t id, int mode) {
  const int dst = c->DrainRoot();
  if (dst < 0 || !c->drains || !c->fs || !c->HoldsParts(mode)) return nullptr;
  auto job = std::make_shared<DrainJob>();
  job->dataset = dataset;
  job->id = id;
  job->src_dir = c->root;
  job->dst_dir = c->RootDir(dst);
  job->dst_root = dst;
  job->dst_root_path = c->roots[static_cast<size_t>(dst)];
  job->writers = {c->group->rank()};
  job->skip_if_superseded = c->Get("stage_mode", dataset).value == "auto";
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
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string ds;
    int64_t id;
    bool reclaimed;
    if (!ParseRecordName(n, &ds, &id, &reclaimed) || reclaimed) continue;
    bool durable = false;
    s = tier::Published(c->RootDir(dst), ds, id, &durable);
    if (!s.ok()) return s;
    if (durable) continue;
    std::string data;
    s = posix::ReadFile(posix::JoinPath(c->commit_dir, n), &data);
    if (s.IsNotFound()) continue;
    CommitRecord rec;
    if (s.ok()) s = DecodeRecord(data, posix::JoinPath(c->commit_dir, n), &rec);
    if (!s.ok()) return s;
    bool mine = false;
    for (const auto& e : rec.elements) {
      for (const auto& p : e.parts) mine |= p.writer == c->group->rank();
    }
    if (mine) out->push_back({rec, ds});
  }
  std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) {
    return a.first.id < b.first.id;
  });
  return Status::OK();
}

}  // namespace

Status ChooseRoot(ContextImpl* c) {
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
  for (size_t k = 0; s.ok() && k < c->roots.size(); ++k) {
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
    int k = 0;
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
      for (const auto& n : names) mine += n + "\n";
    }
    std::vector<std::string> all;
    Status gs = g->Gather(mine, &all, 0);
    std::string send;
    if (gs.ok() && g->rank() == 0) {
      std::vector<std::string> names;
      Status l = posix::ListDir(c->commit_dir, &names);
      std::set<std::string> wanted;
      for (const auto& n : names) {
        std::string ds;
        int64_t id;
        bool reclaimed;
        if (!ParseRecordName(n, &ds, &id, &reclaimed) || reclaimed) continue;
        for (size_t r = 1; r < all.size(); ++r) {
          if (all[r].empty()) continue;  // not a leader, or a shared root
          if (all[r].find(n + "\n") == std::string::npos &&
              all[r].find("\n" + n + "\n") == std::string::npos) {
            wanted.insert(n);
          }
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
  c->own_source = std::make_unique<OwnSource>(c);
  c->drains = std::make_unique<DrainQueue>(
      std::max(1, atoi(c->Get("drain_threads").value.c_str())),
      c->own_source.get());
  // Drains a killed job left unfinished, and ids committed but never
  // drained.
  std::vector<std::pair<CommitRecord, std::string>> ids;
  s = Undrained(c, &ids);
  for (const auto& [rec, ds] : ids) {
    const std::string mode = c->Get("stage_mode", ds).value;
    if (mode != "auto" && mode != "immediate") continue;
    auto job = MakeJob(c, ds, rec.id, rec.mode);
    if (job) c->drains->Add(job);
  }
  return g->Agree(s, "resuming the drains of " + c->root);
}

namespace {

// Ids of `dataset` beyond keep_last on the context's root: rank 0 picks
// them, every rank removes its store's data of them. Collective.
Status KeepLastHere(ContextImpl* c, const std::string& dataset) {
  Group* g = c->group.get();
  const int keep = KeepLast(c, dataset, c->root_index);
  if (keep <= 0) return Status::OK();
  std::string list;
  Status s;
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
    for (size_t i = 0; s.ok() && i + static_cast<size_t>(keep) < ids.size();
         ++i) {
      if (drained_first) {
        // Never the last complete copy: only an id safe on the next root.
        bool durable = false;
        Status p = tier::Published(c->RootDir(dst), dataset, ids[i], &durable);
        if (!p.ok() || !durable) continue;
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

}  // namespace

void AfterCommit(ContextImpl* c, std::string record,
                 const std::string& dataset, int64_t id, int mode) {
  Group* g = c->group.get();
  Status s;
  if (g->nodes() > 1) {
    s = g->Broadcast(&record, 0);
    if (s.ok() && g->rank() == g->node_leader() && g->rank() != 0) {
      const std::string path =
          posix::JoinPath(c->commit_dir, RecordName(dataset, id));
      if (!Exists(path)) s = posix::WriteFileAtomic(path, record);
    }
    s = g->Agree(s, "copying the commit record of " + IdText(dataset, id));
  }
  const std::string stage = c->Get("stage_mode", dataset).value;
  if (stage == "auto" || stage == "immediate") {
    auto job = MakeJob(c, dataset, id, mode);
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
      auto job = MakeJob(c, ds, rec.id, rec.mode);
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
  std::vector<std::string> names;
  Status s = posix::ListDir(c->root, &names);
  std::string mine;
  for (const auto& n : names) {
    if (n.compare(0, 7, "writer.") == 0 && n.size() > 7) mine += n + "\n";
  }
  if (g->nodes() <= 1) {
    // Every rank sees what rank 0 sees.
    std::string_view in = mine;
    while (!in.empty()) {
      const size_t nl = in.find('\n');
      visible->insert(atoi(std::string(in.substr(7, nl - 7)).c_str()));
      in.remove_prefix(nl + 1);
    }
    return Status::OK();
  }
  std::vector<std::string> all;
  s = g->Gather(mine, &all, 0);
  if (!s.ok()) return s;
  for (const auto& a : all) {
    std::string_view in = a;
    while (!in.empty()) {
      const size_t nl = in.find('\n');
      visible->insert(atoi(std::string(in.substr(7, nl - 7)).c_str()));
      in.remove_prefix(nl + 1);
    }
  }
  return Status::OK();
}

Status FindReadable(ContextImpl* c, const std::string& name, int64_t id,
                    const std::set<int>& visible, std::string* out) {
  struct Candidate {
    bool here = false;  // a record in the context's root
    int drained = -1;   // the first later root with its index
  };
  std::map<int64_t, Candidate> cands;
  std::vector<std::string> names;
  Status s = posix::ListDir(c->commit_dir, &names);
  if (!s.ok()) return s;
  for (const auto& n : names) {
    std::string ds;
    int64_t i;
    bool reclaimed;
    if (ParseRecordName(n, &ds, &i, &reclaimed) && !reclaimed && ds == name) {
      cands[i].here = true;
    }
  }
  for (int k = c->root_index + 1; k < static_cast<int>(c->roots.size()); ++k) {
    names.clear();
    Status l = posix::ListDir(posix::JoinPath(c->RootDir(k), "commit"), &names);
    if (l.IsNotFound()) continue;
    if (!l.ok()) return l;
    for (const auto& n : names) {
      std::string ds;
      int64_t i;
      if (ParseIndexName(n, &ds, &i) && ds == name) {
        Candidate& cd = cands[i];
        if (cd.drained < 0) cd.drained = k;
      }
    }
  }
  if (id >= 0) {
    for (auto it = cands.begin(); it != cands.end();) {
      it = it->first == id ? std::next(it) : cands.erase(it);
    }
  }
  // Each candidate's record (and commit time), newest first.
  struct Found {
    int64_t id;
    int from;     // -1: the context's root
    int drained;  // root of a drained copy, -1: none
    std::string record;
    int64_t time;
  };
  std::vector<Found> found;
  std::string incomplete;
  for (auto it = cands.rbegin(); it != cands.rend(); ++it) {
    const int64_t i = it->first;
    const Candidate& cd = it->second;
    Found f{i, -1, cd.drained, "", 0};
    CommitRecord rec;
    bool ok = false;
    if (cd.here) {
      const std::string path =
          posix::JoinPath(c->commit_dir, RecordName(name, i));
      s = posix::ReadFile(path, &f.record);
      if (s.ok()) s = DecodeRecord(f.record, path, &rec);
      if (s.ok() && (rec.dataset != name || rec.id != i)) {
        s = Status::Corruption("commit record " + path + " is of " +
                               rec.dataset + " id " + std::to_string(rec.id));
      }
      if (!s.ok() && !s.IsNotFound()) return s;
      if (s.ok()) {
        ok = true;
        for (const auto& e : rec.elements) {
          for (const auto& p : e.parts) ok &= visible.count(p.writer) > 0;
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
      if (!s.ok()) return s;
      rec = d->record();
      f.record = EncodeRecord(rec);
      f.from = cd.drained;
      ok = true;
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
                                " lack stores no rank sees, and no data "
                                "root holds a drained copy)";
    if (id >= 0) {
      return Status::NotFound(IdText(name, id) + " is not committed in " +
                              c->root + why);
    }
    return Status::NotFound("dataset " + name + " has no committed id in " +
                            c->root + why);
  }
  char b[8];
  EncodeFixed32(b, static_cast<uint32_t>(found[0].from));
  EncodeFixed32(b + 4, static_cast<uint32_t>(found[0].drained));
  *out = std::string(b, 8) + found[0].record;
  return Status::OK();
}

Status UnlinkCopies(ContextImpl* c, const std::string& dataset, int64_t id) {
  Group* g = c->group.get();
  Status s;
  if (g->rank() == g->node_leader() && g->rank() != 0) {
    const std::string path =
        posix::JoinPath(c->commit_dir, RecordName(dataset, id));
    if (unlink(path.c_str()) == 0) {
      s = posix::SyncDir(c->commit_dir);
    } else if (errno != ENOENT) {
      s = posix::Error("cannot remove", path, errno);
    }
  }
  if (g->rank() == 0) {
    for (int k = c->root_index + 1; s.ok() && k < static_cast<int>(c->roots.size());
         ++k) {
      if (!Exists(c->RootDir(k))) continue;
      s = tier::RemoveDrained(c->RootDir(k), dataset, id);
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
