#include "store/header.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "util/coding.h"
#include "util/posix.h"

namespace sluice {

namespace {
constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'K', 'V'};
constexpr uint32_t kHeaderSizeV1 = 64;
constexpr uint32_t kMaxHeaderSize = 4096;

std::string ToHex(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof buf, "%x", v);
  return buf;
}
}  // namespace

std::string StoreHeader::Encode() const {
  std::string out(kHeaderSizeV1, '\0');
  char* p = &out[0];
  memcpy(p, kMagic, 8);
  EncodeFixed32(p + 8, version);
  EncodeFixed32(p + 12, kHeaderSizeV1);
  EncodeFixed32(p + 16, static_cast<uint32_t>(backend));
  EncodeFixed32(p + 20, flags);
  EncodeFixed64(p + 24, created_nanos);
  EncodeFixed32(p + 32, static_cast<uint32_t>(layout));
  EncodeFixed64(p + kHeaderSizeV1 - 8, XXH64(p, kHeaderSizeV1 - 8, 0));
  return out;
}

Status StoreHeader::Decode(const std::string& data, const std::string& path,
                           StoreHeader* out) {
  if (data.size() < 16 || memcmp(data.data(), kMagic, 8) != 0) {
    return Status::Corruption("store header " + path +
                              " is not a Sluice header (bad magic number or "
                              "truncated to " +
                              std::to_string(data.size()) + " bytes)");
  }
  const char* p = data.data();
  uint32_t size = DecodeFixed32(p + 12);
  if (size < kHeaderSizeV1 || size > kMaxHeaderSize) {
    return Status::Corruption("store header " + path + " declares size " +
                              std::to_string(size));
  }
  if (data.size() < size) {
    return Status::Corruption("store header " + path + " is truncated: " +
                              std::to_string(data.size()) + " of " +
                              std::to_string(size) + " bytes");
  }
  if (XXH64(p, size - 8, 0) != DecodeFixed64(p + size - 8)) {
    return Status::Corruption("store header " + path +
                              " fails its checksum");
  }
  out->version = DecodeFixed32(p + 8);
  if (out->version > kStoreFormatVersion) {
    return Status::VersionTooNew(
        "store " + path + " has format version " +
        std::to_string(out->version) + "; this Sluice reads versions up to " +
        std::to_string(kStoreFormatVersion) + ": upgrade Sluice to open it");
  }
  if (out->version == 0) {
    return Status::Corruption("store header " + path + " has version 0");
  }
  uint32_t backend = DecodeFixed32(p + 16);
  if (backend != static_cast<uint32_t>(BackendKind::kRocksDB) &&
      backend != static_cast<uint32_t>(BackendKind::kLevelDB)) {
    return Status::NotSupported("store " + path + " uses unknown backend id " +
                                std::to_string(backend));
  }
  out->backend = static_cast<BackendKind>(backend);
  out->flags = DecodeFixed32(p + 20);
  if (out->flags != 0) {
    return Status::NotSupported("store " + path + " has header flags 0x" +
                                ToHex(out->flags) +
                                " that this Sluice does not know");
  }
  out->created_nanos = DecodeFixed64(p + 24);
  const uint32_t layout = out->version >= 2 ? DecodeFixed32(p + 32) : 1;
  if (layout != static_cast<uint32_t>(StoreLayout::kLsm) &&
      layout != static_cast<uint32_t>(StoreLayout::kVlog)) {
    return Status::NotSupported("store " + path + " uses unknown layout id " +
                                std::to_string(layout));
  }
  out->layout = static_cast<StoreLayout>(layout);
  return Status::OK();
}

Status ReadStoreHeader(const std::string& dir, StoreHeader* header) {
  const std::string path = posix::JoinPath(dir, kHeaderFileName);
  std::string data;
  Status s = posix::ReadFile(path, &data);
  if (s.ok()) s = StoreHeader::Decode(data, path, header);
  return s;
}

Status WriteStoreHeader(const std::string& dir, const StoreHeader& header) {
  return posix::WriteFileAtomic(posix::JoinPath(dir, kHeaderFileName),
                                header.Encode());
}

}  // namespace sluice
