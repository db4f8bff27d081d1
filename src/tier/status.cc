// Where drains stand, read only, and drains by a process that is no job
// (status.h).
#include "tier/status.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "dataset/record.h"
#include "tier/container.h"
#include "util/posix.h"

namespace sluice {
namespace tier {

namespace {

// DATASET.ID.index -> (DATASET, ID).
bool ParseIndexName(const std::string& n, IdName* out) {
  static const std::string kSuffix = ".index";
  if (n.size() <= kSuffix.size() ||
      n.compare(n.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return false;
  }
  bool reclaimed = false;
  return dataset::ParseRecordName(n.substr(0, n.size() - kSuffix.size()),
                                  &out->dataset, &out->id, &reclaimed) &&
         !reclaimed;
}

// The names in `dir`; none when it is missing.
Status ListIfThere(const std::string& dir, std::vector<std::string>* names) {
  names->clear();
  Status s = posix::ListDir(dir, names);
  if (s.IsNotFound()) return Status::OK();
  return s;
}

// The pid of a process holding a flock(2) on `path`, as /proc/locks shows
// it (this machine only); 0 when none is seen.
int FlockHolder(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  FILE* f = fopen("/proc/locks", "re");
  if (!f) return 0;
  int holder = 0;
  char line[512];
  // "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5309773 0 EOF"; a process
  // waiting for the lock has a line with "->" in it.
  while (holder == 0 && fgets(line, sizeof line, f)) {
    const char* p = strstr(line, "FLOCK ");
    if (!p || strstr(line, "->")) continue;
    char kind[16], mode[16];
    int pid = 0;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (sscanf(p, "FLOCK %15s %15s %d %x:%x:%llu", kind, mode, &pid, &maj,
               &min, &ino) == 6 &&
        ino == static_cast<unsigned long long>(st.st_ino) &&
        makedev(maj, min) == st.st_dev) {
      holder = pid;
    }
  }
  fclose(f);
  return holder;
}

// The writers of a staged id from its record on SRC: journals' bytes,
// done markers, holders.
Status StagedWriters(const std::string& src_dir, const std::string& dst_dir,
                     const IdName& n, std::vector<WriterStatus>* out) {
  out->clear();
  std::map<int, WriterProgress> progress;
  Status s = DrainProgress(src_dir, dst_dir, n.dataset, n.id, &progress);
  if (!s.ok()) return s;
  const std::string staging = StagingDir(dst_dir, n.dataset, n.id);
  for (const auto& [w, p] : progress) {
    WriterStatus ws;
    ws.writer = w;
    ws.bytes = p.bytes;
    ws.total = p.total;
    ws.done = p.done;
    ws.holder_pid = FlockHolder(posix::JoinPath(staging, JournalName(w)));
    out->push_back(ws);
  }
  return Status::OK();
}

}  // namespace

Status ListCommitted(const std::string& ctx_dir, std::vector<IdName>* out) {
  out->clear();
  std::vector<std::string> names;
  Status s = posix::ListDir(posix::JoinPath(ctx_dir, "commit"), &names);
  if (!s.ok()) return s;
  for (const auto& n : names) {
    IdName id;
    bool reclaimed = false;
    if (dataset::ParseRecordName(n, &id.dataset, &id.id, &reclaimed) &&
        !reclaimed) {
      out->push_back(id);
    }
  }
  std::sort(out->begin(), out->end());
  return Status::OK();
}

Status ListDrained(const std::string& dst_dir, std::vector<IdName>* published,
                   std::vector<IdName>* staged) {
  published->clear();
  staged->clear();
  std::vector<std::string> names;
  Status s = ListIfThere(posix::JoinPath(dst_dir, "commit"), &names);
  for (const auto& n : names) {
    IdName id;
    if (ParseIndexName(n, &id)) published->push_back(id);
  }
  if (s.ok()) s = ListIfThere(posix::JoinPath(dst_dir, "drain"), &names);
  for (const auto& n : names) {
    IdName id;
    bool reclaimed = false;
    if (dataset::ParseRecordName(n, &id.dataset, &id.id, &reclaimed) &&
        !reclaimed) {
      staged->push_back(id);
    }
  }
  std::sort(published->begin(), published->end());
  std::sort(staged->begin(), staged->end());
  return s;
}

bool HasIndex(const std::string& dst_dir, const std::string& dataset,
              int64_t id) {
  struct stat st;
  const std::string path = posix::JoinPath(posix::JoinPath(dst_dir, "commit"),
                                           IndexName(dataset, id));
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status DrainStatus(const std::string& src_dir, const std::string& dst_dir,
                   std::vector<IdStatus>* out) {
  out->clear();
  std::vector<IdName> committed, published, staged;
  Status s = ListCommitted(src_dir, &committed);
  if (s.ok()) s = ListDrained(dst_dir, &published, &staged);
  if (!s.ok()) return s;
  std::map<IdName, IdStatus> all;
  for (const auto& n : committed) all[n].on_source = true;
  for (const auto& n : published) all[n].durable = true;
  for (const auto& n : staged) all[n].staged = true;
  for (auto& [n, st] : all) {
    st.name = n;
    if (st.on_source) {
      const std::string path =
          posix::JoinPath(posix::JoinPath(src_dir, "commit"),
                          dataset::RecordName(n.dataset, n.id));
      std::string data;
      dataset::CommitRecord rec;
      Status r = posix::ReadFile(path, &data);
      if (r.ok()) r = dataset::DecodeRecord(data, path, &rec);
      if (r.ok()) st.bytes = rec.bytes();
      if (r.IsNotFound()) {
        st.on_source = false;  // removed since the listing
      } else if (!r.ok()) {
        st.error = r;
      }
    }
    if (st.staged && st.on_source && st.error.ok()) {
      Status w = StagedWriters(src_dir, dst_dir, n, &st.writers);
      if (w.IsNotFound()) {
        st.on_source = false;
      } else if (!w.ok()) {
        st.error = w;
      }
    }
    if (st.durable && st.bytes == 0 && st.error.ok()) {
      std::unique_ptr<DrainedId> d;
      Status r = DrainedId::Open(dst_dir, n.dataset, n.id, &d);
      if (r.ok()) {
        st.bytes = d->record().bytes();
      } else if (r.IsNotFound()) {
        st.durable = false;  // removed since the listing
      } else {
        st.error = r;
      }
    }
    if (st.on_source || st.durable || st.staged) out->push_back(st);
  }
  return Status::OK();
}

SourceDrainer::SourceDrainer(const std::string& src_dir,
                             const std::string& dst_dir,
                             const StoreOptions& options)
    : src_(src_dir), dst_(dst_dir),
      source_(NewReadOnlySource(src_dir, options)) {}

SourceDrainer::~SourceDrainer() = default;

Status SourceDrainer::Drain(const std::string& dataset, int64_t id,
                            const DrainOptions& options, DrainResult* out) {
  return DrainId(src_, dst_, dataset, id, {}, source_.get(), options, out);
}

Status SourceDrainer::Durable(const std::string& dataset, int64_t id,
                              bool* durable) {
  return Published(dst_, dataset, id, durable);
}

}  // namespace tier
}  // namespace sluice
