// The engine's reading: a step's indexes, the variables and attributes it
// defines in the IO, and selections assembled from every writer's blocks.
#include <adios2/cxx/Attribute.h>
#include <adios2/cxx/Types.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "adios2/engine.h"
#include "adios2/engine_types.h"
#include "util/coding.h"

namespace sluice {
namespace adios2_engine {
namespace {

static_assert(std::is_same<size_t, uint64_t>::value,
              "ADIOS2's dimensions (size_t) are stored as uint64_t");

// Reads each run on its own above this; below, the span of the block that
// holds the runs is read once (up to kMaxSpan) and the runs copied out.
constexpr uint64_t kDirectRun = 1u << 20;
constexpr uint64_t kMaxSpan = 64u << 20;

}  // namespace

Element* SluiceEngine::DataElement(int rank) {
  auto it = data_elements_.find(rank);
  if (it != data_elements_.end()) return it->second.get();
  std::unique_ptr<Element> el;
  Status s = ds_->OpenElement("adios2.data", ElementKind::kUnique, &el, rank);
  Check("step " + std::to_string(step_) + ": rank " + std::to_string(rank) +
            "'s data",
        s);
  return (data_elements_[rank] = std::move(el)).get();
}

void SluiceEngine::LoadStep() {
  const DatasetIdInfo& info = ids_[step_];
  const std::string what = "step " + std::to_string(step_) + " (id " +
                           std::to_string(info.id) + " of dataset " +
                           dataset_name_ + ")";
  Status s = ctx_->OpenDataset(dataset_name_, info.id, kDatasetRead, &ds_);
  Check("opening " + what, s);
  // Each rank reads the indexes of writers me, me + ranks, ... (its own
  // store's first: no other store is opened for them) and every rank gets
  // them all. A failure travels too, so that every rank fails alike.
  auto who = [&](int r) { return what + ", rank " + std::to_string(r); };
  std::string mine;
  Status bad;
  for (int r = ctx_->rank(); r < info.ranks && bad.ok(); r += ctx_->size()) {
    std::unique_ptr<Element> el;
    Status e = ds_->OpenElement("adios2.index", ElementKind::kUnique, &el, r);
    std::string data;
    if (e.ok()) {
      data.resize(el->size());
      size_t got = 0;
      e = el->Read(0, data.data(), data.size(), &got);
      if (e.ok() && got != data.size()) e = Status::Corruption("short read");
    }
    if (!e.ok()) {
      bad = Status::IOError("reading the index of " + who(r) + ": " + e.ToString());
      break;
    }
    PutFixed32(&mine, static_cast<uint32_t>(r));
    PutFixed64(&mine, data.size());
    mine += data;
  }
  const std::string tag = bad.ok() ? std::string(1, '\0') : "\1" + bad.message();
  const std::vector<std::string> all = AllGather(tag + mine);
  for (const std::string& part : all) {
    if (!part.empty() && part[0] != '\0') Fail(part.substr(1));
  }
  step_indexes_.assign(static_cast<size_t>(info.ranks), StepIndex());
  std::vector<bool> have(static_cast<size_t>(info.ranks), false);
  for (const std::string& part : all) {
    ByteReader in{std::string_view(part).substr(1)};
    while (!in.in.empty()) {
      const uint32_t r = in.U32();
      const uint64_t n = in.U64();
      const char* p = nullptr;
      if (in.bad || r >= have.size() || have[r] || !in.Take(n, &p)) {
        Fail("the step indexes of " + what + " came back damaged");
      }
      StepIndex& x = step_indexes_[r];
      const std::string w = who(static_cast<int>(r));
      Check("the index of " + w, DecodeStepIndex(std::string_view(p, n), w, &x));
      if (x.rank != r || x.step != static_cast<uint64_t>(info.id)) {
        Fail("the index of " + w + " says rank " + std::to_string(x.rank) +
             ", step " + std::to_string(x.step));
      }
      have[r] = true;
    }
  }
  for (size_t r = 0; r < have.size(); ++r) {
    if (!have[r]) Fail("no index of " + who(static_cast<int>(r)));
  }
  DefineVariables();
  if (!step_indexes_.empty()) DefineAttributes(step_indexes_[0]);
}

void SluiceEngine::DefineVariables() {
  vars_.clear();
  const std::string at = "step " + std::to_string(step_) + ": ";
  for (size_t r = 0; r < step_indexes_.size(); ++r) {
    for (const Block& b : step_indexes_[r].blocks) {
      VarBlocks& vb = vars_[b.var];
      if (vb.blocks.empty()) {
        vb.type = b.type;
        vb.shape_id = b.shape_id;
        vb.shape = b.shape;
      } else if (vb.type != b.type || vb.shape_id != b.shape_id ||
                 vb.shape != b.shape ||
                 (b.shape_id == Shape::kLocalArray &&
                  b.count.size() != vb.blocks[0].second->count.size())) {
        Fail(at + "variable " + b.var + "'s blocks disagree on its type or "
             "shape (rank " + std::to_string(r) + ")");
      }
      vb.blocks.emplace_back(static_cast<int>(r), &b);
      vb.strings.push_back(b.value.c_str());
    }
  }
  // Variables of an earlier step that this one lacks go, as with BP5.
  for (const auto& [name, params] : m_IO.AvailableVariables(true)) {
    (void)params;
    if (!vars_.count(name)) m_IO.RemoveVariable(name);
  }
  for (auto& [name, vb] : vars_) {
    if (vb.shape_id == Shape::kLocalValue) vb.shape = {vb.blocks.size()};
    if (vb.shape_id == Shape::kGlobalArray && !vb.shape.empty()) {
      for (size_t i = 0; i < vb.blocks.size(); ++i) {
        const Block& b = *vb.blocks[i].second;
        vb.by_start.emplace_back(b.start[0], static_cast<uint32_t>(i));
        vb.longest = std::max(vb.longest, b.count[0]);
      }
      std::sort(vb.by_start.begin(), vb.by_start.end());
    }
    const std::string have = m_IO.VariableType(name);
    if (!have.empty() && have != vb.type) m_IO.RemoveVariable(name);
    const bool known = ForType(vb.type, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      // What the decoder could not check without the type: sizes.
      for (const auto& [rank, b] : vb.blocks) {
        const std::string w = at + "variable " + name + ", the block of rank " +
                              std::to_string(rank) + ": ";
        if (b->min.size() != b->max.size() ||
            (!b->min.empty() && b->min.size() != sizeof(T))) {
          Fail(w + "a minimum or maximum of the wrong size");
        }
        const bool value = vb.shape_id == Shape::kGlobalValue ||
                           vb.shape_id == Shape::kLocalValue;
        if constexpr (std::is_same<T, std::string>::value) {
          if (!value) Fail(w + "an array of strings");
        } else if (value) {
          if (b->value.size() != sizeof(T)) Fail(w + "a value of the wrong size");
        } else {
          uint64_t bytes = 0;
          if (!BlockBytes(b->count, sizeof(T), &bytes)) {
            Fail(w + "more elements than it can hold");
          }
          if (b->bytes != bytes) {
            Fail(w + std::to_string(b->bytes) + " bytes for " +
                 std::to_string(bytes / sizeof(T)) + " elements of " + vb.type);
          }
        }
      }
      adios2::Variable<T> v = m_IO.InquireVariable<T>(name);
      const adios2::Dims shape(vb.shape.begin(), vb.shape.end());
      const adios2::Dims zero(shape.size(), 0);
      switch (vb.shape_id) {
        case Shape::kGlobalArray:
        case Shape::kLocalValue:
          if constexpr (!std::is_same<T, std::string>::value) {
            // A new step's shape, and the whole of it selected, as BP5
            // defines the variable anew each step.
            if (!v) {
              m_IO.DefineVariable<T>(name, shape, zero, shape);
            } else {
              v.SetShape(shape);
              v.SetSelection({zero, shape});
            }
          }
          break;
        case Shape::kGlobalValue:
          if (!v) m_IO.DefineVariable<T>(name);
          break;
        case Shape::kLocalArray:
          if (!v) {
            const auto& c = vb.blocks[0].second->count;
            m_IO.DefineVariable<T>(name, {}, {}, adios2::Dims(c.begin(), c.end()));
          }
          break;
      }
    });
    if (!known) Fail(at + "variable " + name + ": unknown type " + vb.type);
  }
}

void SluiceEngine::DefineAttributes(const StepIndex& index) {
  for (const Attr& a : index.attrs) {
    const bool known = ForType(a.type, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      if constexpr (std::is_same<T, std::string>::value) {
        std::vector<std::string> v;
        Check("attribute " + a.name, DecodeStrings(a.data, a.elements, &v));
        if (a.is_value && v.size() == 1) {
          m_IO.DefineAttribute<std::string>(a.name, v[0], "", "/", true);
        } else {
          m_IO.DefineAttribute<std::string>(a.name, v.data(), v.size(), "",
                                            "/", true);
        }
      } else {
        if (a.elements == 0 || a.data.size() / sizeof(T) != a.elements ||
            a.data.size() % sizeof(T) != 0) {
          Fail("attribute " + a.name + ": " + std::to_string(a.data.size()) +
               " bytes for " + std::to_string(a.elements) + " elements of " +
               a.type);
        }
        std::vector<T> v(a.elements);
        memcpy(v.data(), a.data.data(), a.data.size());
        if (a.is_value && v.size() == 1) {
          m_IO.DefineAttribute<T>(a.name, v[0], "", "/", true);
        } else {
          m_IO.DefineAttribute<T>(a.name, v.data(), v.size(), "", "/", true);
        }
      }
    });
    if (!known) Fail("attribute " + a.name + ": unknown type " + a.type);
  }
}

