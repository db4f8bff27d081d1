// CoveredSpans: the byte ranges a file's extents may cover (WriterFs).
#ifndef SLUICE_FS_COVERED_SPANS_H_
#define SLUICE_FS_COVERED_SPANS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace sluice {
namespace fs {

// The byte ranges a file's extents may cover, as disjoint, merged spans:
// at least every byte an extent in the store holds (more is allowed). A
// write whose range meets none of them replaces nothing, and needs no look
// at the store's index (a file written at random offsets would otherwise
// search the index at every write).
class CoveredSpans {
 public:
  // Spans kept at the most; past that the set gives up (known() false).
  static constexpr size_t kMaxSpans = 1u << 20;
  bool known() const { return known_; }
  // The file has no extents (new, or cut to 0).
  void SetEmpty() {
    spans_.clear();
    known_ = true;
  }
  void Forget() {
    spans_.clear();
    known_ = false;
  }
  // Whether [from, to) meets a span; true when not known.
  bool Meets(uint64_t from, uint64_t to) const {
    if (!known_) return true;
    auto it = spans_.lower_bound(to);  // first span starting at or past `to`
    if (it == spans_.begin()) return false;
    --it;
    return it->second > from;
  }
  void Add(uint64_t from, uint64_t to) {
    if (!known_ || from >= to) return;
    auto it = spans_.upper_bound(from);
    if (it != spans_.begin() && std::prev(it)->second >= from) {
      --it;  // the span before reaches `from`: grow it
      from = it->first;
      to = std::max(to, it->second);
      it = spans_.erase(it);
    }
    while (it != spans_.end() && it->first <= to) {  // spans it reaches
      to = std::max(to, it->second);
      it = spans_.erase(it);
    }
    spans_.emplace_hint(it, from, to);
    if (spans_.size() > kMaxSpans) Forget();
  }
  // The file was cut to `size`.
  void CutTo(uint64_t size) {
    if (size == 0) return SetEmpty();
    if (!known_) return;
    auto it = spans_.lower_bound(size);
    spans_.erase(it, spans_.end());
    if (!spans_.empty() && spans_.rbegin()->second > size) {
      spans_.rbegin()->second = size;
    }
  }

 private:
  bool known_ = false;
  std::map<uint64_t, uint64_t> spans_;  // start -> end
};

}  // namespace fs
}  // namespace sluice

#endif  // SLUICE_FS_COVERED_SPANS_H_
