// The drain (drain.h).
#include "tier/drain.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "dataset/record.h"
#include "fs/format.h"
#include "fs/reader.h"
#include "util/coding.h"
#include "util/env.h"
#include "util/hash.h"
#include "util/posix.h"

namespace sluice {
namespace tier {

namespace {

using dataset::CommitRecord;
using dataset::PartRecord;

constexpr char kPlanMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'D', 'P'};
constexpr uint32_t kPlanVersion = 1;
constexpr char kPlanName[] = "plan";
constexpr char kStagedIndex[] = "index";

std::string Join(const std::string& a, const std::string& b) {
  return posix::JoinPath(a, b);
}

std::string IdText(const std::string& dataset, int64_t id) {
  return "dataset " + dataset + " id " + std::to_string(id);
}

bool Exists(const std::string& path) {
  posix::PathKind k;
  return posix::Probe(path, &k).ok() && k != posix::PathKind::kMissing;
}

// A file closed whatever happens.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) Env::Default()->Close(fd);
  }
};

// `data` to `path` through a temporary name of this process and thread
// (two drainers may publish the same file at once), fsync, rename,
// directory fsync.
Status WriteAtomicShared(const std::string& dir, const std::string& name,
                         std::string_view data) {
  Env* env = Env::Default();
  const std::string path = Join(dir, name);
  const std::string tmp =
      path + ".tmp." + std::to_string(getpid()) + "." +
      std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  Fd f;
  f.fd = env->Open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f.fd < 0) return posix::Error("cannot create", tmp, errno);
  if (int e = env->WriteFull(f.fd, data.data(), data.size(), 0)) {
    env->Unlink(tmp.c_str());
    return posix::Error("cannot write", tmp, e);
  }
  if (env->Fsync(f.fd) != 0) {
    const int e = errno;
    env->Unlink(tmp.c_str());
    return posix::Error("cannot fsync", tmp, e);
  }
  if (env->Rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    env->Unlink(tmp.c_str());
    return posix::Error("cannot rename to", path, e);
  }
  return posix::SyncDir(dir);
}

Status Unlink(const std::string& path) {
  if (Env::Default()->Unlink(path.c_str()) != 0 && errno != ENOENT) {
    return posix::Error("cannot remove", path, errno);
  }
  return Status::OK();
}

Status ReadRecord(const std::string& src_dir, const std::string& dataset,
                  int64_t id, CommitRecord* rec, std::string* bytes) {
  const std::string path =
      Join(Join(src_dir, "commit"), dataset::RecordName(dataset, id));
  Status s = posix::ReadFile(path, bytes);
  if (s.IsNotFound()) {
    return Status::NotFound(IdText(dataset, id) + " is not committed in " +
                            src_dir);
  }
  if (!s.ok()) return s;
  return dataset::DecodeRecord(*bytes, path, rec);
}

// The plan file: which aggregation the first drainer chose, for which
// commit of the id.
std::string EncodePlanFile(Aggregation a, int group, uint64_t record_sum) {
  std::string out(kPlanMagic, 8);
  char b[8];
  EncodeFixed32(b, kPlanVersion);
  out.append(b, 4);
  EncodeFixed32(b, static_cast<uint32_t>(a));
  out.append(b, 4);
  EncodeFixed32(b, static_cast<uint32_t>(group));
  out.append(b, 4);
  EncodeFixed64(b, record_sum);
  out.append(b, 8);
  EncodeFixed64(b, XXH64(out.data(), out.size(), 0));
  out.append(b, 8);
  return out;
}

Status DecodePlanFile(const std::string& data, const std::string& what,
                      Aggregation* a, int* group, uint64_t* record_sum) {
  if (data.size() != 36 || memcmp(data.data(), kPlanMagic, 8) != 0 ||
      XXH64(data.data(), 28, 0) != DecodeFixed64(data.data() + 28)) {
    return Status::Corruption("drain plan " + what + " is damaged");
  }
  if (DecodeFixed32(data.data() + 8) != kPlanVersion) {
    return Status::VersionTooNew("drain plan " + what + " has version " +
                                 std::to_string(DecodeFixed32(data.data() + 8)));
  }
  const uint32_t agg = DecodeFixed32(data.data() + 12);
  if (agg > 2) return Status::Corruption("drain plan " + what + " is damaged");
  *a = static_cast<Aggregation>(agg);
  *group = static_cast<int>(DecodeFixed32(data.data() + 16));
  *record_sum = DecodeFixed64(data.data() + 20);
  return Status::OK();
}

// The writers holding parts of `rec`, ascending.
std::vector<int> Writers(const CommitRecord& rec) {
  std::set<int> w;
  for (const auto& e : rec.elements) {
    for (const auto& p : e.parts) w.insert(p.writer);
  }
  return {w.begin(), w.end()};
}

