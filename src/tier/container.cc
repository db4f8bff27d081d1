// Drained copies of dataset ids: the plan, the index and the journal
// (container.h).
#include "tier/container.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace tier {

namespace {

constexpr char kIndexMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'D', 'X'};
constexpr uint32_t kIndexVersion = 1;
// The index's frame: magic, version, body length, then the trailing sum.
constexpr size_t kIndexFrame = 8 + 4 + 8 + 8;
// "SLJ1" as a number; on disk (little-endian) the bytes read "1JLS".
constexpr uint32_t kJournalMagic = 0x534c4a31;
// An entry's frame: magic, body length, then the trailing sum.
constexpr size_t kEntryHead = 4 + 4;
constexpr size_t kEntryFrame = kEntryHead + 8;


using Reader = ByteReader;

// *out = a + b; false when it overflows.
bool Add(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > UINT64_MAX - a) return false;
  *out = a + b;
  return true;
}

// *out = v rounded up to a multiple of kSlotAlign; false when it overflows.
bool AlignUp(uint64_t v, uint64_t* out) {
  if (!Add(v, kSlotAlign - 1, out)) return false;
  *out -= *out % kSlotAlign;
  return true;
}

// The room a part's slot has: the sum of its ranges, or its size when it
// lists none. False when the sum overflows.
bool SlotBytes(const dataset::PartRecord& p, uint64_t* out) {
  if (p.ranges.empty()) {
    *out = p.size;
    return true;
  }
  uint64_t total = 0;
  for (const auto& [b, e] : p.ranges) {
    if (e < b || !Add(total, e - b, &total)) return false;
  }
  *out = total;
  return true;
}

// The containers of a plan (rec.ranks and rec.nodes > 0, group >= 0).
int ContainerCount(const dataset::CommitRecord& rec, Aggregation aggregation,
                   int group) {
  switch (aggregation) {
    case Aggregation::kNN:
      return rec.ranks;
    case Aggregation::kNM:
      return group > 0 ? (rec.ranks - 1) / group + 1 : rec.nodes;
    default:
      return 1;
  }
}

uint64_t ChunksFor(uint64_t packed, uint64_t chunk_bytes) {
  return packed / chunk_bytes + (packed % chunk_bytes != 0 ? 1 : 0);
}

std::string PartName(const dataset::ElementRecord& e, size_t p) {
  return "element '" + e.name + "' part " + std::to_string(p) + " (rank " +
         std::to_string(e.parts[p].rank) + ")";
}

// Checks that extent x of element e lies after `end` (the end of the
// part's extents before it), holds a byte, and stays inside the element.
bool ExtentFits(const Extent& x, uint64_t end,
                const dataset::ElementRecord& e) {
  return x.length > 0 && x.offset >= end && x.length <= e.size &&
         x.offset <= e.size - x.length;
}

std::string ExtentText(const Extent& x) {
  return "[" + std::to_string(x.offset) + ", +" + std::to_string(x.length) +
         ")";
}

// Whether `in` starts with an intact journal entry (magic, a length that
// fits, a matching sum); *used its size.
bool IntactEntry(std::string_view in, size_t* used) {
  if (in.size() < kEntryFrame || DecodeFixed32(in.data()) != kJournalMagic) {
    return false;
  }
  const uint64_t len = DecodeFixed32(in.data() + 4);
  if (len > in.size() - kEntryFrame) return false;
  const size_t n = kEntryHead + static_cast<size_t>(len);
  if (XXH64(in.data(), n, 0) != DecodeFixed64(in.data() + n)) return false;
  *used = n + 8;
  return true;
}

// The body of an intact entry; false for one malformed.
bool ParseEntryBody(std::string_view body, JournalEntry* e) {
  Reader rd{body};
  e->element = rd.U32();
  e->part = rd.U32();
  const uint32_t n = rd.U32();
  if (rd.bad || n > rd.in.size() / 24) return false;
  e->extents.resize(n);
  for (Extent& x : e->extents) {
    x.offset = rd.U64();
    x.length = rd.U64();
    x.packed = rd.U64();
  }
  e->first_chunk = rd.U32();
  const uint32_t nc = rd.U32();
  if (rd.bad || nc > rd.in.size() / 8) return false;
  e->chunk_sums.resize(nc);
  for (uint64_t& s : e->chunk_sums) s = rd.U64();
  const uint8_t done = rd.U8();
  e->done = done == 1;
  return !rd.bad && done <= 1 && rd.in.empty();
}

}  // namespace

