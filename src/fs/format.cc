#include "fs/format.h"

#include "util/hash.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "util/coding.h"

namespace sluice {
namespace fs {
namespace {

constexpr char kSuperMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'F', 'S'};

void PutBE64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetBE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
std::string Key(char tag, uint64_t a) {
  std::string k(1, tag);
  PutBE64(&k, a);
  return k;
}
std::string Key(char tag, uint64_t a, uint64_t b) {
  std::string k = Key(tag, a);
  PutBE64(&k, b);
  return k;
}

}  // namespace

bool ValidName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.size() <= kMaxNameBytes &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

std::string SuperKey() { return "S"; }
std::string InodeKey(uint64_t ino) { return Key('I', ino); }
std::string DirentPrefix(uint64_t parent) { return Key('D', parent); }
std::string DirentKey(uint64_t parent, std::string_view name) {
  return DirentPrefix(parent) + std::string(name);
}
std::string ExtentKey(uint64_t ino, uint64_t off) { return Key('E', ino, off); }
std::string IndexKey(uint64_t ino, uint64_t off) { return Key('X', ino, off); }
std::string ExtentPrefix(uint64_t ino) { return Key('E', ino); }
std::string IndexPrefix(uint64_t ino) { return Key('X', ino); }
uint64_t KeyOffset(std::string_view key) {
  return key.size() < 17 ? kBadKeyOffset : GetBE64(key.data() + 9);
}

std::string EncodeSuper(const Super& s) {
  std::string v(32, '\0');
  memcpy(&v[0], kSuperMagic, 8);
  EncodeFixed32(&v[8], kFsFormatVersion);
  EncodeFixed64(&v[16], s.next_ino);
  EncodeFixed64(&v[24], XXH64(v.data(), 24, 0));
  return v;
}

Status DecodeSuper(std::string_view v, Super* s) {
  if (v.size() < 32 || memcmp(v.data(), kSuperMagic, 8) != 0) {
    return Status::Corruption("file-system superblock: bad magic or size");
  }
  if (XXH64(v.data(), 24, 0) != DecodeFixed64(v.data() + 24)) {
    return Status::Corruption("file-system superblock fails its checksum");
  }
  const uint32_t version = DecodeFixed32(v.data() + 8);
  if (version > kFsFormatVersion) {
    return Status::VersionTooNew("file-system format version " +
                                 std::to_string(version) +
                                 " is newer than this Sluice reads (" +
                                 std::to_string(kFsFormatVersion) + ")");
  }
  s->next_ino = DecodeFixed64(v.data() + 16);
  return Status::OK();
}

std::string EncodeInode(const Inode& i) {
  std::string v(kInodeSize, '\0');
  char* p = &v[0];
  p[0] = static_cast<char>(kFsFormatVersion);
  p[1] = static_cast<char>(i.type);
  EncodeFixed32(p + 4, i.mode);
  EncodeFixed64(p + 8, i.size);
  EncodeFixed64(p + 16, i.allocated);
  EncodeFixed64(p + 24, static_cast<uint64_t>(i.atime_ns));
  EncodeFixed64(p + 32, static_cast<uint64_t>(i.mtime_ns));
  EncodeFixed64(p + 40, static_cast<uint64_t>(i.ctime_ns));
  EncodeFixed32(p + 48, i.flags);
  EncodeFixed64(p + 56, i.checksum);
  EncodeFixed64(p + 64, XXH64(p, 64, i.ino));
  return v;
}

Status DecodeInode(std::string_view v, uint64_t ino, Inode* i) {
  if (v.size() < kInodeSize) {
    return Status::Corruption("inode " + std::to_string(ino) + " is truncated");
  }
  const char* p = v.data();
  if (XXH64(p, 64, ino) != DecodeFixed64(p + 64)) {
    return Status::Corruption("inode " + std::to_string(ino) +
                              " fails its checksum");
  }
  if (static_cast<uint8_t>(p[0]) > kFsFormatVersion) {
    return Status::VersionTooNew("inode " + std::to_string(ino) +
                                 " has a newer format version");
  }
  i->ino = ino;
  i->type = static_cast<FileType>(p[1]);
  if (i->type != FileType::kFile && i->type != FileType::kDirectory) {
    return Status::Corruption("inode " + std::to_string(ino) + " has type " +
                              std::to_string(p[1]));
  }
  i->mode = DecodeFixed32(p + 4);
  i->size = DecodeFixed64(p + 8);
  i->allocated = DecodeFixed64(p + 16);
  i->atime_ns = static_cast<int64_t>(DecodeFixed64(p + 24));
  i->mtime_ns = static_cast<int64_t>(DecodeFixed64(p + 32));
  i->ctime_ns = static_cast<int64_t>(DecodeFixed64(p + 40));
  i->flags = DecodeFixed32(p + 48);
  i->checksum = DecodeFixed64(p + 56);
  return Status::OK();
}

std::string EncodeDirent(uint64_t ino, FileType type) {
  std::string v(17, '\0');
  EncodeFixed64(&v[0], ino);
  v[8] = static_cast<char>(type);
  // The low 8 bytes of the checksum: a dirent is tiny.
  EncodeFixed64(&v[9], XXH64(v.data(), 9, 0));
  return v;
}

Status DecodeDirent(std::string_view v, uint64_t* ino, FileType* type) {
  if (v.size() < 17 || XXH64(v.data(), 9, 0) != DecodeFixed64(v.data() + 9)) {
    return Status::Corruption("directory entry fails its checksum");
  }
  *ino = DecodeFixed64(v.data());
  *type = static_cast<FileType>(v[8]);
  return Status::OK();
}

namespace {
uint64_t DataSeed(uint64_t ino, uint64_t offset) {
  return ino * 0x9E3779B97F4A7C15ull ^ offset;
}
}  // namespace

uint64_t DataChecksum(uint64_t ino, uint64_t offset, std::string_view data) {
  return XXH3_64bits_withSeed(data.data(), data.size(), DataSeed(ino, offset));
}

DataChecksummer::DataChecksummer() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  Reset(0, 0);
}
DataChecksummer::~DataChecksummer() {
  XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}
