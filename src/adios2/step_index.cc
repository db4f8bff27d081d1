#include "adios2/step_index.h"

#include <cstring>

#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace adios2_engine {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'A', 'D', 'I', 'O', 'S', '2'};
constexpr size_t kHeader = 8 + 4 + 8;
constexpr uint64_t kMaxBytes = uint64_t{1} << 63;

void PutStr(std::string* out, std::string_view s) {
  PutFixed32(out, static_cast<uint32_t>(s.size()));
  out->append(s.data(), s.size());
}

void PutDims(std::string* out, const std::vector<uint64_t>& d) {
  PutFixed32(out, static_cast<uint32_t>(d.size()));
  for (uint64_t v : d) PutFixed64(out, v);
}

bool GetDims(ByteReader* r, std::vector<uint64_t>* d) {
  const uint32_t n = r->U32();
  if (r->bad || n > kMaxDims) return false;
  d->resize(n);
  for (uint32_t i = 0; i < n; ++i) (*d)[i] = r->U64();
  return !r->bad;
}

bool ValidShape(uint8_t s) {
  return s == static_cast<uint8_t>(Shape::kGlobalValue) ||
         s == static_cast<uint8_t>(Shape::kGlobalArray) ||
         s == static_cast<uint8_t>(Shape::kLocalValue) ||
         s == static_cast<uint8_t>(Shape::kLocalArray);
}

// What a block's dimensions must be for its shape id; "" when they are.
std::string CheckBlock(const Block& b) {
  if (b.var.empty()) return "a block without a variable name";
  if (b.type.empty()) return "variable " + b.var + " without a type";
  if (b.min.size() != b.max.size()) {
    return "variable " + b.var + ": a minimum and a maximum of different sizes";
  }
  if (b.bytes > kMaxBytes || b.offset > kMaxBytes - b.bytes) {
    return "variable " + b.var + ": block outside 2^63 bytes";
  }
  switch (b.shape_id) {
    case Shape::kGlobalValue:
    case Shape::kLocalValue:
      if (!b.shape.empty() || !b.start.empty() || !b.count.empty()) {
        return "variable " + b.var + ": a value with dimensions";
      }
      return "";
    case Shape::kLocalArray:
      if (!b.shape.empty() || !b.start.empty()) {
        return "variable " + b.var + ": a local array with a shape";
      }
      return "";
    case Shape::kGlobalArray:
      if (b.start.size() != b.shape.size() ||
          b.count.size() != b.shape.size()) {
        return "variable " + b.var + ": shape, start and count of " +
               std::to_string(b.shape.size()) + ", " +
               std::to_string(b.start.size()) + " and " +
               std::to_string(b.count.size()) + " dimensions";
      }
      for (size_t i = 0; i < b.shape.size(); ++i) {
        if (b.start[i] > b.shape[i] || b.count[i] > b.shape[i] - b.start[i]) {
          return "variable " + b.var + ": block beyond the shape in dimension " +
                 std::to_string(i);
        }
      }
      return "";
  }
  return "variable " + b.var + ": unknown shape";
}

}  // namespace

std::string EncodeStepIndex(const StepIndex& index) {
  std::string body;
  PutFixed32(&body, index.rank);
  PutFixed64(&body, index.step);
  PutFixed32(&body, static_cast<uint32_t>(index.blocks.size()));
  for (const Block& b : index.blocks) {
    PutStr(&body, b.var);
    PutStr(&body, b.type);
    body.push_back(static_cast<char>(b.shape_id));
    PutDims(&body, b.shape);
    PutDims(&body, b.start);
    PutDims(&body, b.count);
    PutFixed64(&body, b.offset);
    PutFixed64(&body, b.bytes);
    PutStr(&body, b.value);
    PutStr(&body, b.min);
    PutStr(&body, b.max);
  }
  PutFixed32(&body, static_cast<uint32_t>(index.attrs.size()));
  for (const Attr& a : index.attrs) {
    PutStr(&body, a.name);
    PutStr(&body, a.type);
    body.push_back(a.is_value ? 1 : 0);
    PutFixed64(&body, a.elements);
    PutStr(&body, a.data);
  }
  std::string out(kMagic, sizeof kMagic);
  PutFixed32(&out, kStepIndexVersion);
  PutFixed64(&out, body.size());
  out += body;
  PutFixed64(&out, XXH64(out.data(), out.size(), 0));
  return out;
}

