// WriteBuffer: updates held in memory before they reach the backend, as one
// atomic batch. Used for explicit batches (StartBatch/StopBatch) and for
// LevelDB without a log, which LSMIO buffers through a write batch. Keeps
// only the last state of each key, in key order, so reads can look through
// it and the backend receives sorted updates.
//
// Not thread-safe: the store guards it with its mutex.
#ifndef SLUICE_STORE_WRITE_BUFFER_H_
#define SLUICE_STORE_WRITE_BUFFER_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

class WriteBuffer {
 public:
  using Entries = std::map<std::string, std::optional<std::string>, std::less<>>;
  enum class Lookup { kMissing, kValue, kDeleted };

  void Put(std::string_view key, std::string_view value) {
    Set(key, std::string(value));
  }
  void Delete(std::string_view key) { Set(key, std::nullopt); }
  // Appends to a buffered value; the caller checks Find first.
  void AppendTo(std::string_view key, std::string_view value) {
    auto it = entries_.find(key);
    bytes_ += value.size();
    it->second->append(value.data(), value.size());
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
    entries_.clear();
    bytes_ = 0;
  }

 private:
  void Set(std::string_view key, std::optional<std::string> value) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      bytes_ += key.size();
      it = entries_.emplace(std::string(key), std::nullopt).first;
    } else if (it->second) {
      bytes_ -= it->second->size();
    }
    if (value) bytes_ += value->size();
    it->second = std::move(value);
  }

  Entries entries_;
  size_t bytes_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_STORE_WRITE_BUFFER_H_
