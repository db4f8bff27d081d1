// The layout of drained ids (src/tier/container.h): placement plans, the
// index and the drain journal.
#include "tier/container.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace tier {
namespace {

using dataset::CommitRecord;
using dataset::ElementRecord;
using dataset::PartRecord;

PartRecord Part(int rank, uint64_t size,
                std::vector<std::pair<uint64_t, uint64_t>> ranges = {}) {
  PartRecord p;
  p.writer = rank;
  p.rank = rank;
  p.size = size;
  p.checksum = 0xc0ffee00u + static_cast<uint64_t>(rank);
  p.ranges = std::move(ranges);
  return p;
}

// 4 ranks on 2 nodes (0, 1 | 2, 3) and two shared elements:
//   a (10000 bytes): rank 0 wrote [0, 100) and [200, 5000) (slot 4900),
//     rank 1 all of it without listing ranges (slot 10000), rank 3
//     [5000, 5001) (slot 1);
//   b (8192 bytes): rank 0 nothing (slot 0), rank 2 all of it (slot 8192).
CommitRecord FourRanks() {
  CommitRecord r;
  r.dataset = "ckpt";
  r.id = 7;
  r.ranks = 4;
  r.writers = 4;
  r.commit_time_ns = 1234;
  r.nodes = 2;
  r.node_of_rank = {0, 0, 1, 1};
  ElementRecord a;
  a.name = "a";
  a.size = 10000;
  a.parts = {Part(0, 5000, {{0, 100}, {200, 5000}}), Part(1, 10000),
             Part(3, 5001, {{5000, 5001}})};
  ElementRecord b;
  b.name = "b";
  b.size = 8192;
  b.parts = {Part(0, 0), Part(2, 8192)};
  r.elements = {a, b};
  return r;
}

// Slot s as (container, offset, bytes).
void ExpectSlot(const Slot& s, int container, uint64_t offset, uint64_t bytes,
                const char* which) {
  EXPECT_EQ(s.container, container) << which;
  EXPECT_EQ(s.offset, offset) << which;
  EXPECT_EQ(s.bytes, bytes) << which;
}

TEST(TierContainerTest, AggregationNames) {
  for (Aggregation a : {Aggregation::kNN, Aggregation::kNM, Aggregation::kN1}) {
    Aggregation back = Aggregation::kNN;
    ASSERT_OK(ParseAggregation(AggregationName(a), &back));
    EXPECT_EQ(back, a);
  }
  EXPECT_STREQ(AggregationName(Aggregation::kNM), "n_m");
  Aggregation a = Aggregation::kN1;
  Status s = ParseAggregation("n_2", &a);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'n_2'"), std::string::npos) << s.ToString();
  for (const char* name : {"n_n", "n_m", "n_1"}) {
    EXPECT_NE(s.message().find(name), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(a, Aggregation::kN1);  // untouched
}

TEST(TierContainerTest, PlanPerRank) {
  const CommitRecord r = FourRanks();
  DrainPlan p;
  ASSERT_OK(MakePlan(r, Aggregation::kNN, 5, &p));  // a group means nothing
  EXPECT_EQ(p.group, 0);
  EXPECT_EQ(p.containers, 4);
  EXPECT_EQ(p.pieces, 2);
  EXPECT_EQ(p.piece_of_rank, (std::vector<int>{0, 0, 1, 1}));
  ExpectSlot(p.slots[0][0], 0, 0, 4900, "a rank 0");
  ExpectSlot(p.slots[1][0], 0, 8192, 0, "b rank 0");
  ExpectSlot(p.slots[0][1], 1, 0, 10000, "a rank 1");
  ExpectSlot(p.slots[1][1], 2, 0, 8192, "b rank 2");
  ExpectSlot(p.slots[0][2], 3, 0, 1, "a rank 3");
  EXPECT_EQ(p.container_bytes, (std::vector<uint64_t>{4900, 10000, 8192, 1}));
}

TEST(TierContainerTest, PlanPerNode) {
  const CommitRecord r = FourRanks();
  DrainPlan p;
  ASSERT_OK(MakePlan(r, Aggregation::kNM, 0, &p));
  EXPECT_EQ(p.containers, 2);
  EXPECT_EQ(p.pieces, 2);
  // Node 0: rank 0's a, its empty b, then rank 1's a.
  ExpectSlot(p.slots[0][0], 0, 0, 4900, "a rank 0");
  ExpectSlot(p.slots[1][0], 0, 8192, 0, "b rank 0");
  ExpectSlot(p.slots[0][1], 0, 8192, 10000, "a rank 1");
  // Node 1: rank 2's b, then rank 3's a.
  ExpectSlot(p.slots[1][1], 1, 0, 8192, "b rank 2");
  ExpectSlot(p.slots[0][2], 1, 8192, 1, "a rank 3");
  EXPECT_EQ(p.container_bytes, (std::vector<uint64_t>{18192, 8193}));
}

TEST(TierContainerTest, PlanPerGroup) {
  const CommitRecord r = FourRanks();
  DrainPlan p;
  ASSERT_OK(MakePlan(r, Aggregation::kNM, 3, &p));
  EXPECT_EQ(p.group, 3);
  EXPECT_EQ(p.containers, 2);  // ranks 0-2, then rank 3
  EXPECT_EQ(p.pieces, 2);      // still one drainer per node
  ExpectSlot(p.slots[0][0], 0, 0, 4900, "a rank 0");
  ExpectSlot(p.slots[1][0], 0, 8192, 0, "b rank 0");
  ExpectSlot(p.slots[0][1], 0, 8192, 10000, "a rank 1");
  ExpectSlot(p.slots[1][1], 0, 20480, 8192, "b rank 2");
  ExpectSlot(p.slots[0][2], 1, 0, 1, "a rank 3");
  EXPECT_EQ(p.container_bytes, (std::vector<uint64_t>{28672, 1}));
  // A group of one is a container per rank.
  ASSERT_OK(MakePlan(r, Aggregation::kNM, 1, &p));
  EXPECT_EQ(p.container_bytes, (std::vector<uint64_t>{4900, 10000, 8192, 1}));
}

TEST(TierContainerTest, PlanOneContainer) {
  const CommitRecord r = FourRanks();
  DrainPlan p;
  ASSERT_OK(MakePlan(r, Aggregation::kN1, 0, &p));
  EXPECT_EQ(p.containers, 1);
  ExpectSlot(p.slots[0][0], 0, 0, 4900, "a rank 0");
  ExpectSlot(p.slots[1][0], 0, 8192, 0, "b rank 0");
  ExpectSlot(p.slots[0][1], 0, 8192, 10000, "a rank 1");
  ExpectSlot(p.slots[1][1], 0, 20480, 8192, "b rank 2");
  ExpectSlot(p.slots[0][2], 0, 28672, 1, "a rank 3");
  EXPECT_EQ(p.container_bytes, (std::vector<uint64_t>{28673}));
}

TEST(TierContainerTest, PlanRefusesBadInput) {
  CommitRecord r = FourRanks();
  DrainPlan p;
  Status s = MakePlan(r, Aggregation::kNM, -1, &p);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("group -1"), std::string::npos) << s.ToString();
  r.node_of_rank = {0, 0, 1};
  s = MakePlan(r, Aggregation::kNN, 0, &p);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("node of 3 ranks"), std::string::npos)
      << s.ToString();
  r.node_of_rank = {0, 0, 1, 2};
  EXPECT_EQ(MakePlan(r, Aggregation::kNM, 0, &p).code(),
            Code::kInvalidArgument);
  r = FourRanks();
  r.elements[0].parts[2].rank = 4;
  s = MakePlan(r, Aggregation::kN1, 0, &p);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("element 'a' part 2"), std::string::npos)
      << s.ToString();
  r = FourRanks();
  r.elements[0].parts[1].size = UINT64_MAX - 100;
  s = MakePlan(r, Aggregation::kN1, 0, &p);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("overflows"), std::string::npos) << s.ToString();
}