const char* AggregationName(Aggregation a) {
  switch (a) {
    case Aggregation::kNN:
      return "n_n";
    case Aggregation::kNM:
      return "n_m";
    case Aggregation::kN1:
      return "n_1";
  }
  return "unknown";
}

Status ParseAggregation(const std::string& s, Aggregation* out) {
  for (Aggregation a : {Aggregation::kNN, Aggregation::kNM, Aggregation::kN1}) {
    if (s == AggregationName(a)) {
      *out = a;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("aggregation '" + s +
                                 "' is none of n_n (a container per rank), "
                                 "n_m (per node or group of ranks), n_1 (one "
                                 "container)");
}

Status MakePlan(const dataset::CommitRecord& rec, Aggregation aggregation,
                int group, DrainPlan* out) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(
        "drain plan of " + dataset::RecordName(rec.dataset, rec.id) + ": " +
        why);
  };
  if (group < 0) {
    return bad("aggregation group " + std::to_string(group) +
               " is negative (0: a container per node)");
  }
  if (rec.ranks <= 0 || rec.nodes <= 0) {
    return bad("the record has " + std::to_string(rec.ranks) + " ranks on " +
               std::to_string(rec.nodes) + " nodes");
  }
  if (rec.node_of_rank.size() != static_cast<size_t>(rec.ranks)) {
    return bad("the record names the node of " +
               std::to_string(rec.node_of_rank.size()) + " ranks, not of its " +
               std::to_string(rec.ranks));
  }
  for (int n : rec.node_of_rank) {
    if (n < 0 || n >= rec.nodes) {
      return bad("a rank's node " + std::to_string(n) + " is not below the " +
                 std::to_string(rec.nodes) + " nodes");
    }
  }
  if (aggregation != Aggregation::kNN && aggregation != Aggregation::kNM &&
      aggregation != Aggregation::kN1) {
    return bad("unknown aggregation " +
               std::to_string(static_cast<int>(aggregation)));
  }
  DrainPlan plan;
  plan.aggregation = aggregation;
  plan.group = aggregation == Aggregation::kNM ? group : 0;
  plan.containers = ContainerCount(rec, aggregation, group);
  plan.pieces = rec.nodes;
  plan.piece_of_rank = rec.node_of_rank;
  auto container_of = [&](int rank) {
    switch (aggregation) {
      case Aggregation::kNN:
        return rank;
      case Aggregation::kNM:
        return group > 0 ? rank / group
                         : rec.node_of_rank[static_cast<size_t>(rank)];
      default:
        return 0;
    }
  };
  // The parts in (rank, element, part) order: gathered in (element, part)
  // order, then sorted stably by rank.
  struct Ref {
    int rank;
    size_t e, p;
  };
  std::vector<Ref> order;
  plan.slots.resize(rec.elements.size());
  for (size_t e = 0; e < rec.elements.size(); ++e) {
    const dataset::ElementRecord& el = rec.elements[e];
    plan.slots[e].resize(el.parts.size());
    for (size_t p = 0; p < el.parts.size(); ++p) {
      const int rank = el.parts[p].rank;
      if (rank < 0 || rank >= rec.ranks) {
        return bad(PartName(el, p) + " is beyond the record's " +
                   std::to_string(rec.ranks) + " ranks");
      }
      order.push_back(Ref{rank, e, p});
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Ref& a, const Ref& b) { return a.rank < b.rank; });
  // next[c]: where container c's next slot starts, the exclusive prefix sum
  // of its slots' sizes, each rounded up to kSlotAlign.
  std::vector<uint64_t> next(static_cast<size_t>(plan.containers), 0);
  plan.container_bytes.assign(next.size(), 0);
  for (const Ref& r : order) {
    const dataset::ElementRecord& el = rec.elements[r.e];
    Slot& slot = plan.slots[r.e][r.p];
    slot.container = container_of(r.rank);
    const size_t c = static_cast<size_t>(slot.container);
    slot.offset = next[c];
    uint64_t end = 0;
    if (!SlotBytes(el.parts[r.p], &slot.bytes) ||
        !Add(slot.offset, slot.bytes, &end) || !AlignUp(end, &end)) {
      return bad(PartName(el, r.p) + " does not fit in container " +
                 std::to_string(c) + " (its size overflows)");
    }
    if (slot.bytes > 0) {
      plan.container_bytes[c] = slot.offset + slot.bytes;
      next[c] = end;
    }
  }
  *out = std::move(plan);
  return Status::OK();
}

