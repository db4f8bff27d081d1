// Commit records (record.h).
#include "dataset/record.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace dataset {

namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'D', 'S'};

void PutStr(std::string* s, const std::string& v) {
  PutFixed32(s, static_cast<uint32_t>(v.size()));
  s->append(v);
}

using Reader = ByteReader;

void PutElements(std::string* s, const std::vector<ElementRecord>& elements) {
  PutFixed32(s, static_cast<uint32_t>(elements.size()));
  for (const auto& e : elements) {
    PutStr(s, e.name);
    PutFixed32(s, static_cast<uint32_t>(e.kind));
    PutFixed32(s, static_cast<uint32_t>(e.rank));
    PutFixed64(s, e.size);
    PutFixed32(s, static_cast<uint32_t>(e.parts.size()));
    for (const auto& p : e.parts) {
      PutFixed32(s, static_cast<uint32_t>(p.writer));
      PutFixed32(s, static_cast<uint32_t>(p.rank));
      PutFixed64(s, p.size);
      PutFixed64(s, p.checksum);
      PutFixed32(s, static_cast<uint32_t>(p.ranges.size()));
      for (const auto& [b, e2] : p.ranges) {
        PutFixed64(s, b);
        PutFixed64(s, e2);
      }
    }
  }
}

// Every count is checked against the bytes left, so a forged count cannot
// make a huge allocation.
bool GetElements(Reader* r, uint32_t version,
                 std::vector<ElementRecord>* out) {
  uint32_t n = r->U32();
  if (r->bad || n > r->in.size() / 24) return false;
  out->resize(n);
  for (auto& e : *out) {
    e.name = r->Str();
    uint32_t kind = r->U32();
    if (kind > 1) return false;
    e.kind = static_cast<ElementKind>(kind);
    e.rank = static_cast<int32_t>(r->U32());
    e.size = r->U64();
    uint32_t np = r->U32();
    if (r->bad || np > r->in.size() / 24) return false;
    e.parts.resize(np);
    for (auto& p : e.parts) {
      p.writer = static_cast<int32_t>(r->U32());
      // Version 1 knew basic mode alone: a part was its writer's own.
      p.rank = version >= 2 ? static_cast<int32_t>(r->U32()) : p.writer;
      p.size = r->U64();
      p.checksum = r->U64();
      uint32_t nr = r->U32();
      if (r->bad || nr > r->in.size() / 16) return false;
      p.ranges.resize(nr);
      uint64_t last = 0;
      for (auto& [b, e2] : p.ranges) {
        b = r->U64();
        e2 = r->U64();
        if (b >= e2 || b < last || e2 > p.size) return false;
        last = e2;
      }
      if (p.writer < 0 || p.rank < 0 || p.size > e.size) return false;
    }
    if (r->bad || CheckName(e.name, "element name").ok() == false) return false;
  }
  return !r->bad;
}

}  // namespace

uint64_t CommitRecord::bytes() const {
  uint64_t total = 0;
  for (const auto& e : elements) total += e.size;
  return total;
}

const ElementRecord* CommitRecord::Find(const std::string& name,
                                        ElementKind kind, int rank) const {
  for (const auto& e : elements) {
    if (e.name == name && e.kind == kind &&
        (kind == ElementKind::kShared || e.rank == rank)) {
      return &e;
    }
  }
  return nullptr;
}

std::string EncodeRecord(const CommitRecord& r) {
  std::string body;
  PutStr(&body, r.dataset);
  PutFixed64(&body, static_cast<uint64_t>(r.id));
  PutFixed32(&body, static_cast<uint32_t>(r.ranks));
  PutFixed32(&body, static_cast<uint32_t>(r.writers));
  PutFixed32(&body, static_cast<uint32_t>(r.mode));
  PutFixed64(&body, static_cast<uint64_t>(r.commit_time_ns));
  PutFixed32(&body, static_cast<uint32_t>(r.nodes));
  for (int i = 0; i < r.ranks; ++i) {
    const size_t at = static_cast<size_t>(i);
    PutFixed32(&body, static_cast<uint32_t>(
                     at < r.node_of_rank.size() ? r.node_of_rank[at] : 0));
  }
  PutElements(&body, r.elements);
  std::string out(kMagic, sizeof kMagic);
  PutFixed32(&out, kRecordVersion);
  PutFixed64(&out, body.size());
  out += body;
  PutFixed64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Status DecodeRecord(std::string_view data, const std::string& what,
                    CommitRecord* r) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("commit record " + what + ": " + why);
  };
  if (data.size() < 28 || memcmp(data.data(), kMagic, sizeof kMagic) != 0) {
    return bad("not a commit record (no magic number)");
  }
  const uint32_t version = DecodeFixed32(data.data() + 8);
  if (version == 0) return bad("version 0");
  if (version > kRecordVersion) {
    return Status::VersionTooNew("commit record " + what + " has version " +
                                 std::to_string(version) +
                                 "; this Sluice reads up to " +
                                 std::to_string(kRecordVersion));
  }
  const uint64_t len = DecodeFixed64(data.data() + 12);
  if (len != data.size() - 28) {
    return bad("truncated or extended (" + std::to_string(data.size()) +
               " bytes, body " + std::to_string(len) + ")");
  }
  const uint64_t sum = DecodeFixed64(data.data() + data.size() - 8);
  if (XXH64(data.data(), data.size() - 8, 0) != sum) {
    return bad("checksum mismatch");
  }
  Reader rd{data.substr(20, len)};
  r->dataset = rd.Str();
  r->id = static_cast<int64_t>(rd.U64());
  r->ranks = static_cast<int>(rd.U32());
  r->writers = static_cast<int>(rd.U32());
  r->mode = static_cast<int>(rd.U32());
  r->commit_time_ns = static_cast<int64_t>(rd.U64());
  r->node_of_rank.clear();
  if (version >= 3) {
    r->nodes = static_cast<int>(rd.U32());
    if (r->ranks <= 0 || r->nodes <= 0 || r->nodes > r->ranks ||
        static_cast<uint64_t>(r->ranks) > rd.in.size() / 4) {
      return bad("malformed body (ranks or nodes)");
    }
    r->node_of_rank.resize(static_cast<size_t>(r->ranks));
    for (int& n : r->node_of_rank) {
      n = static_cast<int>(rd.U32());
      if (n < 0 || n >= r->nodes) return bad("malformed body (a rank's node)");
    }
  } else {
    r->nodes = 1;
    if (r->ranks <= 0 || r->ranks > (1 << 24)) {
      return bad("malformed body (ranks)");
    }
    r->node_of_rank.assign(static_cast<size_t>(r->ranks), 0);
  }
  if (!GetElements(&rd, version, &r->elements) || !rd.in.empty()) {
    return bad("malformed body");
  }
  if (r->id < 0 || r->ranks <= 0 || r->writers <= 0 ||
      (r->mode != kModeBasic && r->mode != kModeFilePerNode)) {
    return bad("malformed body (id, ranks or writers)");
  }
  return Status::OK();
}