template <class T>
void SluiceEngine::Get(adios2::Variable<T> v, T* values, const Want& want) {
  if (closed_) Fail("Get after Close");
  if (writing()) Fail("Get on an engine opened for writing");
  if (!in_step_) Fail("Get outside a step (BeginStep first)");
  const std::string name = v.Name();
  auto it = vars_.find(name);
  if (it == vars_.end()) {
    Fail("variable " + name + " has no data in step " + std::to_string(step_));
  }
  const VarBlocks& vb = it->second;
  if (vb.type != adios2::GetType<T>()) {
    Fail("variable " + name + " is " + vb.type + ", not " + adios2::GetType<T>());
  }
  auto value_of = [&](const Block& b, T* out) {
    if constexpr (std::is_same<T, std::string>::value) {
      *out = b.value;
    } else {
      memcpy(static_cast<void*>(out), b.value.data(), sizeof(T));  // size checked
    }
  };
  auto block_of = [&]() -> const std::pair<int, const Block*>& {
    if (want.block_id >= vb.blocks.size()) {
      Fail("variable " + name + ": block " + std::to_string(want.block_id) +
           " of " + std::to_string(vb.blocks.size()));
    }
    return vb.blocks[want.block_id];
  };
  switch (vb.shape_id) {
    case Shape::kGlobalValue:
      value_of(*vb.blocks[0].second, values);
      return;
    case Shape::kLocalValue: {
      uint64_t first = 0, n = vb.blocks.size();
      if (want.block) {
        block_of();
        first = want.block_id;
        n = 1;
      } else if (!want.count.empty()) {
        if (want.start.size() != 1 || want.count.size() != 1) {
          Fail("variable " + name + ": a local value reads as a 1-D array");
        }
        first = want.start[0];
        n = want.count[0];
      }
      if (first > vb.blocks.size() || n > vb.blocks.size() - first) {
        Fail("variable " + name + ": selection beyond its " +
             std::to_string(vb.blocks.size()) + " values");
      }
      for (uint64_t i = 0; i < n; ++i) value_of(*vb.blocks[first + i].second, values + i);
      return;
    }
    case Shape::kLocalArray:
      if constexpr (!std::is_same<T, std::string>::value) {
        // A box of the block, in the block's own coordinates: the whole
        // block unless a selection says which part.
        const auto& [rank, b] = block_of();
        const std::vector<uint64_t> origin(b->count.size(), 0);
        std::vector<uint64_t> s0 = want.start, sc = want.count;
        if (sc.empty()) sc = b->count;
        if (s0.empty()) s0 = origin;
        CheckBox(name, b->count, s0, sc);
        CopyBlock(name, rank, *b, origin, sizeof(T), s0, sc,
                  reinterpret_cast<char*>(values));
      }
      return;
    case Shape::kGlobalArray:
      if constexpr (!std::is_same<T, std::string>::value) {
        if (want.block) {  // that block alone, whole
          const auto& [rank, b] = block_of();
          CopyBlock(name, rank, *b, b->start, sizeof(T), b->start, b->count,
                    reinterpret_cast<char*>(values));
          return;
        }
        std::vector<uint64_t> s0 = want.start, sc = want.count;
        if (sc.empty()) {
          s0.assign(vb.shape.size(), 0);
          sc = vb.shape;
        }
        CheckBox(name, vb.shape, s0, sc);
        if (vb.shape.empty()) return;
        // The blocks that may overlap: those starting in dimension 0
        // within [s0 - longest + 1, s0 + sc).
        const uint64_t from = s0[0] >= vb.longest ? s0[0] - vb.longest + 1 : 0;
        auto first = std::lower_bound(vb.by_start.begin(), vb.by_start.end(),
                                      std::make_pair(from, uint32_t{0}));
        for (auto i = first; i != vb.by_start.end() && i->first < s0[0] + sc[0]; ++i) {
          const auto& [rank, b] = vb.blocks[i->second];
          CopyBlock(name, rank, *b, b->start, sizeof(T), s0, sc,
                    reinterpret_cast<char*>(values));
        }
      }
      return;
  }
}