uint64_t DrainedPart::packed_bytes() const {
  uint64_t total = 0;
  for (const Extent& x : extents) total += x.length;
  return total;
}

std::string EncodeIndex(const DrainIndex& index) {
  std::string body;
  const std::string rec = dataset::EncodeRecord(index.record);
  PutFixed32(&body, static_cast<uint32_t>(rec.size()));
  body += rec;
  const DrainPlan& plan = index.plan;
  PutFixed32(&body, static_cast<uint32_t>(plan.aggregation));
  PutFixed32(&body, static_cast<uint32_t>(plan.group));
  PutFixed32(&body, index.chunk_bytes);
  PutFixed32(&body, static_cast<uint32_t>(plan.containers));
  for (int c = 0; c < plan.containers; ++c) {
    const size_t at = static_cast<size_t>(c);
    PutFixed64(&body, at < plan.container_bytes.size() ? plan.container_bytes[at]
                                                  : 0);
  }
  static const DrainedPart kNone;
  for (size_t e = 0; e < index.record.elements.size(); ++e) {
    for (size_t p = 0; p < index.record.elements[e].parts.size(); ++p) {
      const DrainedPart& dp =
          e < index.parts.size() && p < index.parts[e].size()
              ? index.parts[e][p]
              : kNone;
      PutFixed32(&body, static_cast<uint32_t>(dp.extents.size()));
      for (const Extent& x : dp.extents) {
        PutFixed64(&body, x.offset);
        PutFixed64(&body, x.length);
      }
      PutFixed32(&body, static_cast<uint32_t>(dp.chunk_sums.size()));
      for (uint64_t s : dp.chunk_sums) PutFixed64(&body, s);
    }
  }
  std::string out(kIndexMagic, sizeof kIndexMagic);
  PutFixed32(&out, kIndexVersion);
  PutFixed64(&out, body.size());
  out += body;
  PutFixed64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Status DecodeIndex(std::string_view data, const std::string& what,
                   DrainIndex* out) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("drain index " + what + ": " + why);
  };
  if (data.size() < kIndexFrame ||
      memcmp(data.data(), kIndexMagic, sizeof kIndexMagic) != 0) {
    return bad("not a drain index (no magic number)");
  }
  const uint32_t version = DecodeFixed32(data.data() + 8);
  if (version == 0) return bad("version 0");
  if (version > kIndexVersion) {
    return Status::VersionTooNew("drain index " + what + " has version " +
                                 std::to_string(version) +
                                 "; this Sluice reads up to " +
                                 std::to_string(kIndexVersion));
  }
  const uint64_t len = DecodeFixed64(data.data() + 12);
  if (len != data.size() - kIndexFrame) {
    return bad("truncated or extended (" + std::to_string(data.size()) +
               " bytes, body " + std::to_string(len) + ")");
  }
  if (XXH64(data.data(), data.size() - 8, 0) !=
      DecodeFixed64(data.data() + data.size() - 8)) {
    return bad("checksum mismatch");
  }
  Reader rd{data.substr(20, len)};
  DrainIndex x;
  const uint32_t rlen = rd.U32();
  const char* rp;
  if (!rd.Take(rlen, &rp)) return bad("malformed body (record length)");
  Status s = dataset::DecodeRecord(std::string_view(rp, rlen),
                                   "inside drain index " + what, &x.record);
  if (!s.ok()) return s;
  const uint32_t aggregation = rd.U32();
  const uint32_t group = rd.U32();
  x.chunk_bytes = rd.U32();
  const uint32_t containers = rd.U32();
  if (rd.bad) return bad("malformed body (header)");
  if (aggregation > static_cast<uint32_t>(Aggregation::kN1) ||
      group > static_cast<uint32_t>(INT_MAX) || x.chunk_bytes == 0) {
    return bad("malformed body (aggregation " + std::to_string(aggregation) +
               ", group " + std::to_string(group) + ", chunk bytes " +
               std::to_string(x.chunk_bytes) + ")");
  }
  const Aggregation agg = static_cast<Aggregation>(aggregation);
  if (agg != Aggregation::kNM && group != 0) {
    return bad("aggregation group " + std::to_string(group) + " given with " +
               AggregationName(agg));
  }
  // Checked before the plan is made: its size follows the count.
  const int want = ContainerCount(x.record, agg, static_cast<int>(group));
  if (containers != static_cast<uint32_t>(want) ||
      containers > rd.in.size() / 8) {
    return bad(std::to_string(containers) + " containers where the plan has " +
               std::to_string(want));
  }
  s = MakePlan(x.record, agg, static_cast<int>(group), &x.plan);
  if (!s.ok()) return bad("no plan: " + s.message());
  for (size_t c = 0; c < containers; ++c) {
    const uint64_t size = rd.U64();
    if (rd.bad) return bad("malformed body (container sizes)");
    if (size != x.plan.container_bytes[c]) {
      return bad("container " + std::to_string(c) + " is " +
                 std::to_string(size) + " bytes where the plan has " +
                 std::to_string(x.plan.container_bytes[c]));
    }
  }
  x.parts.resize(x.record.elements.size());
  for (size_t e = 0; e < x.record.elements.size(); ++e) {
    const dataset::ElementRecord& el = x.record.elements[e];
    x.parts[e].resize(el.parts.size());
    for (size_t p = 0; p < el.parts.size(); ++p) {
      DrainedPart& dp = x.parts[e][p];
      const uint32_t n = rd.U32();
      if (rd.bad || n > rd.in.size() / 16) {
        return bad("malformed body (" + PartName(el, p) + ")");
      }
      dp.extents.resize(n);
      uint64_t packed = 0;
      uint64_t end = 0;
      for (Extent& ext : dp.extents) {
        ext.offset = rd.U64();
        ext.length = rd.U64();
        ext.packed = packed;
        if (!ExtentFits(ext, end, el)) {
          return bad(PartName(el, p) + ": extent " + ExtentText(ext) +
                     " is empty, out of order or beyond the element's " +
                     std::to_string(el.size) + " bytes");
        }
        end = ext.offset + ext.length;
        packed += ext.length;  // at most el.size: the extents are disjoint
      }
      const Slot& slot = x.plan.slots[e][p];
      if (packed > slot.bytes) {
        return bad(PartName(el, p) + " packs " + std::to_string(packed) +
                   " bytes into a slot of " + std::to_string(slot.bytes));
      }
      const uint32_t nc = rd.U32();
      const uint64_t want = ChunksFor(packed, x.chunk_bytes);
      if (rd.bad || nc != want || nc > rd.in.size() / 8) {
        return bad(PartName(el, p) + " has " + std::to_string(nc) +
                   " chunk sums for " + std::to_string(packed) +
                   " packed bytes (" + std::to_string(want) + " expected)");
      }
      dp.chunk_sums.resize(nc);
      for (uint64_t& sum : dp.chunk_sums) sum = rd.U64();
    }
  }
  if (rd.bad || !rd.in.empty()) {
    return bad("malformed body (" + std::to_string(rd.in.size()) +
               " bytes after the last part)");
  }
  *out = std::move(x);
  return Status::OK();
}

