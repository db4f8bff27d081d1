#include "store/barrier_record.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include "util/coding.h"
#include "util/env.h"
#include "util/posix.h"

namespace sluice {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'B', 'R'};
constexpr uint32_t kVersion = 1;
constexpr size_t kRecordBytes = 64;
constexpr size_t kSlotBytes = 4096;
constexpr size_t kFileBytes = 2 * kSlotBytes;

}  // namespace

std::string BarrierRecord::Encode() const {
  std::string out(kRecordBytes, '\0');
  char* p = &out[0];
  memcpy(p, kMagic, 8);
  EncodeFixed32(p + 8, kVersion);
  EncodeFixed32(p + 12, layout);
  EncodeFixed64(p + 16, number);
  EncodeFixed64(p + 24, created_nanos);
  EncodeFixed64(p + 56, XXH64(p, 56, 0));
  return out;
}

Status BarrierRecord::Decode(std::string_view data, const std::string& what,
                             BarrierRecord* out) {
  if (data.size() != kRecordBytes || memcmp(data.data(), kMagic, 8) != 0) {
    return Status::Corruption(what + " is not a barrier record");
  }
  const char* p = data.data();
  if (XXH64(p, 56, 0) != DecodeFixed64(p + 56)) {
    return Status::Corruption(what + " fails its checksum");
  }
  if (DecodeFixed32(p + 8) != kVersion) {
    return Status::Corruption(what + " has unknown version " +
                              std::to_string(DecodeFixed32(p + 8)));
  }
  for (size_t i = 32; i < 56; ++i) {
    if (p[i] != 0) {
      return Status::Corruption(what + " has reserved byte " +
                                std::to_string(i) + " set");
    }
  }
  out->layout = DecodeFixed32(p + 12);
  out->number = DecodeFixed64(p + 16);
  out->created_nanos = DecodeFixed64(p + 24);
  return Status::OK();
}

BarrierFile::~BarrierFile() {
  if (fd_ >= 0) Env::Default()->Close(fd_);
}

Status BarrierFile::Create(const std::string& dir, const BarrierRecord& record) {
  std::string data(kFileBytes, '\0');
  const std::string r = record.Encode();
  memcpy(&data[0], r.data(), r.size());
  memcpy(&data[kSlotBytes], r.data(), r.size());
  return posix::WriteFileAtomic(posix::JoinPath(dir, kBarrierFileName), data);
}

Status BarrierFile::Read(const std::string& dir, BarrierRecord* record) {
  const std::string path = posix::JoinPath(dir, kBarrierFileName);
  std::string data;
  Status s = posix::ReadFile(path, &data);
  if (!s.ok()) return s;
  bool found = false;
  Status first_error;
  for (size_t slot = 0; slot < 2; ++slot) {
    const size_t at = slot * kSlotBytes;
    if (data.size() < at + kRecordBytes) continue;
    BarrierRecord r;
    Status d = BarrierRecord::Decode(
        std::string_view(data).substr(at, kRecordBytes),
        "slot " + std::to_string(slot) + " of " + path, &r);
    if (!d.ok()) {
      if (first_error.ok()) first_error = d;
      continue;
    }
    if (!found || r.number > record->number) *record = r;
    found = true;
  }
  if (found) return Status::OK();
  return first_error.ok()
             ? Status::Corruption("barrier record " + path + " is truncated to " +
                                  std::to_string(data.size()) + " bytes")
             : first_error;
}

Status BarrierFile::OpenForWriting(const std::string& dir) {
  path_ = posix::JoinPath(dir, kBarrierFileName);
  fd_ = Env::Default()->Open(path_.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd_ < 0) return posix::Error("cannot open", path_, errno);
  return Status::OK();
}

Status BarrierFile::Write(const BarrierRecord& record) {
  const std::string r = record.Encode();
  const off_t at = static_cast<off_t>((record.number % 2) * kSlotBytes);
  if (int err = Env::Default()->WriteFull(fd_, r.data(), r.size(), at)) {
    return posix::Error("cannot write", path_, err);
  }
  if (Env::Default()->Fdatasync(fd_) != 0) {
    return posix::Error("cannot sync", path_, errno);
  }
  return Status::OK();
}

}  // namespace sluice
