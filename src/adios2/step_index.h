// The index of one rank's part of one ADIOS2 step, as the plugin engine
// (engine.h) stores it: the element "adios2.index" of the rank in the
// step's dataset id, beside its data (the element "adios2.data", every
// block's bytes one after the other). Kept apart from ADIOS2's headers so
// the format can be tested and fuzzed without them.
//
// Format version 1, all integers little-endian:
//   magic "SLADIOS2", u32 version, u64 body length, body, u64 XXH64 of
//   everything before it (seed 0).
//   body: u32 rank, u64 step, u32 number of blocks, the blocks, u32 number
//   of attributes, the attributes.
//   block: str variable, str type, u8 shape id, dims shape, dims start,
//   dims count, u64 offset, u64 bytes, str value (a value's bytes, held
//   inline: global and local values), str min, str max (sizeof(T) bytes
//   each, or empty when the type has no order).
//   attribute: str name, str type, u8 is_value, u64 elements, str data
//   (the elements' bytes; strings each as a str).
//   dims: u32 n, n u64; str: u32 length, the bytes.
// Decode checks all of it that does not need the type's size: magic,
// version (a newer one is an error naming it), checksum, lengths, shape
// ids, that start + count fits the shape, that every block's bytes lie
// inside 2^63. The engine checks the sizes (values, minimum and maximum,
// bytes against the elements) when it loads a step. XXH64 finds damage,
// not forgery: a reader trusts the stores it reads as it trusts its files.
#ifndef SLUICE_ADIOS2_STEP_INDEX_H_
#define SLUICE_ADIOS2_STEP_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice {
namespace adios2_engine {

constexpr uint32_t kStepIndexVersion = 1;
constexpr size_t kMaxDims = 32;

// ADIOS2's ShapeID numbering (adios2::ShapeID).
enum class Shape : uint8_t {
  kGlobalValue = 1,
  kGlobalArray = 2,
  kLocalValue = 4,
  kLocalArray = 5,
};

struct Block {
  std::string var;
  std::string type;  // as adios2::GetType<T>(): "double", "int32_t", ...
  Shape shape_id = Shape::kGlobalArray;
  std::vector<uint64_t> shape, start, count;
  uint64_t offset = 0;  // in the rank's data element
  uint64_t bytes = 0;
  std::string value;    // values: the bytes, inline (offset, bytes unused)
  std::string min, max;
};

struct Attr {
  std::string name;
  std::string type;
  bool is_value = true;
  uint64_t elements = 0;
  std::string data;
};

struct StepIndex {
  uint32_t rank = 0;
  uint64_t step = 0;
  std::vector<Block> blocks;
  std::vector<Attr> attrs;
};

std::string EncodeStepIndex(const StepIndex& index);
// `what` names the index in errors (its dataset, id and rank).
Status DecodeStepIndex(std::string_view data, const std::string& what,
                       StepIndex* out);

// Attribute data: strings as (u32 length, bytes) each.
std::string EncodeStrings(const std::vector<std::string>& strings);
Status DecodeStrings(std::string_view data, uint64_t n,
                     std::vector<std::string>* out);

}  // namespace adios2_engine
}  // namespace sluice

#endif  // SLUICE_ADIOS2_STEP_INDEX_H_