std::string EncodeJournalEntry(const JournalEntry& e) {
  std::string body;
  PutFixed32(&body, e.element);
  PutFixed32(&body, e.part);
  PutFixed32(&body, static_cast<uint32_t>(e.extents.size()));
  for (const Extent& x : e.extents) {
    PutFixed64(&body, x.offset);
    PutFixed64(&body, x.length);
    PutFixed64(&body, x.packed);
  }
  PutFixed32(&body, e.first_chunk);
  PutFixed32(&body, static_cast<uint32_t>(e.chunk_sums.size()));
  for (uint64_t s : e.chunk_sums) PutFixed64(&body, s);
  body += static_cast<char>(e.done ? 1 : 0);
  std::string out;
  PutFixed32(&out, kJournalMagic);
  PutFixed32(&out, static_cast<uint32_t>(body.size()));
  out += body;
  PutFixed64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Status DecodeJournal(std::string_view data, const std::string& what,
                     std::vector<JournalEntry>* out, uint64_t* valid_bytes) {
  std::vector<JournalEntry> entries;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t used = 0;
    if (!IntactEntry(data.substr(pos), &used)) {
      // A torn last entry, unless an intact one follows it: then the damage
      // is not the crash of an append.
      for (size_t q = pos + 1; q + kEntryFrame <= data.size(); ++q) {
        if (IntactEntry(data.substr(q), &used)) {
          return Status::Corruption(
              "drain journal " + what + ": the entry at byte " +
              std::to_string(pos) + " is damaged and an intact one follows "
              "at byte " + std::to_string(q));
        }
      }
      break;
    }
    JournalEntry e;
    if (!ParseEntryBody(data.substr(pos + kEntryHead, used - kEntryFrame),
                        &e)) {
      return Status::Corruption("drain journal " + what +
                                ": the entry at byte " + std::to_string(pos) +
                                " is malformed (its checksum matches)");
    }
    entries.push_back(std::move(e));
    pos += used;
  }
  *out = std::move(entries);
  *valid_bytes = pos;
  return Status::OK();
}