Status DecodeStepIndex(std::string_view data, const std::string& what,
                       StepIndex* out) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("ADIOS2 step index " + what + ": " + why);
  };
  if (data.size() < kHeader + 8 || memcmp(data.data(), kMagic, 8) != 0) {
    return bad("not a step index (no magic \"SLADIOS2\")");
  }
  const uint32_t version = DecodeFixed32(data.data() + 8);
  if (version > kStepIndexVersion) {
    return Status::NotSupported("ADIOS2 step index " + what +
                                " has format version " +
                                std::to_string(version) +
                                ", newer than this library's " +
                                std::to_string(kStepIndexVersion));
  }
  if (version == 0) return bad("format version 0");
  const uint64_t len = DecodeFixed64(data.data() + 12);
  if (len != data.size() - kHeader - 8) {
    return bad("length " + std::to_string(len) + " where the element holds " +
               std::to_string(data.size() - kHeader - 8) + " bytes");
  }
  const uint64_t sum = DecodeFixed64(data.data() + data.size() - 8);
  if (XXH64(data.data(), data.size() - 8, 0) != sum) {
    return bad("checksum mismatch");
  }
  ByteReader r{data.substr(kHeader, len)};
  StepIndex x;
  x.rank = r.U32();
  x.step = r.U64();
  const uint32_t nblocks = r.U32();
  // Each block takes at least 49 bytes: no count can exceed what is left.
  if (r.bad || nblocks > r.in.size() / 49) return bad("bad number of blocks");
  x.blocks.resize(nblocks);
  for (Block& b : x.blocks) {
    b.var = r.Str();
    b.type = r.Str();
    const uint8_t shape = r.U8();
    if (!r.bad && !ValidShape(shape)) {
      return bad("unknown shape id " + std::to_string(shape));
    }
    b.shape_id = static_cast<Shape>(shape);
    if (!GetDims(&r, &b.shape) || !GetDims(&r, &b.start) ||
        !GetDims(&r, &b.count)) {
      return bad("bad dimensions");
    }
    b.offset = r.U64();
    b.bytes = r.U64();
    b.value = r.Str();
    b.min = r.Str();
    b.max = r.Str();
    if (r.bad) return bad("truncated block");
    std::string why = CheckBlock(b);
    if (!why.empty()) return bad(why);
  }
  const uint32_t nattrs = r.U32();
  if (r.bad || nattrs > r.in.size() / 21) return bad("bad number of attributes");
  x.attrs.resize(nattrs);
  for (Attr& a : x.attrs) {
    a.name = r.Str();
    a.type = r.Str();
    const uint8_t is_value = r.U8();
    if (is_value > 1) return bad("attribute flag " + std::to_string(is_value));
    a.is_value = is_value == 1;
    a.elements = r.U64();
    a.data = r.Str();
    if (r.bad) return bad("truncated attribute");
    if (a.name.empty() || a.type.empty()) return bad("an attribute without a name or type");
  }
  if (r.bad || !r.in.empty()) return bad("bytes after the last attribute");
  *out = std::move(x);
  return Status::OK();
}

std::string EncodeStrings(const std::vector<std::string>& strings) {
  std::string out;
  for (const std::string& s : strings) PutStr(&out, s);
  return out;
}

Status DecodeStrings(std::string_view data, uint64_t n,
                     std::vector<std::string>* out) {
  ByteReader r{data};
  std::vector<std::string> v;
  for (uint64_t i = 0; i < n && !r.bad; ++i) v.push_back(r.Str());
  if (r.bad || !r.in.empty()) {
    return Status::Corruption("ADIOS2 step index: bad string attribute");
  }
  *out = std::move(v);
  return Status::OK();
}

}  // namespace adios2_engine
}  // namespace sluice