uint64_t ReadSpan(const PartRecord& p) {
  if (p.ranges.empty()) return p.size;
  uint64_t n = 0;
  for (const auto& [b, e] : p.ranges) n += e - b;
  return n;
}

Status ReadJournalFile(int fd, const std::string& path, std::string* data) {
  data->clear();
  char buf[65536];
  for (;;) {
    size_t got = 0;
    if (int e = Env::Default()->ReadFull(fd, buf, sizeof buf,
                                         static_cast<off_t>(data->size()),
                                         &got)) {
      return posix::Error("cannot read", path, e);
    }
    data->append(buf, got);
    if (got < sizeof buf) return Status::OK();
  }
}

// Every writer's journal in `staging`, replayed into one state.
Status ReplayAll(const std::string& staging, const CommitRecord& rec,
                 const std::vector<int>& writers, JournalState* state) {
  state->parts.assign(rec.elements.size(), {});
  state->done.assign(rec.elements.size(), {});
  for (size_t e = 0; e < rec.elements.size(); ++e) {
    state->parts[e].resize(rec.elements[e].parts.size());
    state->done[e].assign(rec.elements[e].parts.size(), false);
  }
  for (int w : writers) {
    const std::string path = Join(staging, JournalName(w));
    std::string data;
    Status s = posix::ReadFile(path, &data);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    std::vector<JournalEntry> entries;
    uint64_t valid = 0;
    s = DecodeJournal(data, path, &entries, &valid);
    if (!s.ok()) return s;
    JournalState one;
    s = ReplayJournal(rec, entries, path, &one);
    if (!s.ok()) return s;
    for (size_t e = 0; e < rec.elements.size(); ++e) {
      for (size_t i = 0; i < rec.elements[e].parts.size(); ++i) {
        if (rec.elements[e].parts[i].writer != w) continue;
        state->parts[e][i] = one.parts[e][i];
        state->done[e][i] = one.done[e][i];
      }
    }
  }
  return Status::OK();
}

// The lock of DST's drain directory: every step that creates, publishes
// or removes a drained id takes it (flock(2) on a regular file, which
// every file system that has flock locks).
class DstLock {
 public:
  Status Lock(const std::string& dst_dir) {
    const std::string dir = Join(dst_dir, "drain");
    Status s = Exists(dir) ? Status::OK() : posix::CreateDirs(dir);
    if (!s.ok()) return s;
    const std::string path = Join(dir, "lock");
    Env* env = Env::Default();
    f_.fd = env->Open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f_.fd < 0) return posix::Error("cannot open", path, errno);
    if (env->Flock(f_.fd, LOCK_EX) != 0) {
      return posix::Error(
          "cannot lock (the file system must support flock(2))", path, errno);
    }
    return Status::OK();
  }

 private:
  Fd f_;
};

// Writes the index into its final place and drops the staged copy in the
// data directory: the last step of publishing. Under the lock.
Status PublishIndex(const std::string& dst_dir, const std::string& dataset,
                    int64_t id) {
  const std::string data_dir = DataDir(dst_dir, dataset, id);
  std::string index;
  Status s = posix::ReadFile(Join(data_dir, kStagedIndex), &index);
  if (!s.ok()) return s;
  DrainIndex check;
  s = DecodeIndex(index, Join(data_dir, kStagedIndex), &check);
  if (!s.ok()) return s;
  s = WriteAtomicShared(Join(dst_dir, "commit"), IndexName(dataset, id), index);
  if (!s.ok()) return s;
  s = Unlink(Join(data_dir, kStagedIndex));
  if (s.ok()) s = posix::SyncDir(data_dir);
  return s;
}

// From a staging directory whose index is written: drops the journals,
// markers and plan, renames it to the data directory, publishes the index.
// Under the lock.
Status FinishPublish(const std::string& dst_dir, const std::string& dataset,
                     int64_t id) {
  const std::string staging = StagingDir(dst_dir, dataset, id);
  const std::string data_dir = DataDir(dst_dir, dataset, id);
  std::vector<std::string> names;
  Status s = posix::ListDir(staging, &names);
  if (!s.ok()) return s;
  for (const auto& n : names) {
    if (n.rfind("c.", 0) == 0 || n == kStagedIndex) continue;
    s = Unlink(Join(staging, n));
    if (!s.ok()) return s;
  }
  s = posix::SyncDir(staging);
  if (!s.ok()) return s;
  // A data directory without an index there or in commit/ is what a
  // removal killed midway left: not anyone's.
  if (Exists(data_dir)) {
    s = posix::RemoveTree(data_dir);
    if (!s.ok()) return s;
  }
  if (Env::Default()->Rename(staging.c_str(), data_dir.c_str()) != 0) {
    return posix::Error("cannot rename " + staging + " to", data_dir, errno);
  }
  s = posix::SyncDir(Join(dst_dir, "data"));
  if (s.ok()) s = posix::SyncDir(Join(dst_dir, "drain"));
  if (!s.ok()) return s;
  return PublishIndex(dst_dir, dataset, id);
}