void SluiceEngine::CheckBox(const std::string& name,
                            const std::vector<uint64_t>& shape,
                            const std::vector<uint64_t>& s0,
                            const std::vector<uint64_t>& sc) {
  if (s0.size() != shape.size() || sc.size() != shape.size()) {
    Fail("variable " + name + ": a selection of " + std::to_string(sc.size()) +
         " dimensions in one of " + std::to_string(shape.size()));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (s0[i] > shape[i] || sc[i] > shape[i] - s0[i]) {
      Fail("variable " + name + ": the selection lies beyond the shape in "
           "dimension " + std::to_string(i));
    }
  }
}

void SluiceEngine::CopyBlock(const std::string& name, int rank, const Block& b,
                             const std::vector<uint64_t>& bstart, size_t elem,
                             const std::vector<uint64_t>& s0,
                             const std::vector<uint64_t>& sc, char* out) {
  const size_t nd = b.count.size();
  if (nd == 0 || bstart.size() != nd || s0.size() != nd || sc.size() != nd) return;
  std::vector<uint64_t> lo(nd), hi(nd), idx(nd), sstride(nd, 1), bstride(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    lo[i] = std::max(s0[i], bstart[i]);
    hi[i] = std::min(s0[i] + sc[i], bstart[i] + b.count[i]);
    if (lo[i] >= hi[i]) return;  // no overlap
  }
  for (size_t i = nd - 1; i > 0; --i) {
    sstride[i - 1] = sstride[i] * sc[i];
    bstride[i - 1] = bstride[i] * b.count[i];
  }
  // Dimensions k+1.. are whole in both the block and the selection: a run
  // is contiguous in each across them and dimension k's range.
  size_t k = nd - 1;
  auto whole = [&](size_t j) {
    return lo[j] == bstart[j] && hi[j] == bstart[j] + b.count[j] &&
           lo[j] == s0[j] && hi[j] == s0[j] + sc[j];
  };
  while (k > 0 && whole(k)) --k;
  const uint64_t run = (hi[k] - lo[k]) * bstride[k] * elem;
  uint64_t runs = 1;
  for (size_t j = 0; j < k; ++j) runs *= hi[j] - lo[j];
  auto boff = [&]() {  // of idx in the block, in elements
    uint64_t o = 0;
    for (size_t j = 0; j < nd; ++j) o += (idx[j] - bstart[j]) * bstride[j];
    return o;
  };
  auto soff = [&]() {
    uint64_t o = 0;
    for (size_t j = 0; j < nd; ++j) o += (idx[j] - s0[j]) * sstride[j];
    return o;
  };
  Element* el = DataElement(rank);
  auto read = [&](uint64_t at, char* to, uint64_t len) {
    size_t got = 0;
    Status s = el->Read(b.offset + at, to, len, &got);
    if (s.ok() && got != len) s = Status::Corruption("its data ends early");
    Check("variable " + name + ", the block of rank " + std::to_string(rank), s);
  };
  // The span of the block the runs lie in.
  idx = lo;
  const uint64_t first = boff() * elem;
  for (size_t j = 0; j < nd; ++j) idx[j] = j < k ? hi[j] - 1 : lo[j];
  const uint64_t span = boff() * elem + run - first;
  const bool direct = runs == 1 || run >= kDirectRun || span > kMaxSpan;
  if (!direct) {
    tmp_.resize(span);
    read(first, tmp_.data(), span);
  }
  idx = lo;
  for (uint64_t r = 0; r < runs; ++r) {
    const uint64_t from = boff() * elem;
    char* to = out + soff() * elem;
    if (direct) {
      read(from, to, run);
    } else {
      memcpy(to, tmp_.data() + (from - first), run);
    }
    // The next run: dimensions k-1 down to 0, as an odometer.
    for (size_t j = k; j-- > 0;) {
      if (++idx[j] < hi[j]) break;
      idx[j] = lo[j];
    }
  }
}

