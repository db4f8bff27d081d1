// Contexts: configuration, the rank's store, reclaiming uncommitted ids,
// opening, listing and removing dataset ids (sluice/dataset.h).
#include <time.h>
#include <unistd.h>

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <set>

#include "dataset/internal.h"
#include "dataset/tiers.h"
#include "fs/writer_fs.h"
#include "util/posix.h"

extern char** environ;

namespace sluice {
namespace dataset {

uint64_t NowNs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(t.tv_nsec);
}

int64_t WallNs() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

bool Worker::Run(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  jobs_.push_back(std::move(job));
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> l(mu_);
      for (;;) {
        cv_.wait(l, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping, and nothing left
        std::function<void()> j = std::move(jobs_.front());
        jobs_.pop_front();
        l.unlock();
        j();
        l.lock();
      }
    });
  }
  cv_.notify_one();
  return true;
}

void Worker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

class SingleGroup : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int node() const override { return 0; }
  int nodes() const override { return 1; }
  int node_leader() const override { return 0; }
  int node_size() const override { return 1; }
  Status NodeBroadcast(std::string*) override { return Status::OK(); }
  Status NodeBarrier() override { return Status::OK(); }
  Status Agree(const Status& local, const std::string& what) override {
    if (local.ok()) return local;
    return Status(local.code(),
                  what + " failed on rank 0: " + std::string(local.message()));
  }
  Status AnyTrue(bool*) override { return Status::OK(); }
  Status Broadcast(std::string*, int) override { return Status::OK(); }
  Status Gather(const std::string& mine, std::vector<std::string>* all,
                int) override {
    all->assign(1, mine);
    return Status::OK();
  }
};

fs::WriterFs* AsWriter(FileSystem* f) {
  return static_cast<fs::WriterFs*>(f);
}

}  // namespace

Status RemoveFsTree(FileSystem* f, const std::string& path) {
  std::vector<DirEntry> entries;
  Status s = f->ReadDir(path, &entries);
  if (!s.ok()) return s;
  for (const auto& e : entries) {
    const std::string child = path + "/" + e.name;
    s = e.is_dir ? RemoveFsTree(f, child) : f->Unlink(child);
    if (!s.ok()) return s;
  }
  return f->Rmdir(path);
}

bool Truthy(const std::string& v) {
  bool b = false;
  return Config::ParseBool(v, &b).ok() && b;
}