// Under the lock: whether the id is published, finishing a publication a
// drainer stopped in the middle of.
Status PublishedLocked(const std::string& dst_dir, const std::string& dataset,
                       int64_t id, bool* durable) {
  *durable = false;
  const std::string data_dir = DataDir(dst_dir, dataset, id);
  Status s;
  if (Exists(Join(Join(dst_dir, "commit"), IndexName(dataset, id)))) {
    if (Exists(Join(data_dir, kStagedIndex))) {
      s = Unlink(Join(data_dir, kStagedIndex));
      if (s.ok()) s = posix::SyncDir(data_dir);
    }
  } else if (Exists(Join(data_dir, kStagedIndex))) {
    s = PublishIndex(dst_dir, dataset, id);
  } else if (Exists(Join(StagingDir(dst_dir, dataset, id), kStagedIndex))) {
    s = FinishPublish(dst_dir, dataset, id);
  } else {
    return Status::OK();
  }
  if (s.ok()) *durable = true;
  return s;
}

// Under the lock: removes id `id` from DST (its index first).
Status RemoveLocked(const std::string& dst_dir, const std::string& dataset,
                    int64_t id) {
  const std::string commit = Join(dst_dir, "commit");
  Status s = Unlink(Join(commit, IndexName(dataset, id)));
  if (s.ok() && Exists(commit)) s = posix::SyncDir(commit);
  if (s.ok()) s = posix::RemoveTree(DataDir(dst_dir, dataset, id));
  if (s.ok()) s = posix::RemoveTree(StagingDir(dst_dir, dataset, id));
  return s;
}

// Whether the index on DST is of the commit whose record is `record`.
Status SameCommit(const std::string& dst_dir, const std::string& dataset,
                  int64_t id, const std::string& record, bool* same) {
  const std::string path = Join(Join(dst_dir, "commit"), IndexName(dataset, id));
  std::string data;
  Status s = posix::ReadFile(path, &data);
  if (!s.ok()) return s;
  DrainIndex index;
  s = DecodeIndex(data, path, &index);
  if (!s.ok()) return s;
  *same = dataset::EncodeRecord(index.record) == record;
  return Status::OK();
}

// Publishes the id if every writer is done. Under the lock, so two last
// drainers publish once.
Status MaybePublish(const std::string& dst_dir, const CommitRecord& rec,
                    const DrainPlan& plan, bool* durable, bool* published) {
  *durable = false;
  const std::string& dataset = rec.dataset;
  const int64_t id = rec.id;
  const std::string staging = StagingDir(dst_dir, dataset, id);
  Env* env = Env::Default();
  DstLock lock;
  Status s = lock.Lock(dst_dir);
  if (!s.ok()) return s;
  s = PublishedLocked(dst_dir, dataset, id, durable);
  if (!s.ok() || *durable || !Exists(staging)) return s;
  const std::vector<int> writers = Writers(rec);
  for (int w : writers) {
    if (!Exists(Join(staging, DoneName(w)))) return Status::OK();
  }
  JournalState state;
  s = ReplayAll(staging, rec, writers, &state);
  if (!s.ok()) return s;
  DrainIndex index;
  index.record = rec;
  index.plan = plan;
  index.chunk_bytes = kChunkBytes;
  index.parts = state.parts;
  // What the journals say each container holds, at least.
  std::vector<uint64_t> journaled(static_cast<size_t>(plan.containers), 0);
  for (size_t e = 0; e < rec.elements.size(); ++e) {
    for (size_t i = 0; i < rec.elements[e].parts.size(); ++i) {
      if (!state.done[e][i]) {
        return Status::Corruption(
            staging + ": writer " +
            std::to_string(rec.elements[e].parts[i].writer) +
            " is marked done but its journal does not finish element " +
            rec.elements[e].name);
      }
      const Slot& slot = plan.slots[e][i];
      const uint64_t packed = state.parts[e][i].packed_bytes();
      if (packed > 0) {
        uint64_t& j = journaled[static_cast<size_t>(slot.container)];
        j = std::max(j, slot.offset + packed);
      }
    }
  }
  // Every container exists and has its planned size (a slot's unused tail
  // is a hole); one the journals put bytes in must hold them already (a
  // lost file is not made anew, empty).
  for (int k = 0; k < plan.containers; ++k) {
    const std::string path = Join(staging, ContainerName(k));
    const uint64_t need = journaled[static_cast<size_t>(k)];
    Fd c;
    c.fd = env->Open(path.c_str(),
                     O_WRONLY | O_CLOEXEC | (need > 0 ? 0 : O_CREAT), 0644);
    if (c.fd < 0) return posix::Error("cannot open", path, errno);
    struct stat st;
    if (fstat(c.fd, &st) != 0) return posix::Error("cannot stat", path, errno);
    if (static_cast<uint64_t>(st.st_size) < need) {
      return Status::Corruption(path + " holds " +
                                std::to_string(st.st_size) +
                                " bytes; its journals say " +
                                std::to_string(need) + " are durable there");
    }
    if (env->Ftruncate(c.fd, static_cast<off_t>(plan.container_bytes[k])) !=
            0 ||
        env->Fsync(c.fd) != 0) {
      return posix::Error("cannot size", path, errno);
    }
  }
  s = posix::SyncDir(staging);
  if (s.ok()) s = WriteAtomicShared(staging, kStagedIndex, EncodeIndex(index));
  if (s.ok()) s = FinishPublish(dst_dir, dataset, id);
  if (s.ok()) *durable = *published = true;
  return s;
}

