#include "store/value_log_format.h"

#include <cstring>
#include <ctime>

#include "util/coding.h"
#include "util/hash.h"

namespace sluice {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'V', 'L'};
constexpr size_t kHeaderBytes = kValueLogHeaderBytes;

}  // namespace

void ValuePointer::EncodeTo(char* dst) const {
  EncodeFixed32(dst, file);
  EncodeFixed64(dst + 4, offset);
  EncodeFixed32(dst + 12, length);
  EncodeFixed64(dst + 16, checksum);
}

ValuePointer ValuePointer::DecodeFrom(const char* src) {
  ValuePointer p;
  p.file = DecodeFixed32(src);
  p.offset = DecodeFixed64(src + 4);
  p.length = DecodeFixed32(src + 12);
  p.checksum = DecodeFixed64(src + 16);
  return p;
}

uint64_t ValueLocationMix(uint32_t file, uint64_t offset) {
  char loc[12];
  EncodeFixed32(loc, file);
  EncodeFixed64(loc + 4, offset);
  return XXH64(loc, sizeof loc, 0x5a17ce);
}

uint64_t ValueChecksum(uint32_t file, uint64_t offset, std::string_view value) {
  return XXH3_64bits(value.data(), value.size()) ^ ValueLocationMix(file, offset);
}

std::string EncodeValueLogHeader(uint32_t file) {
  std::string h(kHeaderBytes, '\0');
  char* p = &h[0];
  memcpy(p, kMagic, 8);
  EncodeFixed32(p + 8, kValueLogFormatVersion);
  EncodeFixed32(p + 12, kHeaderBytes);
  EncodeFixed32(p + 16, file);
  EncodeFixed32(p + 20, 0);
  EncodeFixed64(p + 24, static_cast<uint64_t>(time(nullptr)) * 1000000000u);
  EncodeFixed64(p + kHeaderBytes - 8, XXH64(p, kHeaderBytes - 8, 0));
  return h;
}

Status CheckValueLogHeader(const char* p, size_t n, uint32_t file,
                           const std::string& path) {
  if (n < kHeaderBytes || memcmp(p, kMagic, 8) != 0) {
    return Status::Corruption("value log " + path +
                              " has no value-log header (bad magic number or "
                              "truncated)");
  }
  if (DecodeFixed32(p + 12) != kHeaderBytes ||
      XXH64(p, kHeaderBytes - 8, 0) != DecodeFixed64(p + kHeaderBytes - 8)) {
    return Status::Corruption("value log " + path +
                              " fails its header checksum");
  }
  const uint32_t version = DecodeFixed32(p + 8);
  if (version > kValueLogFormatVersion) {
    return Status::VersionTooNew("value log " + path + " has format version " +
                                 std::to_string(version) +
                                 "; this Sluice reads up to " +
                                 std::to_string(kValueLogFormatVersion));
  }
  if (version == 0) {
    return Status::Corruption("value log " + path + " has format version 0");
  }
  if (DecodeFixed32(p + 20) != 0) {
    return Status::VersionTooNew("value log " + path + " has header flags " +
                                 std::to_string(DecodeFixed32(p + 20)) +
                                 " this Sluice does not know");
  }
  if (DecodeFixed32(p + 16) != file) {
    return Status::Corruption("value log " + path + " says it is file " +
                              std::to_string(DecodeFixed32(p + 16)));
  }
  return Status::OK();
}

}  // namespace sluice