namespace {

// Removes from one store every id directory /DATASET/ID that `committed`
// does not hold, then gives their space back.
Status ReclaimStore(FileSystem* f, const std::set<std::string>& committed,
                    std::set<std::string>* removed) {
  std::vector<DirEntry> datasets;
  Status s = f->ReadDir("/", &datasets);
  if (!s.ok()) return s;
  bool any = false;
  for (const auto& d : datasets) {
    if (!d.is_dir || !CheckName(d.name, "dataset").ok()) continue;
    std::vector<DirEntry> ids;
    s = f->ReadDir("/" + d.name, &ids);
    if (!s.ok()) return s;
    for (const auto& i : ids) {
      int64_t id;
      std::string ds;
      bool reclaimed;
      const std::string rec = d.name + "." + i.name;
      if (!i.is_dir || !ParseRecordName(rec, &ds, &id, &reclaimed) ||
          reclaimed || committed.count(RecordName(ds, id))) {
        continue;
      }
      s = RemoveFsTree(f, "/" + d.name + "/" + i.name);
      if (!s.ok()) return s;
      removed->insert(RecordName(ds, id));
      any = true;
    }
  }
  if (!any) return Status::OK();
  s = f->Sync();
  if (!s.ok()) return s;
  uint64_t freed = 0;
  s = AsWriter(f)->store()->store()->ReclaimSpace(&freed);
  // Another process reading the store holds its values: they go at a later
  // open.
  return s.IsBusy() ? Status::OK() : s;
}

// Runs `op` on this rank's store, then on each store of a writer beyond
// the job's ranks (a larger earlier job's) that falls to this rank
// (writer % size == rank), opened as its writer for the time of `op`.
Status ForEachStore(ContextImpl* c,
                    const std::function<Status(FileSystem*)>& op) {
  Group* g = c->group.get();
  Status s = c->fs ? op(c->fs.get()) : Status::OK();
  std::vector<std::string> names;
  Status l = posix::ListDir(c->root, &names);
  if (s.ok()) s = l;
  for (const auto& n : names) {
    if (!s.ok()) break;
    if (n.compare(0, 7, "writer.") != 0) continue;
    const int w = atoi(n.c_str() + 7);
    if (w < g->size() || w % g->size() != g->rank()) continue;
    std::unique_ptr<FileSystem> other;
    s = fs::OpenWriterFs(c->fs_options, c->StorePath(w), w, "", &other);
    if (s.ok()) s = op(other.get());
    if (other) {
      Status cl = other->Close();
      if (s.ok()) s = cl;
    }
  }
  return s;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += n + "\n";
  return out;
}

std::set<std::string> Split(const std::string& text) {
  std::set<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (nl > pos) out.insert(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

// The ids of every store of the context that no commit record holds are
// removed: this rank's own store, and the stores of writers beyond the
// job's ranks (a larger earlier job's) that fall to this rank.
Status ReclaimUncommitted(ContextImpl* c) {
  Group* g = c->group.get();
  std::string list;
  Status s;
  if (g->rank() == 0) {
    std::vector<std::string> names;
    s = posix::ListDir(c->commit_dir, &names);
    std::set<std::string> committed;
    for (const auto& n : names) {
      std::string ds;
      int64_t id;
      bool reclaimed;
      if (ParseRecordName(n, &ds, &id, &reclaimed)) {
        if (!reclaimed) committed.insert(n);
      } else if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0) {
        // A record whose writer was killed before the rename.
        unlink((c->commit_dir + "/" + n).c_str());
      }
    }
    list = Join(committed);
  }
  s = g->Agree(s, "listing commit records of " + c->root);
  if (!s.ok()) return s;
  s = g->Broadcast(&list, 0);
  if (!s.ok()) return s;
  const std::set<std::string> committed = Split(list);

  std::set<std::string> removed;
  s = ForEachStore(c, [&](FileSystem* f) {
    return ReclaimStore(f, committed, &removed);
  });
  s = g->Agree(s, "reclaiming uncommitted ids in " + c->root);
  if (!s.ok()) return s;
  std::vector<std::string> all;
  s = g->Gather(Join(removed), &all, 0);
  Status m;
  if (s.ok() && g->rank() == 0) {
    std::set<std::string> every;
    for (const auto& a : all) {
      for (const auto& n : Split(a)) every.insert(n);
    }
    const std::string when = std::to_string(WallNs()) + "\n";
    for (const auto& n : every) {
      Status w = posix::WriteFileAtomic(c->commit_dir + "/" + n + ".reclaimed",
                                        when);
      if (m.ok()) m = w;
    }
  }
  if (s.ok()) s = m;
  return g->Agree(s, "recording reclaimed ids in " + c->commit_dir);
}

// file_per_node: a node's leader serves the other ranks of its node, which
// learn where. A leader that cannot serve says why, and the node's
// file_per_node datasets fail with it (basic ones are not concerned).
// Collective over the node.
Status StartNodeWriter(ContextImpl* c) {
  Group* g = c->group.get();
  Status s;
  // Only nodes of several ranks have a node writer, but the agreement is
  // every rank's.
  if (g->node_size() > 1) {
    std::string address;
    if (g->rank() == g->node_leader()) {
      Status st = NodeServer::Start(c->fs.get(), g->node_size() - 1,
                                    &c->node_server, &address);
      if (!st.ok()) address = "!" + st.message();
    }
    s = g->NodeBroadcast(&address);
    c->node_address = address;
  }
  return g->Agree(s, "starting the node writers of " + c->root);
}

}  // namespace

std::unique_ptr<Group> NewSingleGroup() {
  return std::make_unique<SingleGroup>();
}

}  // namespace dataset