// Drains the parts of writer `w`.
class WriterDrain {
 public:
  WriterDrain(const CommitRecord& rec, const DrainPlan& plan,
              const std::string& staging, int w, fs::FsStore* store,
              const DrainOptions& opt, DrainResult* out)
      : rec_(rec), plan_(plan), staging_(staging), w_(w), store_(store),
        opt_(opt), out_(out) {}
  ~WriterDrain() {
    for (auto& [k, fd] : containers_) Env::Default()->Close(fd);
  }

  Status Run() {
    Env* env = Env::Default();
    journal_path_ = Join(staging_, JournalName(w_));
    journal_.fd = env->Open(journal_path_.c_str(),
                            O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (journal_.fd < 0) {
      return posix::Error("cannot open", journal_path_, errno);
    }
    if (env->Flock(journal_.fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return Status::Busy(journal_path_ + " is being drained by another "
                            "process");
      }
      return posix::Error("cannot lock", journal_path_, errno);
    }
    Status sd = posix::SyncDir(staging_);  // the journal's name durable
    if (!sd.ok()) return sd;
    std::string data;
    Status s = ReadJournalFile(journal_.fd, journal_path_, &data);
    std::vector<JournalEntry> entries;
    uint64_t valid = 0;
    if (s.ok()) s = DecodeJournal(data, journal_path_, &entries, &valid);
    if (s.ok()) s = ReplayJournal(rec_, entries, journal_path_, &state_);
    if (!s.ok()) return s;
    if (valid < data.size()) {
      // A torn entry: cut it before appending.
      if (env->Ftruncate(journal_.fd, static_cast<off_t>(valid)) != 0 ||
          env->Fdatasync(journal_.fd) != 0) {
        return posix::Error("cannot truncate", journal_path_, errno);
      }
    }
    journal_end_ = valid;
    start_ = std::chrono::steady_clock::now();
    for (size_t e = 0; e < rec_.elements.size(); ++e) {
      for (size_t i = 0; i < rec_.elements[e].parts.size(); ++i) {
        const PartRecord& p = rec_.elements[e].parts[i];
        if (p.writer != w_) continue;
        out_->total += ReadSpan(p);
        if (opt_.bytes_total) opt_.bytes_total->fetch_add(ReadSpan(p));
        const uint64_t had = state_.parts[e][i].packed_bytes();
        out_->resumed += had;
        if (opt_.bytes_done) opt_.bytes_done->fetch_add(had);
        if (state_.done[e][i]) continue;
        s = DrainPart(e, i);
        if (!s.ok()) return s;
      }
    }
    // Every part is durable and verified: the writer is done.
    const std::string done = Join(staging_, DoneName(w_));
    if (!Exists(done)) {
      Fd d;
      d.fd = env->Open(done.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (d.fd < 0 || env->Fsync(d.fd) != 0) {
        return posix::Error("cannot create", done, errno);
      }
      s = posix::SyncDir(staging_);
      // Another writer, done at once, may have seen this marker and
      // published the id (its drain directory renamed): then the marker
      // has done its work.
      if (s.IsNotFound()) s = Status::OK();
    }
    return s;
  }

 private:
  Status Container(int k, int* fd) {
    auto it = containers_.find(k);
    if (it != containers_.end()) {
      *fd = it->second;
      return Status::OK();
    }
    const std::string path = Join(staging_, ContainerName(k));
    *fd = Env::Default()->Open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return posix::Error("cannot open", path, errno);
    containers_[k] = *fd;
    // Its name is durable before any journal entry speaks of its bytes.
    return posix::SyncDir(staging_);
  }

  Status DrainPart(size_t e, size_t i) {
    const auto& el = rec_.elements[e];
    const PartRecord& p = el.parts[i];
    const std::string path =
        dataset::PartPath("/" + rec_.dataset + "/" + std::to_string(rec_.id),
                          rec_.mode, el.kind, el.name, p.rank);
    fs::Inode parent, inode;
    std::string leaf;
    bool exists = false;
    Status s = store_->Resolve(path, &parent, &leaf, &inode, &exists);
    if (s.ok() && !exists) {
      s = Status::Corruption(store_->path() + " has no " + path +
                             ", which the commit record of " +
                             IdText(rec_.dataset, rec_.id) + " says it holds");
    }
    if (s.ok() && (inode.size != p.size || inode.checksum != p.checksum ||
                   (inode.flags & (fs::kChecksumStale | fs::kUnclosed)))) {
      s = Status::Corruption(store_->path() + ": " + path +
                             " is not what the commit record of " +
                             IdText(rec_.dataset, rec_.id) + " says");
    }
    if (!s.ok()) return s;
    slot_ = plan_.slots[e][i];
    s = Container(slot_.container, &cfd_);
    if (!s.ok()) return s;
    DrainedPart& have = state_.parts[e][i];
    packed_ = have.packed_bytes();
    uint64_t pos = have.extents.empty()
                       ? 0
                       : have.extents.back().offset + have.extents.back().length;
    entry_ = JournalEntry();
    entry_.element = static_cast<uint32_t>(e);
    entry_.part = static_cast<uint32_t>(i);
    entry_.first_chunk = static_cast<uint32_t>(have.chunk_sums.size());
    pack_.resize(opt_.flush_bytes);
    pack_len_ = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges = p.ranges;
    if (ranges.empty()) ranges.push_back({0, p.size});
    const size_t step = kChunkBytes;
    buf_.resize(step);
    fs::Cursor cursor;
    // The part's file checksum, from the extents as they are read: a part
    // read from its start is checked against its inode's (an extent lost
    // from the store would otherwise drain as a hole); a resumed one is
    // checked whole (VerifyFile) at its end.
    const bool whole = pos == 0;
    fs::FileChecksum running(inode.size);
    uint64_t summed_to = 0;
    if (whole) {
      cursor.on_extent_entered = [&](uint64_t off, uint64_t len, uint64_t sum) {
        if (off >= summed_to) {
          running.Add(off, len, sum);
          summed_to = off + len;
        }
      };
    }
    for (const auto& [rb, re] : ranges) {
      for (uint64_t off = std::max(rb, pos); off < re;) {
        if (opt_.stop && opt_.stop->load()) {
          return Status::Incomplete("the drain of " +
                                 IdText(rec_.dataset, rec_.id) + " stopped");
        }
        const size_t n = static_cast<size_t>(std::min<uint64_t>(step, re - off));
        std::vector<std::pair<uint64_t, uint64_t>> covered;
        s = fs::ReadRange(store_, inode.ino, store_->path() + ":" + path, off,
                          n, buf_.data(), &cursor, &covered);
        if (!s.ok()) return s;
        for (auto [cb, ce] : covered) {
          while (cb < ce) {
            const uint64_t take =
                std::min<uint64_t>(ce - cb, opt_.flush_bytes - pack_len_);
            memcpy(&pack_[pack_len_], buf_.data() + (cb - off), take);
            const uint64_t packed = packed_ + pack_len_;
            if (!entry_.extents.empty() &&
                entry_.extents.back().offset + entry_.extents.back().length ==
                    cb &&
                entry_.extents.back().packed + entry_.extents.back().length ==
                    packed) {
              entry_.extents.back().length += take;
            } else {
              entry_.extents.push_back({cb, take, packed});
            }
            pack_len_ += take;
            cb += take;
            if (pack_len_ == opt_.flush_bytes) {
              s = Flush(e, i, false);
              if (!s.ok()) return s;
            }
          }
        }
        off += n;
      }
    }
    const Status bad = Status::Corruption(
        store_->path() + ": " + path + " does not match its file checksum "
        "(an extent is missing or damaged); its drain stops");
    if (whole && running.Value() != inode.checksum) return bad;
    if (!whole) {
      s = fs::VerifyFile(store_, inode, path);
      if (!s.ok()) return s;
    }
    return Flush(e, i, true);
  }

  // Writes the packed bytes, makes them durable, reads them back and checks
  // them, then journals them.
  Status Flush(size_t e, size_t i, bool done) {
    Env* env = Env::Default();
    const std::string cpath = Join(staging_, ContainerName(slot_.container));
    if (packed_ + pack_len_ > slot_.bytes) {
      return Status::Corruption(store_->path() + ": a part of element " +
                                rec_.elements[e].name + " of " +
                                IdText(rec_.dataset, rec_.id) +
                                " holds more bytes than its record says");
    }
    const off_t at = static_cast<off_t>(slot_.offset + packed_);
    std::vector<uint64_t> sums;
    for (size_t c = 0; c < pack_len_; c += kChunkBytes) {
      sums.push_back(XXH64(pack_.data() + c,
                           std::min<size_t>(kChunkBytes, pack_len_ - c), 0));
    }
    if (pack_len_ > 0) {
      if (int err = env->WriteFull(cfd_, pack_.data(), pack_len_, at)) {
        return posix::Error("cannot write", cpath, err);
      }
      if (env->Fdatasync(cfd_) != 0) {
        return posix::Error("cannot fdatasync", cpath, errno);
      }
      // Read back from the device, not the page cache.
      posix_fadvise(cfd_, at, static_cast<off_t>(pack_len_),
                    POSIX_FADV_DONTNEED);
      back_.resize(pack_len_);
      size_t got = 0;
      if (int err = env->ReadFull(cfd_, back_.data(), pack_len_, at, &got)) {
        return posix::Error("cannot read back", cpath, err);
      }
      for (size_t c = 0, k = 0; c < pack_len_; c += kChunkBytes, ++k) {
        const size_t len = std::min<size_t>(kChunkBytes, pack_len_ - c);
        if (got < c + len || XXH64(back_.data() + c, len, 0) != sums[k]) {
          return Status::Corruption(cpath + ": bytes at " +
                                    std::to_string(at + c) +
                                    " read back differ from those written");
        }
      }
    }
    entry_.chunk_sums = sums;
    entry_.done = done;
    const std::string bytes = EncodeJournalEntry(entry_);
    if (int err = env->WriteFull(journal_.fd, bytes.data(), bytes.size(),
                                 static_cast<off_t>(journal_end_))) {
      return posix::Error("cannot append to", journal_path_, err);
    }
    if (env->Fdatasync(journal_.fd) != 0) {
      return posix::Error("cannot fdatasync", journal_path_, errno);
    }
    journal_end_ += bytes.size();
    DrainedPart& have = state_.parts[e][i];
    have.extents.insert(have.extents.end(), entry_.extents.begin(),
                        entry_.extents.end());
    have.chunk_sums.insert(have.chunk_sums.end(), sums.begin(), sums.end());
    state_.done[e][i] = done;
    packed_ += pack_len_;
    out_->written += pack_len_;
    if (opt_.bytes_done) opt_.bytes_done->fetch_add(pack_len_);
    written_ += pack_len_;
    pack_len_ = 0;
    entry_.extents.clear();
    entry_.first_chunk = static_cast<uint32_t>(have.chunk_sums.size());
    if (opt_.bandwidth > 0) {
      // Written so far in no less time than the cap allows.
      const auto due = start_ + std::chrono::nanoseconds(static_cast<int64_t>(
                                    written_ * 1e9 / opt_.bandwidth));
      while (std::chrono::steady_clock::now() < due) {
        if (opt_.stop && opt_.stop->load()) break;
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
            due - std::chrono::steady_clock::now(),
            std::chrono::milliseconds(50)));
      }
    }
    return Status::OK();
  }

