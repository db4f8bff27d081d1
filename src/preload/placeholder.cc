// The placeholder's page: its header, encoded and checked (placeholder.h).
#include "preload/placeholder.h"

#include <string.h>
#include <sys/mman.h>
#include <xxhash.h>

#include "util/coding.h"

namespace sluice {
namespace preload {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'F', 'D'};
constexpr uint32_t kVersion = 2;
constexpr size_t kFixed = sizeof kMagic + 24;

}  // namespace

std::string EncodeHeader(const Desc& d) {
  std::string h(kFixed, '\0');
  memcpy(&h[0], kMagic, sizeof kMagic);
  char* p = &h[sizeof kMagic];
  EncodeFixed32(p, kVersion);
  EncodeFixed32(p + 4, static_cast<uint32_t>(d.flags));
  EncodeFixed32(p + 8, d.is_dir ? 1 : 0);
  EncodeFixed32(p + 12, d.pending ? 1 : 0);
  EncodeFixed32(p + 16, static_cast<uint32_t>(d.mode));
  EncodeFixed32(p + 20, static_cast<uint32_t>(d.path.size()));
  const std::string& path = d.path;
  h += path;
  char sum[8];
  EncodeFixed64(sum, XXH64(h.data(), h.size(), 0));
  h.append(sum, sizeof sum);
  return h;
}

bool DecodeHeader(const char* map, Desc* d) {
  const char* buf = map + kHeaderAt;
  const size_t n = kMapBytes - kHeaderAt;
  if (memcmp(buf, kMagic, sizeof kMagic) != 0) return false;
  const char* p = buf + sizeof kMagic;
  if (DecodeFixed32(p) != kVersion) return false;
  uint32_t len = DecodeFixed32(p + 20);
  if (kFixed + len + 8 > n) return false;
  if (DecodeFixed64(buf + kFixed + len) != XXH64(buf, kFixed + len, 0)) {
    return false;
  }
  d->flags = static_cast<int>(DecodeFixed32(p + 4));
  d->is_dir = DecodeFixed32(p + 8) != 0;
  d->pending = DecodeFixed32(p + 12) != 0;
  d->mode = static_cast<mode_t>(DecodeFixed32(p + 16));
  d->path.assign(buf + kFixed, len);
  return true;
}

// Maps the placeholder's page from a read-write descriptor of its memfd.
char* MapPlaceholder(int rw_fd) {
  SLUICE_REAL(mmap);
  void* m = real_mmap(nullptr, kMapBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                      rw_fd, 0);
  return m == MAP_FAILED ? nullptr : static_cast<char*>(m);
}

// Updates the flags the placeholder records (F_SETFL), so that a program
// after exec sees them too (g_mu held).
void RewriteHeaderLocked(int, Desc* d) {
  const std::string h = EncodeHeader(*d);
  memcpy(d->map + kHeaderAt, h.data(), h.size());
}

}  // namespace preload
}  // namespace sluice