// The index of FourRanks drained per node, in chunks of 1000 bytes.
DrainIndex FourRanksIndex() {
  DrainIndex x;
  x.record = FourRanks();
  EXPECT_OK(MakePlan(x.record, Aggregation::kNM, 0, &x.plan));
  x.chunk_bytes = 1000;
  x.parts.resize(2);
  x.parts[0].resize(3);
  x.parts[1].resize(2);
  // a rank 0: 3900 bytes in two extents (the store held less than the
  // ranges say), 4 chunks.
  x.parts[0][0].extents = {{0, 100, 0}, {200, 3800, 100}};
  x.parts[0][0].chunk_sums = {1, 2, 3, 4};
  x.parts[0][1].extents = {{0, 10000, 0}};
  x.parts[0][1].chunk_sums = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  x.parts[0][2].extents = {{5000, 1, 0}};
  x.parts[0][2].chunk_sums = {30};
  // b rank 0: nothing; b rank 2: a hole at [4000, 4096).
  x.parts[1][1].extents = {{0, 4000, 0}, {4096, 4096, 4000}};
  x.parts[1][1].chunk_sums = {40, 41, 42, 43, 44, 45, 46, 47, 48};
  return x;
}

void ExpectSameParts(const std::vector<std::vector<DrainedPart>>& a,
                     const std::vector<std::vector<DrainedPart>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t e = 0; e < a.size(); ++e) {
    ASSERT_EQ(a[e].size(), b[e].size());
    for (size_t p = 0; p < a[e].size(); ++p) {
      ASSERT_EQ(a[e][p].extents.size(), b[e][p].extents.size());
      for (size_t i = 0; i < a[e][p].extents.size(); ++i) {
        EXPECT_EQ(a[e][p].extents[i].offset, b[e][p].extents[i].offset);
        EXPECT_EQ(a[e][p].extents[i].length, b[e][p].extents[i].length);
        EXPECT_EQ(a[e][p].extents[i].packed, b[e][p].extents[i].packed);
      }
      EXPECT_EQ(a[e][p].chunk_sums, b[e][p].chunk_sums);
    }
  }
}