  const CommitRecord& rec_;
  const DrainPlan& plan_;
  const std::string staging_;
  const int w_;
  fs::FsStore* store_;
  const DrainOptions& opt_;
  DrainResult* out_;
  std::string journal_path_;
  Fd journal_;
  uint64_t journal_end_ = 0;
  JournalState state_;
  std::map<int, int> containers_;
  std::chrono::steady_clock::time_point start_;
  uint64_t written_ = 0;
  // The part being drained.
  Slot slot_;
  int cfd_ = -1;
  uint64_t packed_ = 0;
  JournalEntry entry_;
  std::string pack_, buf_, back_;
  size_t pack_len_ = 0;
};

class ReadOnlySource : public StoreSource {
 public:
  ReadOnlySource(const std::string& dir, const StoreOptions& o)
      : dir_(dir), options_(o) {
    options_.read_only = true;
    options_.snapshot_reads = true;
    options_.create_if_missing = false;
  }
  Status Get(int writer, fs::FsStore** out) override {
    auto it = stores_.find(writer);
    if (it == stores_.end()) {
      const std::string path = fs::WriterStorePath(dir_, writer);
      if (!Exists(path)) {
        return Status::NotFound("no store " + path + " here");
      }
      std::unique_ptr<fs::FsStore> st;
      Status s = fs::FsStore::Open(options_, path, writer, &st);
      if (!s.ok()) return s;
      it = stores_.emplace(writer, std::move(st)).first;
    }
    *out = it->second.get();
    return Status::OK();
  }

