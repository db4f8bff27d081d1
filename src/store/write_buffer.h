// WriteBuffer: updates held in memory before they reach the backend, as one
// atomic batch. Used for explicit batches (StartBatch/StopBatch) and for
// LevelDB without a log, which LSMIO buffers through a write batch. Keeps
// only the last state of each key, in key order, so reads can look through
// it and the backend receives sorted updates.
//
// A buffer that is cleared and filled again (the file layer keeps one per open
// file) reuses the memory of its large values: fresh memory faults in slowly,
// and on a VM that returns freed memory to its host, several times slowly.
//
// Not thread-safe: the store guards it with its mutex.
#ifndef SLUICE_STORE_WRITE_BUFFER_H_
#define SLUICE_STORE_WRITE_BUFFER_H_

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class WriteBuffer {
 public:
  // No bound on the size of the value an update replaces.
  static constexpr size_t kUnbounded = static_cast<size_t>(-1);
  // The last update of a key: a value, or a delete.
  struct Update {
    std::optional<std::string> value;  // none: a delete
    // At most how many bytes the value the backend holds under the key,
    // if any, has before this buffer is written (kUnbounded: not known).
    // A value log keeps values shorter than its threshold (this open's
    // vlog_min_value) in the tree, so with a bound below it, it need not
    // look the key up to learn whether the update leaves a logged value
    // dead. A bound that is wrong only leaves that value's space
    // unaccounted until a reclaim scans the tree; it never loses data.
    size_t replaces_at_most = kUnbounded;

    explicit operator bool() const { return value.has_value(); }
    const std::string& operator*() const { return *value; }
  };
  using Entries = std::map<std::string, Update, std::less<>>;
  enum class Lookup { kMissing, kValue, kDeleted };

  WriteBuffer() = default;
  // Copies hold the updates, not the spare memory.
  WriteBuffer(const WriteBuffer& o) : entries_(o.entries_), bytes_(o.bytes_) {}
  WriteBuffer& operator=(const WriteBuffer& o) {
    entries_ = o.entries_;
    bytes_ = o.bytes_;
    return *this;
  }

  void Put(std::string_view key, std::string_view value) {
    PutParts(key, {value});
  }
  // The value is the concatenation of the parts. `replaces_at_most`: see
  // Update.
  void PutParts(std::string_view key,
                std::initializer_list<std::string_view> parts,
                size_t replaces_at_most = kUnbounded) {
    size_t n = 0;
    for (std::string_view p : parts) n += p.size();
    std::string v = SpareString(n);
    for (std::string_view p : parts) v.append(p.data(), p.size());
    Set(key, std::move(v), replaces_at_most);
  }
  // Puts *value itself (no copy) and leaves in *value, emptied, a string of
  // the buffer's spare memory with at least its capacity (new memory when
  // there is none): a caller that builds values in its own string hands
  // them over, and reuses the memory of the ones before.
  // `replaces_at_most`: see Update.
  void PutSwap(std::string_view key, std::string* value,
               size_t replaces_at_most = kUnbounded) {
    std::string spare = SpareString(value->capacity());
    Set(key, std::move(*value), replaces_at_most);
    *value = std::move(spare);
  }
  // A put of a value whose key held, if anything, a value of at most
  // `replaces_at_most` bytes (see Update).
  void PutReplacing(std::string_view key, std::string_view value,
                    size_t replaces_at_most) {
    PutParts(key, {value}, replaces_at_most);
  }
  // Applies another buffer's update of `key` on top of this one's.
  void Apply(std::string_view key, const Update& u) {
    if (!u) return Set(key, std::nullopt, u.replaces_at_most);
    PutParts(key, {*u.value}, u.replaces_at_most);
  }
  // Moves the value put under `key` back out (after a failed write, say);
  // false if there is none.
  bool TakeValue(std::string_view key, std::string* value) {
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second) return false;
    bytes_ -= it->second.value->size();
    *value = std::move(*it->second.value);
    entries_.erase(it);
    bytes_ -= key.size();
    return true;
  }
  void Delete(std::string_view key) { Set(key, std::nullopt); }
  // Appends to a buffered value; the caller checks Find first.
  void AppendTo(std::string_view key, std::string_view value) {
    auto it = entries_.find(key);
    bytes_ += value.size();
    it->second.value->append(value.data(), value.size());
  }
  Lookup Find(std::string_view key, std::string* value) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) return Lookup::kMissing;
    if (!it->second) return Lookup::kDeleted;
    if (value) *value = *it->second;
    return Lookup::kValue;
  }

  const Entries& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  // Approximate memory held: keys plus values.
  size_t bytes() const { return bytes_; }
  void Clear() {
    for (auto& entry : entries_) {
      if (entry.second) Recycle(std::move(*entry.second.value));
    }
    entries_.clear();
    bytes_ = 0;
  }

 private:
  // A key's bound is set by the update that brings it into the buffer:
  // what the backend holds under it stays what it was until the buffer is
  // written, whatever later updates of the key say of the ones before.
  void Set(std::string_view key, std::optional<std::string> value,
           size_t replaces_at_most = kUnbounded) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      bytes_ += key.size();
      it = entries_.emplace(std::string(key), Update{}).first;
      it->second.replaces_at_most = replaces_at_most;
    } else if (it->second) {
      bytes_ -= it->second.value->size();
    }
    if (value) bytes_ += value->size();
    if (it->second) Recycle(std::move(*it->second.value));
    it->second.value = std::move(value);
  }

  // Values of at least kRecycleBytes are kept (up to kSpares) when cleared
  // or replaced, and reused by later puts that fit.
  static constexpr size_t kRecycleBytes = 64u << 10;
  static constexpr size_t kSpares = 2;
  std::string SpareString(size_t n) {
    for (size_t i = 0; i < spare_.size(); ++i) {
      if (spare_[i].capacity() < n) continue;
      std::string s = std::move(spare_[i]);
      spare_.erase(spare_.begin() + static_cast<std::ptrdiff_t>(i));
      s.clear();
      return s;
    }
    std::string s;
    s.reserve(n);
    return s;
  }
  void Recycle(std::string&& s) {
    if (s.capacity() >= kRecycleBytes && spare_.size() < kSpares) {
      spare_.push_back(std::move(s));
    }
  }

  Entries entries_;
  size_t bytes_ = 0;
  std::vector<std::string> spare_;
};

}  // namespace sluice

#endif  // SLUICE_STORE_WRITE_BUFFER_H_