// The index `enc` with its body replaced by edit(body), framed again
// (length and checksum right), and with version `version`.
template <typename Edit>
std::string Reframe(const std::string& enc, Edit edit, uint32_t version = 1) {
  std::string body = enc.substr(20, enc.size() - 28);
  edit(&body);
  std::string out = enc.substr(0, 8);
  char b[8];
  EncodeFixed32(b, version);
  out.append(b, 4);
  EncodeFixed64(b, body.size());
  out.append(b, 8);
  out += body;
  EncodeFixed64(b, XXH64(out.data(), out.size(), 0));
  out.append(b, 8);
  return out;
}

TEST(TierContainerTest, IndexRoundTrip) {
  const DrainIndex x = FourRanksIndex();
  EXPECT_EQ(x.parts[1][1].packed_bytes(), 8096u);
  EXPECT_EQ(x.parts[1][0].packed_bytes(), 0u);
  const std::string enc = EncodeIndex(x);
  DrainIndex back;
  ASSERT_OK(DecodeIndex(enc, "t", &back));
  EXPECT_EQ(back.chunk_bytes, 1000u);
  EXPECT_EQ(back.record.dataset, "ckpt");
  EXPECT_EQ(back.record.node_of_rank, x.record.node_of_rank);
  EXPECT_EQ(back.plan.aggregation, Aggregation::kNM);
  EXPECT_EQ(back.plan.containers, 2);
  EXPECT_EQ(back.plan.container_bytes, x.plan.container_bytes);
  EXPECT_EQ(back.plan.slots[0][1].offset, 8192u);
  ExpectSameParts(back.parts, x.parts);
  EXPECT_EQ(EncodeIndex(back), enc);
  // Reframing alone changes nothing.
  ASSERT_OK(DecodeIndex(Reframe(enc, [](std::string*) {}), "t", &back));
}