Status ContextImpl::OwnStore() {
  if (fs) return Status::OK();
  const int rank = group->rank();
  Status s = fs::OpenWriterFs(fs_options, StorePath(rank), rank, "", &fs);
  if (s.ok()) store_sink = dataset::NewStoreSink(fs.get());
  return s;
}

bool ContextImpl::HoldsParts(int mode) const {
  return mode == dataset::kModeBasic || group->rank() == group->node_leader();
}

Status ContextImpl::Sink(int mode, dataset::PartSink** out) {
  dataset::Group* g = group.get();
  if (HoldsParts(mode)) {
    *out = store_sink.get();
    return store_sink ? Status::OK()
                      : Status::InvalidArgument("this rank has no store");
  }
  std::lock_guard<std::mutex> lock(mu);
  if (!node_sink) {
    if (!node_address.empty() && node_address[0] == '!') {
      return Status::IOError("the node writer (rank " +
                             std::to_string(g->node_leader()) +
                             ") could not start: " + node_address.substr(1));
    }
    Status s = dataset::ConnectNodeWriter(node_address, g->node_leader(),
                                          &node_sink);
    if (!s.ok()) return s;
  }
  *out = node_sink.get();
  return Status::OK();
}

namespace dataset {

Status InitContext(std::unique_ptr<Group> group, const std::string& name,
                   const std::string& config_file,
                   std::unique_ptr<Context>* out, const Config* settings) {
  out->reset();
  auto c = std::make_shared<ContextImpl>();
  if (settings != nullptr) c->config = *settings;
  c->group = std::move(group);
  Group* g = c->group.get();
  Status s = CheckName(name, "context name");
  std::string config;
  if (s.ok() && g->rank() == 0) {
    s = Config::Load(name, config_file, environ, &c->config);
    if (s.ok()) config = c->config.Serialize();
  }
  s = g->Agree(s, "reading the configuration of context " + name);
  if (!s.ok()) return s;
  s = g->Broadcast(&config, 0);
  if (s.ok() && g->rank() != 0) s = Config::Deserialize(config, &c->config);
  if (s.ok()) s = c->config.ToFsOptions(&c->fs_options);
  s = g->Agree(s, "configuring context " + name);
  if (!s.ok()) return s;
  c->name = name;
  // The first data root every rank can write to (tiers.cc), and where
  // every rank can open its store: a root too full for a store (or
  // failing) passes to the next one.
  for (int first = 0;;) {
    s = ChooseRoot(c.get(), first);
    if (!s.ok()) return s;
    s = posix::CreateDirs(c->commit_dir);
    // The directories just made survive a power cut with the first record.
    if (s.ok()) s = posix::SyncDir(c->root);
    if (s.ok()) s = posix::SyncDir(c->data_root);
    // Every rank opens its store now (a checkpoint never pays for it),
    // except where file_per_node sends its parts to its node's leader: a
    // rank that is not a leader opens one only if it has one (to reclaim
    // it) or when a basic-mode dataset needs it.
    if (s.ok()) {
      bool open = c->HoldsParts(
          c->config.Get("dataset_mode").value == "file_per_node"
              ? kModeFilePerNode
              : kModeBasic);
      if (!open) {
        posix::PathKind kind;
        s = posix::Probe(c->StorePath(g->rank()), &kind);
        open = s.ok() && kind != posix::PathKind::kMissing;
      }
      if (s.ok() && open) s = c->OwnStore();
    }
    s = g->Agree(s, "initialising context " + name + " in data root " +
                        c->data_root);
    if (s.ok()) break;
    if (c->fs) {
      c->fs->Close();
      c->fs.reset();
      c->store_sink.reset();
    }
    if (!RootFailed(s) || c->root_index + 1 >= static_cast<int>(c->roots.size())) {
      return s;
    }
    if (g->rank() == 0) {
      fprintf(stderr, "sluice: context %s: %s; trying the next data root\n",
              name.c_str(), s.ToString().c_str());
    }
    first = c->root_index + 1;
  }
  s = ReclaimUncommitted(c.get());
  if (s.ok()) s = StartNodeWriter(c.get());
  if (s.ok()) s = StartTiers(c.get());
  if (!s.ok()) {
    if (c->drains) c->drains->Stop();
    if (c->node_server) c->node_server->Stop();
    if (c->fs) c->fs->Close();
    return s;
  }
  out->reset(new Context(std::move(c)));
  return Status::OK();
}

}  // namespace dataset

