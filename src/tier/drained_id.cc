// Reading a drained id in place (drain.h's DrainedId): the index read
// once, each container opened when a read first reaches it, whole chunks
// read and checked against the index's checksums.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tier/drain.h"
#include "util/env.h"
#include "util/hash.h"
#include "util/posix.h"

namespace sluice {
namespace tier {

namespace {

std::string Join(const std::string& a, const std::string& b) {
  return posix::JoinPath(a, b);
}

std::string IdText(const std::string& dataset, int64_t id) {
  return "dataset " + dataset + " id " + std::to_string(id);
}

}  // namespace

// ---- DrainedId ---------------------------------------------------------------

Status DrainedId::Open(const std::string& dst_dir, const std::string& dataset,
                       int64_t id, std::unique_ptr<DrainedId>* out) {
  const std::string path =
      Join(Join(dst_dir, "commit"), IndexName(dataset, id));
  std::string data;
  Status s = posix::ReadFile(path, &data);
  if (s.IsNotFound()) {
    return Status::NotFound(IdText(dataset, id) + " is not drained to " +
                            dst_dir);
  }
  if (!s.ok()) return s;
  std::unique_ptr<DrainedId> d(new DrainedId());
  s = DecodeIndex(data, path, &d->index_);
  if (!s.ok()) return s;
  d->dir_ = DataDir(dst_dir, dataset, id);
  *out = std::move(d);
  return Status::OK();
}

DrainedId::~DrainedId() {
  for (auto& [k, fd] : fds_) Env::Default()->Close(fd);
}

Status DrainedId::Fd(int container, int* fd) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fds_.find(container);
  if (it == fds_.end()) {
    const std::string path = Join(dir_, ContainerName(container));
    const int f = Env::Default()->Open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (f < 0) return posix::Error("cannot open", path, errno);
    it = fds_.emplace(container, f).first;
  }
  *fd = it->second;
  return Status::OK();
}

Status DrainedId::Read(size_t e, uint64_t offset, char* buf, size_t n,
                       size_t* got) {
  *got = 0;
  const auto& rec = index_.record;
  if (e >= rec.elements.size()) {
    return Status::InvalidArgument("no element " + std::to_string(e));
  }
  const auto& el = rec.elements[e];
  if (offset >= el.size || n == 0) return Status::OK();
  const size_t len = static_cast<size_t>(std::min<uint64_t>(n, el.size - offset));
  const uint64_t end = offset + len;
  memset(buf, 0, len);
  struct Seg {
    uint64_t b, e;
    size_t part;
    uint64_t packed;  // of b
  };
  std::vector<Seg> segs;
  for (size_t i = 0; i < index_.parts[e].size(); ++i) {
    for (const Extent& x : index_.parts[e][i].extents) {
      const uint64_t b = std::max(offset, x.offset);
      const uint64_t f = std::min(end, x.offset + x.length);
      if (b < f) segs.push_back({b, f, i, x.packed + (b - x.offset)});
    }
  }
  std::sort(segs.begin(), segs.end(),
            [](const Seg& a, const Seg& b) { return a.b < b.b; });
  for (size_t k = 1; k < segs.size(); ++k) {
    if (segs[k].b < segs[k - 1].e) {
      return Status::Corruption(
          IdText(rec.dataset, rec.id) + " element " + el.name + ": bytes at " +
          std::to_string(segs[k].b) + " were written by two ranks");
    }
  }
  const uint64_t chunk = index_.chunk_bytes;
  std::string tmp;
  for (const Seg& sg : segs) {
    const Slot& slot = index_.plan.slots[e][sg.part];
    const DrainedPart& part = index_.parts[e][sg.part];
    const uint64_t packed_total = part.packed_bytes();
    int fd = -1;
    Status s = Fd(slot.container, &fd);
    if (!s.ok()) return s;
    // Whole chunks, each checked.
    const uint64_t c0 = sg.packed / chunk;
    const uint64_t c1 = (sg.packed + (sg.e - sg.b) - 1) / chunk;
    const uint64_t pb = c0 * chunk;
    const uint64_t pe = std::min(packed_total, (c1 + 1) * chunk);
    tmp.resize(pe - pb);
    size_t r = 0;
    if (int err = Env::Default()->ReadFull(
            fd, tmp.data(), tmp.size(),
            static_cast<off_t>(slot.offset + pb), &r)) {
      return posix::Error("cannot read", Join(dir_, ContainerName(slot.container)),
                          err);
    }
    for (uint64_t c = c0; c <= c1; ++c) {
      const uint64_t cb = c * chunk - pb;
      const uint64_t cl = std::min(chunk, packed_total - c * chunk);
      if (r < cb + cl || c >= part.chunk_sums.size() ||
          XXH64(tmp.data() + cb, cl, 0) != part.chunk_sums[c]) {
        return Status::Corruption(
            Join(dir_, ContainerName(slot.container)) + ": the bytes of " +
            el.name + " at container offset " +
            std::to_string(slot.offset + c * chunk) +
            " do not match their checksum");
      }
    }
    memcpy(buf + (sg.b - offset), tmp.data() + (sg.packed - pb), sg.e - sg.b);
  }
  *got = len;
  return Status::OK();
}

}  // namespace tier
}  // namespace sluice