TEST(TierContainerTest, IndexRefusesEveryTruncationAndBitFlip) {
  const std::string enc = EncodeIndex(FourRanksIndex());
  DrainIndex back;
  for (size_t n = 0; n < enc.size(); ++n) {
    Status s = DecodeIndex(enc.substr(0, n), "t", &back);
    EXPECT_TRUE(s.IsCorruption()) << "truncated to " << n << ": "
                                  << s.ToString();
  }
  for (size_t i = 0; i < enc.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = enc;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      Status s = DecodeIndex(bad, "t", &back);
      // A flip in the version's high bits reads as a newer version.
      EXPECT_TRUE(s.IsCorruption() || s.code() == Code::kVersionTooNew)
          << "byte " << i << " bit " << bit << ": " << s.ToString();
    }
  }
  EXPECT_TRUE(DecodeIndex(enc + '\0', "t", &back).IsCorruption());
  // The failed decodes left `back` alone.
  EXPECT_TRUE(back.record.dataset.empty());
}

TEST(TierContainerTest, IndexRefusesInconsistency) {
  DrainIndex back;
  auto refused = [&](const DrainIndex& x, const char* why) {
    Status s = DecodeIndex(EncodeIndex(x), "/pfs/ckpt.7.index", &back);
    EXPECT_TRUE(s.IsCorruption()) << why << ": " << s.ToString();
    EXPECT_NE(s.message().find("/pfs/ckpt.7.index"), std::string::npos)
        << s.ToString();
    return s.message();
  };
  DrainIndex x = FourRanksIndex();
  std::swap(x.parts[0][0].extents[0], x.parts[0][0].extents[1]);
  refused(x, "extents out of order");
  x = FourRanksIndex();
  x.parts[0][0].extents[1].offset = 50;  // overlaps [0, 100)
  refused(x, "extents overlapping");
  x = FourRanksIndex();
  x.parts[0][1].extents[0].length = 10001;
  x.parts[0][1].chunk_sums.push_back(20);
  refused(x, "an extent beyond the element");
  x = FourRanksIndex();
  x.parts[0][1].extents = {{0, 0, 0}};
  x.parts[0][1].chunk_sums.clear();
  refused(x, "an empty extent");
  x = FourRanksIndex();
  x.parts[0][2].extents = {{5000, 2, 0}};  // its slot holds 1 byte
  EXPECT_NE(refused(x, "more than the slot").find("slot of 1"),
            std::string::npos);
  x = FourRanksIndex();
  x.parts[0][0].chunk_sums.pop_back();
  EXPECT_NE(refused(x, "a chunk sum short").find("3 chunk sums"),
            std::string::npos);
  x = FourRanksIndex();
  x.parts[1][0].chunk_sums = {0};
  refused(x, "a chunk sum for nothing");
  x = FourRanksIndex();
  x.plan.container_bytes[1] += 1;
  refused(x, "a container's size");
  x = FourRanksIndex();
  x.plan.containers = 3;
  x.plan.container_bytes.push_back(0);
  refused(x, "a container too many");
  x = FourRanksIndex();
  x.plan.aggregation = Aggregation::kNN;
  x.plan.group = 2;
  refused(x, "a group without n_m");
  x = FourRanksIndex();
  x.chunk_bytes = 0;
  refused(x, "chunks of no bytes");
  // A part too many or too few for the record (bytes the encoder would
  // not write): the last part's extent and chunk counts are 8 bytes.
  const std::string enc = EncodeIndex(FourRanksIndex());
  EXPECT_TRUE(DecodeIndex(Reframe(enc,
                                  [](std::string* b) {
                                    b->append(8, '\0');
                                  }),
                          "t", &back)
                  .IsCorruption());
  DrainIndex y = FourRanksIndex();
  y.parts[1][1] = DrainedPart();
  y.plan.container_bytes[1] = 8193;
  const std::string short_enc = EncodeIndex(y);
  ASSERT_OK(DecodeIndex(short_enc, "t", &back));
  EXPECT_TRUE(DecodeIndex(Reframe(short_enc,
                                  [](std::string* b) {
                                    b->resize(b->size() - 8);
                                  }),
                          "t", &back)
                  .IsCorruption());
  // A newer version is VersionTooNew, version 0 Corruption.
  Status s = DecodeIndex(Reframe(enc, [](std::string*) {}, 2), "t", &back);
  EXPECT_EQ(s.code(), Code::kVersionTooNew) << s.ToString();
  EXPECT_NE(s.message().find("version 2"), std::string::npos);
  EXPECT_TRUE(
      DecodeIndex(Reframe(enc, [](std::string*) {}, 0), "t", &back)
          .IsCorruption());
}

