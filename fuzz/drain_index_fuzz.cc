// The layout of drained ids (src/tier/container.h): the index and the
// drain journal. Any bytes decode to an error or to an index (a journal)
// whose encoding decodes to the same; a journal replays against a fixed
// record to an error or to a state every part of which is consistent.
// The first byte picks the decoder and the form of the rest:
//   0: an index; 1: a journal;
//   2: an index's body, framed here (the commit record in it too: its
//      length and sum set) so that the body's checks are reached;
//   3: journal entry bodies, each a u16 length then the body, framed
//      here; bytes left over follow as a torn tail.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tier/container.h"
#include "util/coding.h"
#include "util/hash.h"

using namespace sluice;
using namespace sluice::tier;

namespace {

// Two ranks on one node; element "e" of 3 chunks and a bit, written by
// rank 0 whole and by rank 1 in [0, 10).
dataset::CommitRecord Record() {
  dataset::CommitRecord r;
  r.dataset = "fuzz";
  r.id = 1;
  r.ranks = 2;
  r.writers = 2;
  r.nodes = 1;
  r.node_of_rank = {0, 0};
  dataset::ElementRecord e;
  e.name = "e";
  e.size = 3ull * kChunkBytes + 10;
  dataset::PartRecord p;
  p.size = e.size;
  e.parts.push_back(p);
  p.writer = p.rank = 1;
  p.size = 100;
  p.ranges = {{0, 10}};
  e.parts.push_back(p);
  r.elements.push_back(e);
  return r;
}

void Put32(std::string* s, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  s->append(b, 4);
}
void Put64(std::string* s, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  s->append(b, 8);
}

// An index around `body` whose commit record's body length and sum are set
// right (when its length field leaves room for them).
std::string SealIndex(std::string_view body) {
  std::string b(body);
  if (b.size() >= 4) {
    const uint64_t rlen = DecodeFixed32(b.data());
    if (rlen >= 28 && rlen <= b.size() - 4) {
      char* rec = &b[4];
      EncodeFixed64(rec + 12, rlen - 28);
      EncodeFixed64(rec + rlen - 8, XXH64(rec, rlen - 8, 0));
    }
  }
  std::string out = "SLUICEDX";
  Put32(&out, 1);
  Put64(&out, b.size());
  out += b;
  Put64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

// Entries around the bodies in `in` (u16 length, body), then what is left.
std::string SealJournal(std::string_view in) {
  std::string out;
  while (in.size() >= 2) {
    const size_t n = static_cast<uint8_t>(in[0]) |
                     static_cast<size_t>(static_cast<uint8_t>(in[1])) << 8;
    if (n > in.size() - 2) break;
    std::string e;
    Put32(&e, 0x534c4a31);
    Put32(&e, static_cast<uint32_t>(n));
    e.append(in.substr(2, n));
    Put64(&e, XXH64(e.data(), e.size(), 0));
    out += e;
    in.remove_prefix(2 + n);
  }
  out.append(in);
  return out;
}

void CheckIndex(std::string_view in) {
  DrainIndex x;
  if (!DecodeIndex(in, "fuzz", &x).ok()) return;
  const std::string enc = EncodeIndex(x);
  DrainIndex y;
  if (!DecodeIndex(enc, "fuzz", &y).ok() || EncodeIndex(y) != enc) abort();
  for (size_t e = 0; e < x.parts.size(); ++e) {
    for (size_t p = 0; p < x.parts[e].size(); ++p) {
      if (x.parts[e][p].packed_bytes() > x.plan.slots[e][p].bytes) abort();
    }
  }
}

void CheckJournal(std::string_view in) {
  std::vector<JournalEntry> entries;
  uint64_t valid = 0;
  if (!DecodeJournal(in, "fuzz", &entries, &valid).ok()) return;
  if (valid > in.size()) abort();
  std::string enc;
  for (const auto& e : entries) enc += EncodeJournalEntry(e);
  if (enc != in.substr(0, valid)) abort();
  static const dataset::CommitRecord rec = Record();
  JournalState st;
  if (!ReplayJournal(rec, entries, "fuzz", &st).ok()) return;
  for (size_t e = 0; e < st.parts.size(); ++e) {
    for (size_t p = 0; p < st.parts[e].size(); ++p) {
      const DrainedPart& dp = st.parts[e][p];
      const uint64_t packed = dp.packed_bytes();
      const uint64_t chunks =
          st.done[e][p] ? (packed + kChunkBytes - 1) / kChunkBytes
                        : packed / kChunkBytes;
      if (dp.chunk_sums.size() != chunks || packed > rec.elements[e].size) {
        abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckIndex(in);
      break;
    case 1:
      CheckJournal(in);
      break;
    case 2:
      CheckIndex(SealIndex(in));
      break;
    case 3:
      CheckJournal(SealJournal(in));
      break;
  }
  return 0;
}