void SluiceEngine::PerformGets() {}

adios2::MinVarInfo* SluiceEngine::MinBlocksInfo(const std::string& var,
                                                const size_t step) const {
  // Reading is by steps: the blocks are those of the step the reader is
  // in, whatever `step` says (ADIOS2's core asks for step 0, its relative
  // step, when it sizes a block selection).
  (void)step;
  if (writing() || !in_step_) {
    Fail("BlocksInfo outside a step: the engine knows the blocks of the step "
         "a reader is in");
  }
  auto it = vars_.find(var);
  if (it == vars_.end()) return nullptr;
  const VarBlocks& vb = it->second;
  // As BP5 describes each kind (BP5Deserializer::MinBlocksInfo).
  auto* info = new adios2::MinVarInfo(0, nullptr);
  info->Step = step_;
  info->WasLocalValue = vb.shape_id == Shape::kLocalValue;
  switch (vb.shape_id) {
    case Shape::kGlobalArray:
      info->Dims = static_cast<int>(vb.shape.size());
      info->Shape = vb.shape.data();
      break;
    case Shape::kLocalValue:
      // An array of one value per block: the "shape" is that number.
      info->Dims = 1;
      info->Shape = reinterpret_cast<const size_t*>(static_cast<uintptr_t>(vb.blocks.size()));
      break;
    case Shape::kLocalArray:
      info->Dims = static_cast<int>(vb.blocks[0].second->count.size());
      break;
    case Shape::kGlobalValue:
      info->IsValue = true;
      break;
  }
  const bool is_string = vb.type == adios2::GetType<std::string>();
  for (size_t i = 0; i < vb.blocks.size(); ++i) {
    const auto& [rank, b] = vb.blocks[i];
    adios2::MinBlockInfo bi;
    bi.WriterID = rank;
    bi.BlockID = i;
    bi.Start = nullptr;
    bi.Count = nullptr;
    memset(&bi.MinMax, 0, sizeof bi.MinMax);
    if (!b->min.empty()) {  // sizes checked when the step was loaded
      memcpy(&bi.MinMax.MinUnion, b->min.data(), b->min.size());
      memcpy(&bi.MinMax.MaxUnion, b->max.data(), b->max.size());
    }
    switch (vb.shape_id) {
      case Shape::kLocalValue:
        // ADIOS2 reads a local value's start and count as the numbers.
        bi.Start = reinterpret_cast<const size_t*>(static_cast<uintptr_t>(i));
        bi.Count = reinterpret_cast<const size_t*>(static_cast<uintptr_t>(1));
        break;
      case Shape::kGlobalArray:
        bi.Start = b->start.data();
        bi.Count = b->count.data();
        break;
      case Shape::kLocalArray:
        bi.Count = b->count.data();
        break;
      case Shape::kGlobalValue: {
        const void* p = is_string ? static_cast<const void*>(&vb.strings[i])
                                  : static_cast<const void*>(b->value.data());
        bi.BufferP = const_cast<void*>(p);
        break;
      }
    }
    info->BlocksInfo.push_back(bi);
  }
  return info;
}