std::string Hex(const std::string& s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : s) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// Two ranks on one node, one element, drained into one container. The
// bytes are pinned: a change of the format must change its version.
const char kIndexV1Hex[] =
    "534c554943454458010000002201000000000000ae000000534c55494345445303000000"
    "920000000000000001000000640200000000000000020000000200000000000000050000"
    "000000000001000000000000000000000001000000010000007800000000ffffffff0010"
    "000000000000020000000000000000000000000800000000000011110000000000000000"
    "000001000000010000000010000000000000222200000000000001000000000800000000"
    "00000010000000000000242727487bf780ea020000000000000000040000010000000018"
    "000000000000010000000000000000000000100000000000000001000000efcdab000000"
    "00000200000000080000000000000004000000000000000e000000000000000200000000"
    "00000200000010000000000000002000000000000000544f955203fb9694";

TEST(TierContainerTest, IndexBytesArePinned) {
  DrainIndex x;
  x.record.dataset = "d";
  x.record.id = 2;
  x.record.ranks = 2;
  x.record.writers = 2;
  x.record.commit_time_ns = 5;
  x.record.nodes = 1;
  x.record.node_of_rank = {0, 0};
  ElementRecord e;
  e.name = "x";
  e.size = 4096;
  e.parts = {Part(0, 2048), Part(1, 4096, {{2048, 4096}})};
  e.parts[0].checksum = 0x1111;
  e.parts[1].checksum = 0x2222;
  x.record.elements = {e};
  ASSERT_OK(MakePlan(x.record, Aggregation::kN1, 0, &x.plan));
  EXPECT_EQ(x.plan.slots[0][1].offset, 4096u);
  x.chunk_bytes = 1024;
  x.parts = {std::vector<DrainedPart>(2)};
  x.parts[0][0].extents = {{0, 16, 0}};
  x.parts[0][0].chunk_sums = {0xabcdef};
  x.parts[0][1].extents = {{2048, 1024, 0}, {3584, 512, 1024}};
  x.parts[0][1].chunk_sums = {0x10, 0x20};
  const std::string enc = EncodeIndex(x);
  EXPECT_EQ(Hex(enc), kIndexV1Hex);
  DrainIndex back;
  ASSERT_OK(DecodeIndex(enc, "t", &back));
  ExpectSameParts(back.parts, x.parts);
}

CommitRecord BigPart() {
  CommitRecord r;
  r.dataset = "big";
  r.id = 1;
  r.ranks = 2;
  r.writers = 2;
  r.nodes = 1;
  r.node_of_rank = {0, 0};
  ElementRecord e;
  e.name = "e";
  e.size = 12 * kChunkBytes;
  e.parts = {Part(0, 12 * kChunkBytes), Part(1, 100, {{0, 10}})};
  r.elements = {e};
  return r;
}

constexpr uint64_t kMiB = 1 << 20;

// Three entries draining part 0 of BigPart: a chunk, two extents that
// fill the next chunk, and a last short chunk that completes the part.
std::vector<JournalEntry> ThreeEntries() {
  std::vector<JournalEntry> j(3);
  j[0].extents = {{0, 4 * kMiB, 0}};
  j[0].chunk_sums = {0x100};
  j[1].extents = {{4 * kMiB, 2 * kMiB, 4 * kMiB},
                  {6 * kMiB + 100, 2 * kMiB, 6 * kMiB}};
  j[1].first_chunk = 1;
  j[1].chunk_sums = {0x200};
  j[2].extents = {{9 * kMiB, 10, 8 * kMiB}};
  j[2].first_chunk = 2;
  j[2].chunk_sums = {0x300};
  j[2].done = true;
  return j;
}

std::string Encode(const std::vector<JournalEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += EncodeJournalEntry(e);
  return out;
}

