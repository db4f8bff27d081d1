// Iterator: an ordered scan over a store's keys (bytewise order).
//
// An iterator sees the store as it was when it was created: updates made
// afterwards are not visible through it. Keys and values it returns stay
// valid until the next call that moves it.
//
// Thread-safety: one iterator must not be used from two threads at once;
// distinct iterators of one store may be used concurrently.
#ifndef SLUICE_ITERATOR_H_
#define SLUICE_ITERATOR_H_

#include <string_view>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

class SLUICE_EXPORT Iterator {
 public:
  Iterator() = default;
  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;
  virtual ~Iterator();

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  // To the first key >= target.
  virtual void Seek(std::string_view target) = 0;
  // To the last key <= target.
  virtual void SeekForPrev(std::string_view target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Not OK when the scan met an error (e.g. a corrupt block).
  virtual Status status() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_ITERATOR_H_