#define SLUICE_DEFINE(T)                                                       \
  void SluiceEngine::DoGetSync(adios2::Variable<T> v, T* values) {             \
    Want w;                                                                    \
    const adios2::Dims start = v.Start(), count = v.Count();                   \
    w.start.assign(start.begin(), start.end());                                \
    w.count.assign(count.begin(), count.end());                                \
    if (v.ShapeID() == adios2::ShapeID::LocalArray) {                          \
      w.block = true;                                                          \
      w.block_id = v.BlockID();                                                \
    }                                                                          \
    Get(v, values, w);                                                         \
  }                                                                            \
  void SluiceEngine::DoGetDeferred(adios2::Variable<T> v, T* values) {         \
    DoGetSync(v, values);                                                      \
  }                                                                            \
  void SluiceEngine::DoGetSync(adios2::Variable<T> v, T* values,               \
                               const adios2::core::Selection& sel) {           \
    if (sel.GetStepStart() != 0 || sel.GetStepCount() != 1) {                 \
      Fail("variable " + v.Name() +                                            \
           ": step selections are not supported (read each step between "     \
           "BeginStep and EndStep)");                                          \
    }                                                                          \
    if (sel.HasMemorySelection()) {                                            \
      Fail("variable " + v.Name() + ": memory selections are not supported"); \
    }                                                                          \
    Want w;                                                                    \
    if (sel.HasBlockSelection()) {                                             \
      w.block = true;                                                          \
      w.block_id = sel.GetBlockID();                                           \
    } else if (sel.GetSelectionType() == adios2::SelectionType::BoundingBox) { \
      const adios2::Dims& start = sel.GetStart();                              \
      const adios2::Dims& count = sel.GetCount();                              \
      w.start.assign(start.begin(), start.end());                              \
      w.count.assign(count.begin(), count.end());                              \
    }                                                                          \
    Get(v, values, w);                                                         \
  }                                                                            \
  void SluiceEngine::DoGetDeferred(adios2::Variable<T> v, T* values,           \
                                   const adios2::core::Selection& sel) {       \
    DoGetSync(v, values, sel);                                                 \
  }
ADIOS2_FOREACH_STDTYPE_1ARG(SLUICE_DEFINE)
#undef SLUICE_DEFINE

}  // namespace adios2_engine
}  // namespace sluice