Status ReplayJournal(const dataset::CommitRecord& rec,
                     const std::vector<JournalEntry>& entries,
                     const std::string& what, JournalState* out) {
  JournalState st;
  st.parts.resize(rec.elements.size());
  st.done.resize(rec.elements.size());
  // packed[e][p]: the part's packed bytes so far.
  std::vector<std::vector<uint64_t>> packed(rec.elements.size());
  for (size_t e = 0; e < rec.elements.size(); ++e) {
    st.parts[e].resize(rec.elements[e].parts.size());
    st.done[e].assign(rec.elements[e].parts.size(), false);
    packed[e].assign(rec.elements[e].parts.size(), 0);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const JournalEntry& je = entries[i];
    auto bad = [&](const std::string& why) {
      return Status::Corruption("drain journal " + what + ": entry " +
                                std::to_string(i) + ": " + why);
    };
    if (je.element >= rec.elements.size() ||
        je.part >= rec.elements[je.element].parts.size()) {
      return bad("element " + std::to_string(je.element) + " part " +
                 std::to_string(je.part) + " is not in the record of " +
                 dataset::RecordName(rec.dataset, rec.id));
    }
    const dataset::ElementRecord& el = rec.elements[je.element];
    const std::string name = PartName(el, je.part);
    DrainedPart& dp = st.parts[je.element][je.part];
    if (st.done[je.element][je.part]) {
      return bad(name + " continues after the entry that completed it");
    }
    if (je.first_chunk != dp.chunk_sums.size()) {
      return bad(name + " resumes at chunk " + std::to_string(je.first_chunk) +
                 " where " + std::to_string(dp.chunk_sums.size()) +
                 " are durable");
    }
    uint64_t total = packed[je.element][je.part];
    uint64_t end = 0;
    if (!dp.extents.empty()) {
      end = dp.extents.back().offset + dp.extents.back().length;
    }
    for (const Extent& x : je.extents) {
      if (x.packed != total) {
        return bad(name + ": extent " + ExtentText(x) + " is packed at " +
                   std::to_string(x.packed) + " where " +
                   std::to_string(total) + " bytes are packed before it");
      }
      if (!ExtentFits(x, end, el)) {
        return bad(name + ": extent " + ExtentText(x) +
                   " is empty, out of order or beyond the element's " +
                   std::to_string(el.size) + " bytes");
      }
      end = x.offset + x.length;
      total += x.length;  // at most el.size: the extents are disjoint
    }
    uint64_t room = 0;
    if (!SlotBytes(el.parts[je.part], &room)) room = UINT64_MAX;
    if (total > room) {
      return bad(name + " packs " + std::to_string(total) +
                 " bytes, more than the record's " + std::to_string(room));
    }
    if (!je.done && total % kChunkBytes != 0) {
      return bad(name + " ends inside a chunk (" + std::to_string(total) +
                 " bytes packed) without completing the part");
    }
    const uint64_t chunks = dp.chunk_sums.size() + je.chunk_sums.size();
    const uint64_t want =
        je.done ? ChunksFor(total, kChunkBytes) : total / kChunkBytes;
    if (chunks != want) {
      return bad(name + " has " + std::to_string(chunks) + " chunk sums for " +
                 std::to_string(total) + " packed bytes (" +
                 std::to_string(want) + " expected)");
    }
    dp.extents.insert(dp.extents.end(), je.extents.begin(), je.extents.end());
    dp.chunk_sums.insert(dp.chunk_sums.end(), je.chunk_sums.begin(),
                         je.chunk_sums.end());
    packed[je.element][je.part] = total;
    st.done[je.element][je.part] = je.done;
  }
  *out = std::move(st);
  return Status::OK();
}

std::string IndexName(const std::string& dataset, int64_t id) {
  return dataset::RecordName(dataset, id) + ".index";
}

std::string ContainerName(int container) {
  return "c." + std::to_string(container);
}

std::string JournalName(int writer) {
  return "journal." + std::to_string(writer);
}

std::string DoneName(int writer) { return "done." + std::to_string(writer); }

}  // namespace tier
}  // namespace sluice
