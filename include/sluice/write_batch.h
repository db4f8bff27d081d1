// WriteBatch: updates applied to a store together, atomically
// (Store::Write). Holds the last update of each key.
//
// Thread-safety: a batch is a value; do not share one between threads while
// it is being filled.
#ifndef SLUICE_WRITE_BATCH_H_
#define SLUICE_WRITE_BATCH_H_

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "sluice/export.h"

namespace sluice {

class WriteBuffer;

class SLUICE_EXPORT WriteBatch {
 public:
  WriteBatch();
  ~WriteBatch();
  WriteBatch(WriteBatch&&) noexcept;
  WriteBatch& operator=(WriteBatch&&) noexcept;

  void Put(std::string_view key, std::string_view value);
  // Puts the concatenation of the parts (a header and a payload, say)
  // without assembling it first.
  void Put(std::string_view key, std::initializer_list<std::string_view> parts);
  void Delete(std::string_view key);
  // Empties the batch. A batch that is cleared and refilled reuses the
  // memory of its large values.
  void Clear();
  bool empty() const;
  // Bytes of keys and values held.
  size_t bytes() const;

  const WriteBuffer& rep() const { return *rep_; }
  WriteBuffer& rep() { return *rep_; }

 private:
  std::unique_ptr<WriteBuffer> rep_;
};

}  // namespace sluice

#endif  // SLUICE_WRITE_BATCH_H_
