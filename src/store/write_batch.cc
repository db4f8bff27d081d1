#include "sluice/write_batch.h"

#include "sluice/iterator.h"
#include "store/write_buffer.h"

namespace sluice {

WriteBatch::WriteBatch() : rep_(new WriteBuffer) {}
WriteBatch::~WriteBatch() = default;
WriteBatch::WriteBatch(WriteBatch&&) noexcept = default;
WriteBatch& WriteBatch::operator=(WriteBatch&&) noexcept = default;

void WriteBatch::Put(std::string_view key, std::string_view value) {
  rep_->Put(key, value);
}
void WriteBatch::Put(std::string_view key,
                     std::initializer_list<std::string_view> parts) {
  rep_->PutParts(key, parts);
}
void WriteBatch::Delete(std::string_view key) { rep_->Delete(key); }
void WriteBatch::Clear() { rep_->Clear(); }
bool WriteBatch::empty() const { return rep_->empty(); }
size_t WriteBatch::bytes() const { return rep_->bytes(); }

Iterator::~Iterator() = default;

}  // namespace sluice