 private:
  std::string dir_;
  StoreOptions options_;
  std::map<int, std::unique_ptr<fs::FsStore>> stores_;
};

}  // namespace

std::string DataDir(const std::string& dst_dir, const std::string& dataset,
                    int64_t id) {
  return Join(Join(dst_dir, "data"), dataset::RecordName(dataset, id));
}

std::string StagingDir(const std::string& dst_dir, const std::string& dataset,
                       int64_t id) {
  return Join(Join(dst_dir, "drain"), dataset::RecordName(dataset, id));
}

std::unique_ptr<StoreSource> NewReadOnlySource(const std::string& ctx_dir,
                                               const StoreOptions& options) {
  return std::make_unique<ReadOnlySource>(ctx_dir, options);
}

Status Published(const std::string& dst_dir, const std::string& dataset,
                 int64_t id, bool* durable, const std::string* record) {
  *durable = false;
  const std::string data_dir = DataDir(dst_dir, dataset, id);
  const bool indexed =
      Exists(Join(Join(dst_dir, "commit"), IndexName(dataset, id)));
  Status s;
  if (!indexed || Exists(Join(data_dir, kStagedIndex))) {
    // Nothing published, or a publication a drainer left half done.
    if (!Exists(Join(data_dir, kStagedIndex)) &&
        !Exists(Join(StagingDir(dst_dir, dataset, id), kStagedIndex))) {
      return Status::OK();
    }
    DstLock lock;
    s = lock.Lock(dst_dir);
    if (s.ok()) s = PublishedLocked(dst_dir, dataset, id, durable);
    if (!s.ok() || !*durable) return s;
  }
  *durable = true;
  if (record) {
    bool same = false;
    s = SameCommit(dst_dir, dataset, id, *record, &same);
    if (s.IsNotFound()) {
      *durable = false;  // removed meanwhile
      return Status::OK();
    }
    if (!s.ok()) return s;
    *durable = same;
  }
  return Status::OK();
}