using dataset::CheckName;
using dataset::CommitRecord;
using dataset::Group;

Status ContextImpl::ListRecords(const std::string& dataset,
                                std::vector<DatasetIdInfo>* ids,
                                std::vector<std::string>* datasets) {
  std::vector<std::string> names;
  Status s = posix::ListDir(commit_dir, &names);
  if (!s.ok()) return s;
  std::map<int64_t, DatasetIdInfo> found;
  std::set<std::string> dsets;
  for (const auto& n : names) {
    std::string ds;
    int64_t id;
    bool reclaimed;
    if (!dataset::ParseRecordName(n, &ds, &id, &reclaimed)) continue;
    if (!reclaimed) dsets.insert(ds);
    if (!ids || ds != dataset) continue;
    std::string data;
    s = posix::ReadFile(commit_dir + "/" + n, &data);
    if (s.IsNotFound()) continue;  // unlinked meanwhile
    if (!s.ok()) return s;
    DatasetIdInfo info;
    info.id = id;
    if (reclaimed) {
      if (found.count(id)) continue;  // committed again since
      info.state = IdState::kReclaimed;
      info.commit_time_ns = strtoll(data.c_str(), nullptr, 10);
    } else {
      CommitRecord r;
      s = dataset::DecodeRecord(data, commit_dir + "/" + n, &r);
      if (!s.ok()) return s;
      if (r.dataset != ds || r.id != id) {
        return Status::Corruption("commit record " + commit_dir + "/" + n +
                                  " is of " + r.dataset + " id " +
                                  std::to_string(r.id));
      }
      info.state = IdState::kCommitted;
      info.bytes = r.bytes();
      info.commit_time_ns = r.commit_time_ns;
      info.ranks = r.ranks;
      info.writers = r.writers;
    }
    found[id] = info;
  }
  if (ids) {
    ids->clear();
    for (auto& [id, info] : found) ids->push_back(info);
  }
  if (datasets) datasets->assign(dsets.begin(), dsets.end());
  return Status::OK();
}

Context::Context(std::shared_ptr<ContextImpl> impl) : impl_(std::move(impl)) {}
// Not collective: a destructor may run after MPI has ended, or on one rank
// only (an exception unwinding). Fini is the collective end.
Context::~Context() { Finish(false); }

Status Context::InitSingle(const std::string& name,
                           const std::string& config_file,
                           std::unique_ptr<Context>* out) {
  return dataset::InitContext(dataset::NewSingleGroup(), name, config_file,
                              out);
}

Status Context::InitSingle(const std::string& name, const Config& settings,
                           std::unique_ptr<Context>* out) {
  return dataset::InitContext(dataset::NewSingleGroup(), name, "", out,
                              &settings);
}

int Context::rank() const { return impl_->group->rank(); }
int Context::size() const { return impl_->group->size(); }
const std::string& Context::name() const { return impl_->name; }
const std::string& Context::root() const { return impl_->root; }
const Config& Context::config() const { return impl_->config; }
ConfigValue Context::GetConfig(const std::string& name,
                               const std::string& dataset) const {
  return impl_->Get(name, dataset);
}

