// `sluice ls`, `cat`, `export` and `rm` on a context directory: its
// datasets, their ids with their state, and one element of one id.
// Reading goes through a read-only context (dataset/read_only.h), which
// opens no store for writing and reclaims nothing; rm opens the context as
// a job does.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dataset/read_only.h"
#include "drain_targets.h"
#include "sluice/dataset.h"
#include "tier/status.h"
#include "tool_util.h"

namespace sluice {
namespace tool {

using dataset::ElementInfo;
using dataset::StoredId;
using dataset::StoredState;

bool IsContextDir(const std::string& dir) {
  struct stat st;
  return stat((dir + "/commit").c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool UsesDatasets(const char* cmd, const Args& a) {
  if (a.pos.empty() || !IsContextDir(a.pos[0])) return false;
  const bool path =
      a.pos.size() > 1 && !a.pos[1].empty() && a.pos[1][0] == '/';
  const std::string c = cmd;
  if (c == "rm") {
    if (path) {
      Usage(cmd, a.pos[0] + " is a context directory: remove a dataset id "
                 "(rm CONTEXT_DIR DATASET ID), not files of its stores, which "
                 "its commit records point at");
    }
    return true;
  }
  if (c == "export" && a.pos.size() == 2) return false;  // CTX DEST: files
  return !path;
}

void RejectContextFlags(const char* cmd, const Args& a) {
  for (const char* f : {"--rank", "--config"}) {
    if (a.flags.count(f)) {
      Usage(cmd, std::string(f) + " is for a context directory (one that "
                 "holds commit/)");
    }
  }
}

namespace {

const char* StateName(StoredState s) {
  switch (s) {
    case StoredState::kCommitted:
      return "committed";
    case StoredState::kReclaimed:
      return "reclaimed";
    case StoredState::kTorn:
      return "torn";
  }
  return "?";
}

std::string ConfigFile(const Args& a) {
  auto it = a.flags.find("--config");
  return it == a.flags.end() ? "" : it->second;
}

// ID as given: a number >= 0, or highest / newest.
int64_t ParseId(const char* cmd, const std::string& text, bool symbolic) {
  if (symbolic && (text == "highest" || text == "HIGHEST")) {
    return kDatasetIdHighest;
  }
  if (symbolic && (text == "newest" || text == "NEWEST")) {
    return kDatasetIdNewest;
  }
  char* end = nullptr;
  errno = 0;
  const long long v = strtoll(text.c_str(), &end, 10);
  if (text.empty() || !isdigit(static_cast<unsigned char>(text[0])) ||
      *end != '\0' || errno != 0) {
    Usage(cmd, "ID must be a number >= 0" +
                   std::string(symbolic ? ", highest or newest" : "") +
                   ", not '" + text + "'");
  }
  return v;
}

// --rank R: -1 when not given.
int ParseRank(const char* cmd, const Args& a) {
  auto it = a.flags.find("--rank");
  if (it == a.flags.end()) return -1;
  char* end = nullptr;
  errno = 0;
  const long v = strtol(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0 || v < 0 ||
      v > INT_MAX) {
    Usage(cmd, "--rank must be a number >= 0, not '" + it->second + "'");
  }
  return static_cast<int>(v);
}

// "0-3,5": numbers (ranks, ids), ascending, as ranges.
template <typename T>
std::string Ranges(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}
std::string RankList(const std::vector<int>& ranks) { return Ranges(ranks); }

// "committed 1-3,7; torn 5; reclaimed 4": a dataset's ids by state.
std::string IdSummary(const std::vector<StoredId>& ids) {
  std::vector<int64_t> by[3];
  for (const StoredId& i : ids) by[static_cast<int>(i.state)].push_back(i.id);
  std::string out;
  for (StoredState st : {StoredState::kCommitted, StoredState::kTorn,
                         StoredState::kReclaimed}) {
    const auto& v = by[static_cast<int>(st)];
    if (v.empty()) continue;
    out += (out.empty() ? "" : "; ") + std::string(StateName(st)) + " " +
           Ranges(v);
  }
  return out;
}

void ReportUnreadable(const char* cmd, const std::vector<Status>& unreadable) {
  for (const Status& u : unreadable) Fail(cmd, u);
}

// Why id `id` of `name` could not be opened (NotFound `s`), from what the
// commit directory and the stores hold: no such dataset, no such id, or a
// torn or reclaimed one.
Status ExplainMissing(Context* ctx, const std::string& name, int64_t id,
                      const Status& s) {
  std::map<std::string, std::vector<StoredId>> all;
  std::vector<Status> unreadable;
  if (!dataset::ListStoredIds(ctx, name, &all, &unreadable).ok()) return s;
  const auto it = all.find(name);
  if (it == all.end() || it->second.empty()) {
    return Status::NotFound("no dataset " + name + " in " + ctx->root());
  }
  const std::string what = "dataset " + name + " id " + std::to_string(id);
  const std::string ids = " (its ids: " + IdSummary(it->second) + ")";
  if (id < 0) {
    return Status::NotFound("dataset " + name + " has no committed id in " +
                            ctx->root() + ids);
  }
  for (const StoredId& i : it->second) {
    if (i.id != id) continue;
    if (i.state == StoredState::kTorn) {
      return Status::NotFound(
          what + " is torn: its data has no commit record (a job killed "
          "before its commit, a close that failed, or a job writing it "
          "now), so it cannot be read");
    }
    if (i.state == StoredState::kReclaimed) {
      return Status::NotFound(what + " was torn, and its data reclaimed at " +
                              TimeString(i.commit_time_ns));
    }
    return s;  // committed since the open looked
  }
  return Status::NotFound("dataset " + name + " has no id " +
                          std::to_string(id) + " in " + ctx->root() + ids);
}

// Why element `name` (shared, or rank `rank`'s) is not in id `ds`: the
// elements it has.
Status ExplainElement(Dataset* ds, const std::string& name, int rank,
                      const Status& s) {
  std::vector<ElementInfo> els;
  if (!dataset::ListElementInfo(ds, &els).ok()) return s;
  std::vector<int> ranks;
  bool shared = false;
  for (const auto& e : els) {
    if (e.name != name) continue;
    if (e.kind == ElementKind::kShared) shared = true;
    if (e.kind == ElementKind::kUnique) ranks.push_back(e.rank);
  }
  const std::string what = "element " + name + " of dataset " + ds->name() +
                           " id " + std::to_string(ds->id());
  if (rank >= 0 && shared && ranks.empty()) {
    return Status::InvalidArgument(what + " is shared by every rank: leave "
                                   "out --rank");
  }
  if (rank < 0 && !ranks.empty()) {
    return Status::InvalidArgument(what + " is each rank's own (ranks " +
                                   RankList(ranks) + "): name one with --rank");
  }
  if (rank >= 0 && !ranks.empty()) {
    return Status::NotFound(what + " has no part of rank " +
                            std::to_string(rank) + " (ranks " +
                            RankList(ranks) + ")");
  }
  std::map<std::string, std::vector<int>> names;
  for (const auto& e : els) {
    auto& r = names[e.name];
    if (e.kind == ElementKind::kUnique) r.push_back(e.rank);
  }
  std::string list;
  for (const auto& [n, r] : names) {
    list += (list.empty() ? "" : ", ") + n +
            (r.empty() ? " (shared)" : " (ranks " + RankList(r) + ")");
  }
  return Status::NotFound("dataset " + ds->name() + " id " +
                          std::to_string(ds->id()) + " has no element " +
                          name + (list.empty() ? "" : "; it has " + list));
}

// ---- ls ------------------------------------------------------------------

int LsContext(Context* ctx, const std::string& dir, bool json) {
  std::map<std::string, std::vector<StoredId>> all;
  std::vector<Status> unreadable;
  Status s = dataset::ListStoredIds(ctx, "", &all, &unreadable);
  if (!s.ok()) return Fail("ls", s);
  if (json) printf("{\"context\": %s, \"datasets\": [", Json(dir).c_str());
  if (!json) {
    printf("%-24s %9s %5s %9s %9s\n", "dataset", "committed", "torn",
           "reclaimed", "highest");
  }
  bool first = true;
  for (const auto& [name, ids] : all) {
    int n[3] = {0, 0, 0};
    int64_t highest = -1;
    for (const auto& i : ids) {
      ++n[static_cast<int>(i.state)];
      if (i.state == StoredState::kCommitted) highest = i.id;
    }
    const std::string h = highest < 0 ? "-" : std::to_string(highest);
    if (json) {
      printf("%s\n  {\"name\": %s, \"committed\": %d, \"torn\": %d, "
             "\"reclaimed\": %d, \"highest\": %s}",
             first ? "" : ",", Json(name).c_str(), n[0], n[2], n[1],
             highest < 0 ? "null" : h.c_str());
    } else {
      printf("%-24s %9d %5d %9d %9s\n", name.c_str(), n[0], n[2], n[1],
             h.c_str());
    }
    first = false;
  }
  if (json) printf("\n]}\n");
  ReportUnreadable("ls", unreadable);
  return unreadable.empty() ? 0 : 1;
}

// The context's directory on the data root after its own in data_roots,
// or empty when data_roots names none.
std::string DrainDir(Context* ctx) {
  const std::string& root = ctx->root();
  const size_t slash = root.rfind('/');
  const std::string data_root = slash == 0 ? "/" : root.substr(0, slash);
  const std::string next =
      NextDataRoot(ctx->config().Get("data_roots").value, data_root);
  return next.empty() ? "" : next + "/" + ctx->name();
}

int LsDataset(Context* ctx, const std::string& dir, const std::string& name,
              bool json) {
  std::map<std::string, std::vector<StoredId>> all;
  std::vector<Status> unreadable;
  Status s = dataset::ListStoredIds(ctx, name, &all, &unreadable);
  if (s.ok() && all[name].empty()) {
    ReportUnreadable("ls", unreadable);
    s = Status::NotFound("no dataset " + name + " in " + dir);
  }
  if (!s.ok()) return Fail("ls", s);
  // With a next data root: whether each committed id is drained there.
  const std::string drain_dir = DrainDir(ctx);
  const bool drains = !drain_dir.empty();
  if (json) {
    printf("{\"context\": %s, \"dataset\": %s, \"drained_to\": %s, "
           "\"ids\": [",
           Json(dir).c_str(), Json(name).c_str(),
           drains ? Json(drain_dir).c_str() : "null");
  } else {
    printf("%10s  %-9s %14s  %-19s %6s %7s%s\n", "id", "state", "bytes",
           "time", "ranks", "writers", drains ? " drained" : "");
  }
  bool first = true;
  for (const StoredId& i : all[name]) {
    const bool committed = i.state == StoredState::kCommitted;
    const bool drained =
        drains && committed && tier::HasIndex(drain_dir, name, i.id);
    if (json) {
      // What a state does not know is null: a torn id's time and ranks,
      // a reclaimed one's bytes, ranks and writers; drained without a
      // next data root or for an id not committed.
      const bool reclaimed = i.state == StoredState::kReclaimed;
      printf("%s\n  {\"id\": %lld, \"state\": \"%s\", \"bytes\": %s, "
             "\"time_ns\": %s, \"ranks\": %s, \"writers\": %s, "
             "\"drained\": %s}",
             first ? "" : ",", (long long)i.id, StateName(i.state),
             reclaimed ? "null" : std::to_string(i.bytes).c_str(),
             i.commit_time_ns ? std::to_string(i.commit_time_ns).c_str()
                              : "null",
             committed ? std::to_string(i.ranks).c_str() : "null",
             reclaimed ? "null" : std::to_string(i.writers).c_str(),
             !drains || !committed ? "null" : drained ? "true" : "false");
    } else {
      printf("%10lld  %-9s %14s  %-19s %6s %7s%s\n", (long long)i.id,
             StateName(i.state),
             i.state == StoredState::kReclaimed
                 ? "-"
                 : std::to_string(i.bytes).c_str(),
             i.commit_time_ns ? TimeString(i.commit_time_ns).c_str() : "-",
             committed ? std::to_string(i.ranks).c_str() : "-",
             i.state == StoredState::kReclaimed
                 ? "-"
                 : std::to_string(i.writers).c_str(),
             !drains ? "" : !committed ? "       -" : drained ? "     yes"
                                                              : "      no");
    }
    first = false;
  }
  if (json) printf("\n]}\n");
  ReportUnreadable("ls", unreadable);
  return unreadable.empty() ? 0 : 1;
}

int LsId(Context* ctx, const std::string& dir, const std::string& name,
         int64_t id, bool json) {
  std::unique_ptr<Dataset> ds;
  Status s = ctx->OpenDataset(name, id, kDatasetRead, &ds);
  if (s.IsNotFound()) s = ExplainMissing(ctx, name, id, s);
  std::vector<ElementInfo> els;
  if (s.ok()) s = dataset::ListElementInfo(ds.get(), &els);
  if (!s.ok()) return Fail("ls", s);
  if (json) {
    printf("{\"context\": %s, \"dataset\": %s, \"id\": %lld, "
           "\"elements\": [",
           Json(dir).c_str(), Json(name).c_str(), (long long)ds->id());
  } else {
    printf("%-6s %6s %14s %7s  %s\n", "kind", "rank", "size", "writers",
           "element");
  }
  bool first = true;
  for (const ElementInfo& e : els) {
    const bool shared = e.kind == ElementKind::kShared;
    if (json) {
      printf("%s\n  {\"name\": %s, \"kind\": \"%s\", \"rank\": %s, "
             "\"size\": %llu, \"writers\": %d}",
             first ? "" : ",", Json(e.name).c_str(),
             shared ? "shared" : "unique",
             shared ? "null" : std::to_string(e.rank).c_str(),
             (unsigned long long)e.size, e.writers);
    } else {
      printf("%-6s %6s %14llu %7d  %s\n", shared ? "shared" : "unique",
             shared ? "-" : std::to_string(e.rank).c_str(),
             (unsigned long long)e.size, e.writers, e.name.c_str());
    }
    first = false;
  }
  if (json) printf("\n]}\n");
  return ds->Close().ok() ? 0 : 1;
}

// ---- cat and export: one element -----------------------------------------

// Opens element ELEMENT of DATASET id ID (positional arguments 1..3),
// shared, or rank `rank`'s.
Status OpenElementOf(const char* cmd, const Args& a, int rank,
                     std::unique_ptr<Context>* ctx,
                     std::unique_ptr<Dataset>* ds,
                     std::unique_ptr<Element>* el) {
  const std::string& name = a.pos[1];
  const int64_t id = ParseId(cmd, a.pos[2], true);
  Status s = dataset::OpenContextReadOnly(a.pos[0], ConfigFile(a), ctx);
  if (s.ok()) s = (*ctx)->OpenDataset(name, id, kDatasetRead, ds);
  if (s.IsNotFound()) s = ExplainMissing(ctx->get(), name, id, s);
  if (!s.ok()) return s;
  s = (*ds)->OpenElement(
      a.pos[3], rank < 0 ? ElementKind::kShared : ElementKind::kUnique, el,
      rank);
  if (s.IsNotFound()) s = ExplainElement(ds->get(), a.pos[3], rank, s);
  return s;
}

// Reads the whole of `el`, passing each piece to `out` (which may fail).
Status ReadAll(Element* el,
               const std::function<Status(const char*, size_t)>& out) {
  std::vector<char> buf(4u << 20);
  const uint64_t size = el->size();
  Status s;
  for (uint64_t at = 0; s.ok() && at < size;) {
    const size_t n = static_cast<size_t>(
        std::min<uint64_t>(buf.size(), size - at));
    size_t got = 0;
    s = el->Read(at, buf.data(), n, &got);
    if (s.ok() && got != n) {
      s = Status::Corruption("element " + el->name() + ": read " +
                             std::to_string(got) + " bytes at offset " +
                             std::to_string(at) + " of its " +
                             std::to_string(size));
    }
    if (s.ok()) s = out(buf.data(), n);
    at += n;
  }
  return s;
}

// Writes `el` to a new file beside `dest`, then renames it over `dest`: a
// failure leaves no partial file under that name (and an earlier file as
// it was).
Status ExportElement(Element* el, const std::string& dest, bool quiet) {
  std::string tmp = dest + ".sluice-XXXXXX";
  const int fd = mkostemp(&tmp[0], O_CLOEXEC);
  if (fd < 0) {
    return Status::IOError("cannot create a file beside " + dest + ": " +
                           strerror(errno));
  }
  const mode_t mask = umask(0);
  umask(mask);
  Status s;
  if (fchmod(fd, 0666 & ~mask) != 0) {
    s = Status::IOError("cannot chmod " + tmp + ": " + strerror(errno));
  }
  Progress progress("export", el->size(), 1, quiet);
  uint64_t at = 0;
  if (s.ok()) {
    s = ReadAll(el, [&](const char* p, size_t n) {
      for (size_t i = 0; i < n; i += 65536) {
        const size_t k = std::min<size_t>(65536, n - i);
        if (AllZero(p + i, k)) continue;  // a hole in the copy too
        for (size_t done = 0; done < k;) {
          const ssize_t w = pwrite(fd, p + i + done, k - done, at + i + done);
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) {
            return Status::IOError("cannot write " + tmp + ": " +
                                   strerror(errno));
          }
          done += static_cast<size_t>(w);
        }
      }
      at += n;
      progress.Add(n, 0);
      return Status::OK();
    });
  }
  if (s.ok() && ftruncate(fd, static_cast<off_t>(el->size())) != 0) {
    s = Status::IOError("cannot size " + tmp + ": " + strerror(errno));
  }
  if (s.ok() && fsync(fd) != 0) {
    s = Status::IOError("cannot fsync " + tmp + ": " + strerror(errno));
  }
  if (close(fd) != 0 && s.ok()) {
    s = Status::IOError("cannot close " + tmp + ": " + strerror(errno));
  }
  if (s.ok() && rename(tmp.c_str(), dest.c_str()) != 0) {
    s = Status::IOError("cannot rename " + tmp + " to " + dest + ": " +
                        strerror(errno));
  }
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  const size_t slash = dest.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : dest.substr(0, slash + 1);
  // The rename durable too.
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || fsync(dfd) != 0) {
    s = Status::IOError("cannot fsync " + dir + ": " + strerror(errno));
  }
  if (dfd >= 0) close(dfd);
  progress.Add(0, 1);
  progress.Finish();
  return s;
}

}  // namespace

int DatasetLs(const Args& a) {
  if (a.flags.count("-l")) {
    Usage("ls", "-l lists files; a context's listing is always long");
  }
  if (a.pos.size() > 3) Usage("ls", "need CONTEXT_DIR [DATASET [ID]]");
  const bool json = a.flags.count("--json") > 0;
  const std::string& dir = a.pos[0];
  std::unique_ptr<Context> ctx;
  Status s = dataset::OpenContextReadOnly(dir, ConfigFile(a), &ctx);
  if (!s.ok()) return Fail("ls", s);
  if (a.pos.size() == 1) return LsContext(ctx.get(), dir, json);
  if (a.pos.size() == 2) return LsDataset(ctx.get(), dir, a.pos[1], json);
  return LsId(ctx.get(), dir, a.pos[1], ParseId("ls", a.pos[2], true), json);
}

int DatasetCat(const Args& a) {
  if (a.pos.size() != 4) {
    Usage("cat", "need CONTEXT_DIR DATASET ID ELEMENT");
  }
  const int rank = ParseRank("cat", a);
  std::unique_ptr<Context> ctx;
  std::unique_ptr<Dataset> ds;
  std::unique_ptr<Element> el;
  Status s = OpenElementOf("cat", a, rank, &ctx, &ds, &el);
  if (s.ok()) {
    s = ReadAll(el.get(), [](const char* p, size_t n) {
      return fwrite(p, 1, n, stdout) == n
                 ? Status::OK()
                 : Status::IOError("write to stdout failed");
    });
  }
  if (s.ok() && fflush(stdout) != 0) {
    s = Status::IOError("write to stdout failed");
  }
  if (s.ok()) s = ds->Close();
  return s.ok() ? 0 : Fail("cat", s);
}

int DatasetExport(const Args& a) {
  if (a.flags.count("-j")) Usage("export", "-j is for file system trees");
  if (a.pos.size() != 5) {
    Usage("export", "need CONTEXT_DIR DATASET ID ELEMENT DEST");
  }
  const int rank = ParseRank("export", a);
  std::string dest = a.pos[4];
  struct stat st;
  if (stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    dest += "/" + a.pos[3];
  }
  std::unique_ptr<Context> ctx;
  std::unique_ptr<Dataset> ds;
  std::unique_ptr<Element> el;
  Status s = OpenElementOf("export", a, rank, &ctx, &ds, &el);
  if (s.ok()) s = ExportElement(el.get(), dest, a.flags.count("-q") > 0);
  if (s.ok()) s = ds->Close();
  return s.ok() ? 0 : Fail("export", s);
}

int DatasetRm(const Args& a) {
  if (a.flags.count("-r")) Usage("rm", "-r is for file system trees");
  if (a.pos.size() != 3) Usage("rm", "need CONTEXT_DIR DATASET ID");
  const std::string& name = a.pos[1];
  const int64_t id = ParseId("rm", a.pos[2], false);
  // What the id is, read without changing anything: a bad name or id
  // leaves the context as it was.
  std::unique_ptr<Context> ctx;
  Status s = dataset::OpenContextReadOnly(a.pos[0], ConfigFile(a), &ctx);
  std::map<std::string, std::vector<StoredId>> all;
  std::vector<Status> unreadable;
  if (s.ok()) s = dataset::ListStoredIds(ctx.get(), name, &all, &unreadable);
  if (!s.ok()) return Fail("rm", s);
  const std::string root = ctx->root(), context = ctx->name();
  const std::string what = "dataset " + name + " id " + std::to_string(id);
  const StoredId* found = nullptr;
  for (const StoredId& i : all[name]) {
    if (i.id == id) found = &i;
  }
  if (!found || found->state == StoredState::kReclaimed) {
    ReportUnreadable("rm", unreadable);
    std::string why = "no dataset " + name + " in " + root;
    if (found) {
      why = what + " was torn, and its data reclaimed at " +
            TimeString(found->commit_time_ns) + ": nothing to remove";
    } else if (!all[name].empty()) {
      why = "dataset " + name + " has no id " + std::to_string(id) + " in " +
            root + " (its ids: " + IdSummary(all[name]) + ")";
    }
    return Fail("rm", Status::NotFound(why));
  }
  const StoredState state = found->state;
  ctx.reset();
  // Open the context as a job does: every store for writing (so no job may
  // hold one), torn ids reclaimed. Its root is the directory given, and
  // nothing else a configuration says (the environment beats a file).
  const std::string data_root = root.substr(0, root.rfind('/'));
  if (data_root.find(',') != std::string::npos) {
    return Fail("rm", Status::InvalidArgument(
                          root + ": a context under a directory whose path "
                          "holds ',' cannot be opened (data_roots is a "
                          "comma-separated list)"));
  }
  // SLUICE_ROOT (the interposer's alias of the first data root) would
  // contradict it.
  unsetenv("SLUICE_ROOT");
  setenv("SLUICE_DATA_ROOTS", data_root.empty() ? "/" : data_root.c_str(), 1);
  s = Context::InitSingle(context, ConfigFile(a), &ctx);
  if (s.IsBusy()) {
    return Fail("rm", Status::Busy(std::string(s.message()) +
                                   " (rm opens the context for writing, as a "
                                   "job does: it must have ended)"));
  }
  if (s.ok() && state == StoredState::kTorn) {
    // The open reclaimed it, as every torn id.
    fprintf(stderr, "sluice rm: %s was torn (no commit record): its data is "
                    "reclaimed\n", what.c_str());
  } else if (s.ok()) {
    s = ctx->UnlinkId(name, id);
  }
  if (ctx) {
    Status f = ctx->Fini();
    if (s.ok()) s = f;
  }
  return s.ok() ? 0 : Fail("rm", s);
}

}  // namespace tool
}  // namespace sluice