Status DrainId(const std::string& src_dir, const std::string& dst_dir,
               const std::string& dataset, int64_t id,
               const std::vector<int>& writers, StoreSource* source,
               const DrainOptions& options, DrainResult* out) {
  *out = DrainResult();
  if (options.flush_bytes == 0 || options.flush_bytes % kChunkBytes != 0) {
    return Status::InvalidArgument("the drain's flush size must be a "
                                   "multiple of " +
                                   std::to_string(kChunkBytes));
  }
  CommitRecord rec;
  std::string rec_bytes;
  Status s = ReadRecord(src_dir, dataset, id, &rec, &rec_bytes);
  if (!s.ok()) return s;
  // The destination root is made if missing, as the first root is when a
  // context starts.
  const std::string dst_root = dst_dir.substr(0, dst_dir.rfind('/'));
  const uint64_t record_sum = XXH64(rec_bytes.data(), rec_bytes.size(), 0);
  const std::string staging = StagingDir(dst_dir, dataset, id);
  const std::string plan_path = Join(staging, kPlanName);
  Aggregation agg = options.aggregation;
  int group = options.group;
  const bool fresh = !Exists(dst_dir);
  {
    // Under the lock: what is on DST of this id, and the drain directory
    // made (never once the id is published).
    DstLock lock;
    s = lock.Lock(dst_dir);
    if (s.ok()) s = PublishedLocked(dst_dir, dataset, id, &out->durable);
    if (!s.ok()) return s;
    if (out->durable) {
      bool same = false;
      s = SameCommit(dst_dir, dataset, id, rec_bytes, &same);
      if (!s.ok() || same) return s;
      // A drained copy of an earlier commit of this id (removed and
      // written again): it goes, and this one is drained.
      out->durable = false;
      s = RemoveLocked(dst_dir, dataset, id);
      if (!s.ok()) return s;
    }
    bool made = fresh;
    for (const char* sub : {"commit", "data", "drain"}) {
      if (Exists(Join(dst_dir, sub))) continue;
      s = posix::CreateDirs(Join(dst_dir, sub));
      if (!s.ok()) return s;
      made = true;
    }
    if (made) {
      // The directories made survive a power cut with what they hold.
      s = posix::SyncDir(dst_dir);
      if (s.ok()) s = posix::SyncDir(dst_root.empty() ? "/" : dst_root);
      if (!s.ok()) return s;
    }
    std::string plan_bytes;
    s = posix::ReadFile(plan_path, &plan_bytes);
    uint64_t planned_sum = 0;
    if (s.ok()) {
      s = DecodePlanFile(plan_bytes, plan_path, &agg, &group, &planned_sum);
      if (s.ok() && planned_sum != record_sum) {
        // A drain of an earlier commit of this id: not anyone's now.
        s = posix::RemoveTree(staging);
        if (s.ok()) s = Status::NotFound("stale");
      }
    }
    if (s.IsNotFound()) {
      agg = options.aggregation;
      group = options.group;
      s = posix::CreateDirs(staging);
      if (s.ok()) s = posix::SyncDir(Join(dst_dir, "drain"));
      if (s.ok()) {
        s = WriteAtomicShared(staging, kPlanName,
                              EncodePlanFile(agg, group, record_sum));
      }
    }
    if (!s.ok()) return s;
  }
  out->aggregation = agg;
  DrainPlan plan;
  s = MakePlan(rec, agg, group, &plan);
  if (!s.ok()) return s;
  std::vector<int> todo = Writers(rec);
  if (!writers.empty()) {
    std::vector<int> keep;
    for (int w : todo) {
      if (std::find(writers.begin(), writers.end(), w) != writers.end()) {
        keep.push_back(w);
      }
    }
    todo.swap(keep);
  }
  for (int w : todo) {
    fs::FsStore* store = nullptr;
    s = source->Get(w, &store);
    if (s.IsNotFound()) {
      if (Exists(Join(staging, DoneName(w)))) {
        out->drained.push_back(w);
      } else {
        out->absent.push_back(w);
      }
      continue;
    }
    if (!s.ok()) return s;
    WriterDrain d(rec, plan, staging, w, store, options, out);
    s = d.Run();
    if (s.IsBusy()) {
      out->busy.push_back(w);
      continue;
    }
    if (!s.ok()) return s;
    out->drained.push_back(w);
  }
  return MaybePublish(dst_dir, rec, plan, &out->durable, &out->published);
}