Status Context::SetConfig(const std::string& name, const std::string& value) {
  // What the store was opened with, and where: fixed for its lifetime.
  bool fixed = name == "data_roots" || name == "root" ||
               name == "extent_bytes" || name == "options" ||
               name == "config_file" || name == "config_file_prefix";
  for (const auto& o : StoreOptions::List()) fixed |= name == o.name;
  {
    if (fixed) {
      return Status::InvalidArgument(
          "variable " + name + " tunes the context's store and is fixed "
          "once the context is initialised: set it in the configuration "
          "file or the environment (" + Config::EnvironmentName(name) + ")");
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->config.Set(name, value);
}

Status Context::ListIds(const std::string& name,
                        std::vector<DatasetIdInfo>* out) {
  Status s = CheckName(name, "dataset name");
  if (!s.ok()) return s;
  return impl_->ListRecords(name, out, nullptr);
}

Status Context::ListDatasets(std::vector<std::string>* out) {
  return impl_->ListRecords("", nullptr, out);
}

Status Context::UnlinkId(const std::string& name, int64_t id) {
  ContextImpl* c = impl_.get();
  Group* g = c->group.get();
  Status s = CheckName(name, "dataset name");
  if (s.ok() && id < 0) s = Status::InvalidArgument("dataset id must be >= 0");
  if (s.ok() && c->read_only) {
    s = Status::InvalidArgument("context " + c->name + " is open read-only");
  }
  // Its drain, queued or running here, ends first.
  if (s.ok() && c->drains) c->drains->Cancel(name, id);
  // Rank 0 removes every copy: drained ones (their index first), then the
  // records of the roots that hold its stores, the context's last; the
  // id is gone once they are (a failure midway leaves it readable).
  std::string roots;  // the roots whose stores hold it
  if (s.ok() && g->rank() == 0) s = dataset::UnlinkEverywhere(c, name, id, &roots);
  s = g->Agree(s, "unlinking " + name + " id " + std::to_string(id));
  if (!s.ok()) return s;
  s = g->Broadcast(&roots, 0);
  // Other nodes' copies of the records (node-local roots).
  if (s.ok()) s = dataset::UnlinkCopies(c, name, id, roots);
  s = g->Agree(s, "unlinking the copies of " + name + " id " +
                      std::to_string(id));
  if (!s.ok()) return s;
  // The id is gone; its data goes now, or, if this fails, at the next
  // context's open (it has no record).
  const std::string dir = "/" + name + "/" + std::to_string(id);
  auto remove = [&](FileSystem* f) {
    FileInfo info;
    Status r = f->Stat(dir, &info);
    if (r.IsNotFound()) return Status::OK();  // nothing of it here
    if (r.ok()) r = dataset::RemoveFsTree(f, dir);
    return r.ok() ? f->Sync() : r;
  };
  s = dataset::ForEachStore(c, remove);
  // This rank's stores on the other roots that held it (a fallback).
  for (size_t pos = 0; s.ok() && pos < roots.size();) {
    const size_t nl = roots.find('\n', pos);
    const int k = atoi(roots.c_str() + pos);
    pos = nl + 1;
    if (k == c->root_index) continue;
    FileSystem* f = nullptr;
    Status r = c->StoreAt(k, false, &f);
    if (r.ok()) r = remove(f);
    if (!r.IsNotFound()) s = r;
  }
  return g->Agree(s, "removing the data of " + name + " id " +
                         std::to_string(id));
}

Status Context::IdStats(const std::string& name, int64_t id,
                        DatasetStats* out) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->id_stats.find({name, id});
  if (it == impl_->id_stats.end()) {
    return Status::NotFound("this context closed no " + name + " id " +
                            std::to_string(id));
  }
  *out = it->second;
  return Status::OK();
}

namespace {
std::atomic<bool> usr1_arrived{false};
std::once_flag usr1_once;
struct sigaction usr1_previous;

void OnUsr1(int sig, siginfo_t* info, void* uctx) {
  usr1_arrived.store(true);
  // The program's own handler, if it had one, still runs.
  if (usr1_previous.sa_flags & SA_SIGINFO) {
    if (usr1_previous.sa_sigaction) usr1_previous.sa_sigaction(sig, info, uctx);
  } else if (usr1_previous.sa_handler != SIG_DFL &&
             usr1_previous.sa_handler != SIG_IGN) {
    usr1_previous.sa_handler(sig);
  }
}

// Seconds from a duration variable's text ("90", "30m", "2h", "1d"); the
// configuration checked it when it was set.
double Seconds(const std::string& v) {
  double x = 0;
  return Config::ParseDuration(v, &x).ok() ? x : 0;
}
}  // namespace

Status Context::ShouldCheckpoint(const std::string& name, bool* now) {
  ContextImpl* c = impl_.get();
  *now = false;
  Status s = CheckName(name, "dataset name");
  if (!s.ok()) return s;
  std::call_once(usr1_once, [] {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = OnUsr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &usr1_previous);
  });
  bool yes = usr1_arrived.exchange(false);
  double cost = 0, since = 0;
  bool have = false;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    auto it = c->last_checkpoint.find(name);
    if (it != c->last_checkpoint.end()) {
      have = true;
      cost = it->second.cost_s;
      since = (dataset::NowNs() - it->second.commit_ns) / 1e9;
    }
  }
  if (!have) yes = true;
  const double wall = dataset::WallNs() / 1e9;
  const double end = Seconds(c->Get("job_end_time", name).value);
  double margin = Seconds(c->Get("job_end_margin", name).value);
  if (margin <= 0) margin = 2 * cost;
  if (end > 0 && wall + margin >= end) yes = true;
  const double mtbf = Seconds(c->Get("mtbf", name).value);
  if (have && mtbf > 0) {
    double interval = mtbf;
    if (cost < 2 * mtbf) {
      const double r = cost / (2 * mtbf);
      interval = std::sqrt(2 * cost * mtbf) * (1 + std::sqrt(r) / 3 + r / 9) -
                 cost;
    }
    if (since >= interval) yes = true;
  }
  s = c->group->AnyTrue(&yes);
  *now = yes;
  return s;
}