void ExpectSameEntry(const JournalEntry& a, const JournalEntry& b) {
  EXPECT_EQ(a.element, b.element);
  EXPECT_EQ(a.part, b.part);
  EXPECT_EQ(a.first_chunk, b.first_chunk);
  EXPECT_EQ(a.chunk_sums, b.chunk_sums);
  EXPECT_EQ(a.done, b.done);
  ASSERT_EQ(a.extents.size(), b.extents.size());
  for (size_t i = 0; i < a.extents.size(); ++i) {
    EXPECT_EQ(a.extents[i].offset, b.extents[i].offset);
    EXPECT_EQ(a.extents[i].length, b.extents[i].length);
    EXPECT_EQ(a.extents[i].packed, b.extents[i].packed);
  }
}

TEST(TierContainerTest, JournalRoundTripAndReplay) {
  const auto entries = ThreeEntries();
  const std::string data = Encode(entries);
  // The magic's bytes, then the body length.
  EXPECT_EQ(data.substr(0, 4), "1JLS");
  std::vector<JournalEntry> back;
  uint64_t valid = 0;
  ASSERT_OK(DecodeJournal(data, "t", &back, &valid));
  EXPECT_EQ(valid, data.size());
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) ExpectSameEntry(back[i], entries[i]);
  JournalState st;
  ASSERT_OK(ReplayJournal(BigPart(), back, "t", &st));
  ASSERT_EQ(st.parts.size(), 1u);
  ASSERT_EQ(st.parts[0].size(), 2u);
  EXPECT_TRUE(st.done[0][0]);
  EXPECT_FALSE(st.done[0][1]);
  EXPECT_EQ(st.parts[0][0].extents.size(), 4u);
  EXPECT_EQ(st.parts[0][0].packed_bytes(), 8 * kMiB + 10);
  EXPECT_EQ(st.parts[0][0].chunk_sums,
            (std::vector<uint64_t>{0x100, 0x200, 0x300}));
  EXPECT_TRUE(st.parts[0][1].extents.empty());
  // Two entries: the part is partly durable.
  back.pop_back();
  ASSERT_OK(ReplayJournal(BigPart(), back, "t", &st));
  EXPECT_FALSE(st.done[0][0]);
  EXPECT_EQ(st.parts[0][0].packed_bytes(), 8 * kMiB);
  // Entries of two parts interleave; an empty part completes in one entry.
  JournalEntry other;
  other.part = 1;
  other.extents = {{0, 10, 0}};
  other.chunk_sums = {0x400};
  other.done = true;
  auto mixed = ThreeEntries();
  mixed.insert(mixed.begin() + 1, other);
  ASSERT_OK(ReplayJournal(BigPart(), mixed, "t", &st));
  EXPECT_TRUE(st.done[0][0]);
  EXPECT_TRUE(st.done[0][1]);
  EXPECT_EQ(st.parts[0][1].chunk_sums, (std::vector<uint64_t>{0x400}));
  ASSERT_OK(ReplayJournal(BigPart(), {}, "t", &st));
  EXPECT_FALSE(st.done[0][0]);
}

TEST(TierContainerTest, JournalTornTailIsIgnored) {
  const auto entries = ThreeEntries();
  const std::string data = Encode(entries);
  std::vector<size_t> ends;
  size_t at = 0;
  for (const auto& e : entries) {
    ends.push_back(at += EncodeJournalEntry(e).size());
  }
  for (size_t n = 0; n <= data.size(); ++n) {
    std::vector<JournalEntry> back;
    uint64_t valid = 99;
    ASSERT_OK(DecodeJournal(data.substr(0, n), "t", &back, &valid));
    size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= n) ++whole;
    ASSERT_EQ(back.size(), whole) << "truncated to " << n;
    EXPECT_EQ(valid, whole ? ends[whole - 1] : 0u) << "truncated to " << n;
    for (size_t i = 0; i < whole; ++i) ExpectSameEntry(back[i], entries[i]);
  }
  // A tail of zeros (a file extended and never written) is torn too.
  std::vector<JournalEntry> back;
  uint64_t valid = 0;
  ASSERT_OK(DecodeJournal(data + std::string(100, '\0'), "t", &back, &valid));
  EXPECT_EQ(back.size(), 3u);
  EXPECT_EQ(valid, data.size());
}