Status DrainProgress(const std::string& src_dir, const std::string& dst_dir,
                     const std::string& dataset, int64_t id,
                     std::map<int, WriterProgress>* out) {
  out->clear();
  CommitRecord rec;
  std::string rec_bytes;
  Status s = ReadRecord(src_dir, dataset, id, &rec, &rec_bytes);
  if (!s.ok()) return s;
  const std::string staging = StagingDir(dst_dir, dataset, id);
  if (!Exists(staging)) return Status::OK();
  JournalState state;
  s = ReplayAll(staging, rec, Writers(rec), &state);
  if (!s.ok()) return s;
  for (size_t e = 0; e < rec.elements.size(); ++e) {
    for (size_t i = 0; i < rec.elements[e].parts.size(); ++i) {
      const PartRecord& p = rec.elements[e].parts[i];
      WriterProgress& w = (*out)[p.writer];
      w.total += ReadSpan(p);
      w.bytes += state.parts[e][i].packed_bytes();
    }
  }
  for (auto& [w, prog] : *out) {
    prog.done = Exists(Join(staging, DoneName(w)));
  }
  return Status::OK();
}

Status KeepLastDrained(const std::string& dst_dir, const std::string& dataset,
                       int keep) {
  if (keep <= 0) return Status::OK();
  std::vector<std::string> names;
  Status s = posix::ListDir(Join(dst_dir, "commit"), &names);
  if (!s.ok()) return s;
  std::vector<int64_t> ids;
  const std::string suffix = ".index";
  for (const auto& n : names) {
    if (n.size() <= suffix.size() ||
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::string ds;
    int64_t id;
    bool reclaimed;
    if (dataset::ParseRecordName(n.substr(0, n.size() - suffix.size()), &ds,
                                 &id, &reclaimed) &&
        !reclaimed && ds == dataset) {
      ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());
  for (size_t i = 0; s.ok() && i + static_cast<size_t>(keep) < ids.size();
       ++i) {
    s = RemoveDrained(dst_dir, dataset, ids[i]);
  }
  return s;
}

Status RemoveDrained(const std::string& dst_dir, const std::string& dataset,
                     int64_t id) {
  if (!Exists(dst_dir)) return Status::OK();
  DstLock lock;
  Status s = lock.Lock(dst_dir);
  if (s.ok()) s = RemoveLocked(dst_dir, dataset, id);
  return s;
}

}  // namespace tier
}  // namespace sluice