std::string EncodeElements(const std::vector<ElementRecord>& elements) {
  std::string s;
  PutElements(&s, elements);
  return s;
}

Status DecodeElements(std::string_view data, std::vector<ElementRecord>* out) {
  Reader rd{data};
  if (!GetElements(&rd, kRecordVersion, out) || !rd.in.empty()) {
    return Status::Corruption("malformed element index from a rank");
  }
  return Status::OK();
}

std::vector<ElementRecord> MergeElements(
    const std::vector<std::vector<ElementRecord>>& ranks) {
  // Shared elements by name; unique ones by (name, rank).
  std::map<std::pair<std::string, int>, ElementRecord> merged;
  for (const auto& elements : ranks) {
    for (const auto& e : elements) {
      const int key = e.kind == ElementKind::kShared ? -1 : e.rank;
      auto [it, fresh] = merged.emplace(std::make_pair(e.name, key), e);
      if (fresh) continue;
      ElementRecord& m = it->second;
      m.size = std::max(m.size, e.size);
      m.parts.insert(m.parts.end(), e.parts.begin(), e.parts.end());
    }
  }
  std::vector<ElementRecord> out;
  for (auto& [key, e] : merged) {
    std::sort(e.parts.begin(), e.parts.end(),
              [](const PartRecord& a, const PartRecord& b) {
                return a.writer != b.writer ? a.writer < b.writer
                                            : a.rank < b.rank;
              });
    out.push_back(std::move(e));
  }
  return out;
}

std::string PartPath(const std::string& dir, int mode, ElementKind kind,
                     const std::string& name, int rank) {
  if (kind == ElementKind::kUnique) {
    return dir + "/rank." + std::to_string(rank) + "/" + name;
  }
  return mode == kModeFilePerNode
             ? dir + "/shared." + std::to_string(rank) + "/" + name
             : dir + "/shared/" + name;
}

std::string RecordName(const std::string& dataset, int64_t id) {
  return dataset + "." + std::to_string(id);
}

std::string ReclaimedName(const std::string& dataset, int64_t id) {
  return RecordName(dataset, id) + ".reclaimed";
}

bool ParseRecordName(const std::string& name, std::string* dataset,
                     int64_t* id, bool* reclaimed) {
  std::string n = name;
  *reclaimed = false;
  const std::string suffix = ".reclaimed";
  if (n.size() > suffix.size() &&
      n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
    *reclaimed = true;
    n.resize(n.size() - suffix.size());
  }
  const size_t dot = n.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == n.size() ||
      n.size() - dot > 20) {
    return false;
  }
  // Every id >= 0 (up to 2^63 - 1, 19 digits), written as RecordName
  // writes it (no leading zero).
  int64_t v = 0;
  for (size_t i = dot + 1; i < n.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(n[i]))) return false;
    const int d = n[i] - '0';
    if (v > (INT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (n.compare(dot + 1, std::string::npos, std::to_string(v)) != 0) {
    return false;
  }
  *dataset = n.substr(0, dot);
  *id = v;
  return CheckName(*dataset, "dataset name").ok();
}

Status CheckName(const std::string& name, const char* what) {
  if (name.empty() || name.size() > 128 || name[0] == '.') {
    return Status::InvalidArgument(std::string(what) + " '" + name +
                                   "' must be 1 to 128 bytes, not starting "
                                   "with '.'");
  }
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-') {
      return Status::InvalidArgument(std::string(what) + " '" + name +
                                     "' may hold only letters, digits, '.', "
                                     "'_' and '-'");
    }
  }
  return Status::OK();
}

}  // namespace dataset
}  // namespace sluice