DatasetStats Context::TotalStats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->total;
}

Status Context::Fini() {
  Status s = Finish(true);
  return impl_->group->Agree(s, "ending context " + impl_->name);
}

Status Context::Finish(bool wait_drains) {
  ContextImpl* c = impl_.get();
  Status s;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->finished) return Status::OK();
  }
  // The drains of this process's store end before the store closes: Fini
  // waits for them, a destructor stops them (the next context resumes).
  Status d = dataset::FinishTiers(c, wait_drains);
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->finished) return Status::OK();
    c->finished = true;
    if (c->open_datasets > 0) {
      s = Status::InvalidArgument(
          "context " + c->name + " ended with " +
          std::to_string(c->open_datasets) +
          " dataset(s) open: their ids were not committed");
    }
    if (dataset::Truthy(c->config.Get("stats").value) && c->group->rank() == 0) {
      for (const auto& line : c->stat_lines) {
        fprintf(stderr, "%s\n", line.c_str());
      }
    }
  }
  c->worker.Stop();
  // The node's other ranks write no more (Fini is collective; a
  // destructor's end fails their writes, and their ids do not commit).
  // Their sinks live on with the context: a dataset still open refers to
  // one, and finds its requests failing.
  if (c->node_server) c->node_server->Stop();
  // A store closes with an error when it could not write what it holds;
  // one whose root failed under an id holds nothing a commit needs (its
  // committed ids were durable at their commits, the rest moved on).
  auto close = [c](FileSystem* f) {
    Status r = f->Close();
    bool failed = false;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      failed = c->failed_fs.count(f) > 0;
    }
    if (!r.ok() && failed) {
      fprintf(stderr,
              "sluice: context %s: the store %s, whose data root failed "
              "under a dataset id, closed with: %s\n",
              c->name.c_str(), dataset::AsWriter(f)->store()->path().c_str(),
              r.ToString().c_str());
      r = Status::OK();
    }
    return r;
  };
  Status f = c->fs ? close(c->fs.get()) : Status::OK();
  std::map<int, std::unique_ptr<FileSystem>> others;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    others.swap(c->root_fs);
  }
  for (auto& [k, other] : others) {
    Status r = close(other.get());
    if (f.ok()) f = r;
  }
  if (s.ok()) s = d;
  return s.ok() ? f : s;
}

}  // namespace sluice