TEST(TierContainerTest, JournalDamageBeforeTheLastEntryIsCorruption) {
  const auto entries = ThreeEntries();
  const std::string data = Encode(entries);
  const size_t last = data.size() - EncodeJournalEntry(entries[2]).size();
  for (size_t i = 0; i < data.size(); ++i) {
    std::string bad = data;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    std::vector<JournalEntry> back;
    uint64_t valid = 0;
    Status s = DecodeJournal(bad, "/pfs/drain/journal.0", &back, &valid);
    if (i < last) {
      EXPECT_TRUE(s.IsCorruption()) << "byte " << i << ": " << s.ToString();
      EXPECT_NE(s.message().find("/pfs/drain/journal.0"), std::string::npos);
    } else {
      // The last entry damaged: a torn append, ignored.
      ASSERT_OK(s);
      EXPECT_EQ(back.size(), 2u) << "byte " << i;
      EXPECT_EQ(valid, last);
    }
  }
  // An entry whose sum matches but whose body does not parse.
  JournalEntry e = entries[0];
  std::string enc = EncodeJournalEntry(e);
  enc[enc.size() - 9] = 2;  // done is 0 or 1
  const uint64_t sum = XXH64(enc.data(), enc.size() - 8, 0);
  EncodeFixed64(&enc[enc.size() - 8], sum);
  std::vector<JournalEntry> back;
  uint64_t valid = 0;
  EXPECT_TRUE(DecodeJournal(enc, "t", &back, &valid).IsCorruption());
}

TEST(TierContainerTest, ReplayRefusesDiscontinuousEntries) {
  const CommitRecord rec = BigPart();
  JournalState st;
  auto refused = [&](const std::vector<JournalEntry>& j, const char* why) {
    Status s = ReplayJournal(rec, j, "journal.0", &st);
    EXPECT_TRUE(s.IsCorruption()) << why << ": " << s.ToString();
    EXPECT_NE(s.message().find("journal.0"), std::string::npos);
  };
  auto j = ThreeEntries();
  j.erase(j.begin() + 1);
  refused(j, "an entry missing");
  j = ThreeEntries();
  j[1].first_chunk = 2;
  refused(j, "a chunk skipped");
  j = ThreeEntries();
  j[1].extents[0].packed += 1;
  refused(j, "a packed offset off");
  j = ThreeEntries();
  j[1].extents[1].packed += 1;
  refused(j, "a gap between the extents of an entry");
  j = ThreeEntries();
  j[1].extents[0].offset = 4 * kMiB - 1;  // overlaps entry 0's extent
  refused(j, "an extent overlapping an earlier entry's");
  j = ThreeEntries();
  j[2].extents[0].offset = 12 * kChunkBytes - 5;
  refused(j, "an extent beyond the element");
  j = ThreeEntries();
  j[2].done = false;
  refused(j, "ending inside a chunk without completing the part");
  j = ThreeEntries();
  j[1].chunk_sums.push_back(0x201);
  refused(j, "a chunk sum too many");
  j = ThreeEntries();
  j[0].chunk_sums.clear();
  j[1].first_chunk = 0;
  j[2].first_chunk = 1;
  refused(j, "a chunk sum short");
  j = ThreeEntries();
  j.push_back(j[2]);
  j[3].extents = {};
  j[3].first_chunk = 3;
  j[3].chunk_sums = {};
  refused(j, "an entry after the part completed");
  j = ThreeEntries();
  j[0].element = 1;
  refused(j, "an element beyond the record");
  j = ThreeEntries();
  j[0].part = 2;
  refused(j, "a part beyond the record");
  // Part 1 lists 10 bytes of ranges: 11 packed bytes are too many.
  JournalEntry e;
  e.part = 1;
  e.extents = {{0, 11, 0}};
  e.chunk_sums = {1};
  e.done = true;
  refused({e}, "more bytes than the part's slot");
}

TEST(TierContainerTest, FileNames) {
  EXPECT_EQ(IndexName("ckpt", 12), "ckpt.12.index");
  EXPECT_EQ(ContainerName(3), "c.3");
  EXPECT_EQ(JournalName(0), "journal.0");
  EXPECT_EQ(DoneName(7), "done.7");
}

}  // namespace
}  // namespace tier
}  // namespace sluice