void DataChecksummer::Reset(uint64_t ino, uint64_t offset) {
  XXH3_64bits_reset_withSeed(static_cast<XXH3_state_t*>(state_),
                             DataSeed(ino, offset));
}
void DataChecksummer::Update(const char* data, size_t n) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, n);
}
uint64_t DataChecksummer::Value() const {
  return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

std::string EncodeExtentHeader(uint64_t length, uint64_t checksum) {
  std::string v(kExtentHeader, '\0');
  EncodeExtentHeaderTo(&v[0], length, checksum);
  return v;
}

void EncodeExtentHeaderTo(char* value, uint64_t length, uint64_t checksum) {
  EncodeFixed64(value, length);
  EncodeFixed64(value + 8, checksum);
}

Status DecodeExtent(std::string_view v, uint64_t ino, uint64_t offset,
                    const std::string& what, std::string_view* data,
                    uint64_t* checksum) {
  if (v.size() < kExtentHeader ||
      DecodeFixed64(v.data()) != v.size() - kExtentHeader) {
    return Status::Corruption(what + ": extent at offset " +
                              std::to_string(offset) + " is truncated");
  }
  *data = v.substr(kExtentHeader);
  *checksum = DecodeFixed64(v.data() + 8);
  if (DataChecksum(ino, offset, *data) != *checksum) {
    return Status::Corruption(what + ": extent at offset " +
                              std::to_string(offset) + " (" +
                              std::to_string(data->size()) +
                              " bytes) fails its checksum");
  }
  return Status::OK();
}

std::string EncodeIndex(uint64_t length, uint64_t checksum) {
  std::string v(kIndexSize, '\0');
  EncodeFixed64(&v[0], length);
  EncodeFixed64(&v[8], checksum);
  return v;
}

Status DecodeIndex(std::string_view v, uint64_t* length, uint64_t* checksum) {
  if (v.size() < kIndexSize) {
    return Status::Corruption("extent index entry truncated");
  }
  *length = DecodeFixed64(v.data());
  *checksum = DecodeFixed64(v.data() + 8);
  return Status::OK();
}

FileChecksum::FileChecksum(uint64_t size) : state_(XXH64_createState()) {
  XXH64_reset(static_cast<XXH64_state_t*>(state_), size);
}
FileChecksum::~FileChecksum() {
  XXH64_freeState(static_cast<XXH64_state_t*>(state_));
}
void FileChecksum::Add(uint64_t offset, uint64_t length, uint64_t sum) {
  uint64_t e[3] = {offset, length, sum};
  XXH64_update(static_cast<XXH64_state_t*>(state_), e, sizeof e);
}
uint64_t FileChecksum::Value() const {
  return XXH64_digest(static_cast<XXH64_state_t*>(state_));
}

uint64_t MergedChecksum(std::vector<PartChecksum> parts) {
  if (parts.size() == 1) return parts[0].checksum;
  std::sort(parts.begin(), parts.end(),
            [](const PartChecksum& a, const PartChecksum& b) {
              return a.size != b.size ? a.size < b.size : a.checksum < b.checksum;
            });
  std::vector<uint64_t> words;
  words.reserve(2 * parts.size());
  for (const PartChecksum& p : parts) {
    words.push_back(p.size);
    words.push_back(p.checksum);
  }
  return XXH64(words.data(), words.size() * sizeof(uint64_t), parts.size());
}

}  // namespace fs
}  // namespace sluice
