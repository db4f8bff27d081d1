// The engine's set-up, steps and writing; reading is in engine_read.cc.
#include "adios2/engine.h"

#include <adios2/cxx/Attribute.h>
#include <adios2/cxx/Types.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <stdexcept>
#include <cctype>
#include <type_traits>

#include "adios2/contexts.h"
#include "adios2/engine_types.h"
#include "adios2/stats.h"
#include "sluice/config.h"
#if SLUICE_ADIOS2_WITH_MPI
#include <mpi.h>

#include "sluice/mpi.h"
#endif

namespace sluice {
namespace adios2_engine {
namespace {

// The parameters that are ADIOS2's, not Sluice's.
bool Adios2Parameter(const std::string& key) {
  return key == "PluginName" || key == "PluginLibrary" || key == "Profile";
}

// The context an IO's output goes to: its name, with every character a
// context name cannot hold made '_', and ".sluice".
std::string ContextFor(const std::string& io) {
  std::string n = io.substr(0, 120);
  for (char& c : n) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  if (n.empty() || n[0] == '.') n = "io" + n;
  return n + ".sluice";
}

template <class T>
void MinMax(const T* values, uint64_t n, Block* b) {
  if constexpr (std::is_arithmetic<T>::value) {
    if (n == 0) return;
    T lo, hi;
    MinMaxOf(values, n, &lo, &hi);
    b->min.assign(reinterpret_cast<const char*>(&lo), sizeof(T));
    b->max.assign(reinterpret_cast<const char*>(&hi), sizeof(T));
  } else {
    (void)values;
    (void)n;
    (void)b;
  }
}

}  // namespace

#if ADIOS2_USE_MPI
SluiceEngine::SluiceEngine(adios2::IO io, const std::string& name,
                           adios2::Mode mode, MPI_Comm comm)
    : PluginEngineInterface(io, name, mode, comm) {}
#endif

SluiceEngine::SluiceEngine(adios2::IO io, const std::string& name,
                           adios2::Mode mode)
    : PluginEngineInterface(io, name, mode) {}

SluiceEngine::~SluiceEngine() {
  // Not closed: the step in progress is not committed (Dataset's and
  // Context's destructors leave it uncommitted, to be reclaimed).
}

void SluiceEngine::Fail(const std::string& what, const Status& s) const {
  throw std::runtime_error("sluice ADIOS2 engine (io " + m_IO.Name() + "): " +
                           what + ": " + s.ToString());
}

void SluiceEngine::Fail(const std::string& what) const {
  throw std::invalid_argument("sluice ADIOS2 engine (io " + m_IO.Name() +
                              "): " + what);
}

bool SluiceEngine::writing() const {
  return m_OpenMode == adios2::Mode::Write || m_OpenMode == adios2::Mode::Append;
}

void SluiceEngine::Init() {
  if (m_OpenMode == adios2::Mode::ReadRandomAccess) {
    Fail("Mode::ReadRandomAccess is not supported: open with Mode::Read and "
         "read the steps with BeginStep/EndStep");
  }
  if (!writing() && m_OpenMode != adios2::Mode::Read) {
    Fail("unknown open mode");
  }
  context_name_ = ContextFor(m_IO.Name());
  for (const auto& [key, value] : m_IO.Parameters()) {
    if (Adios2Parameter(key)) continue;
    if (key == "DatasetName") {
      dataset_name_ = value;
    } else if (key == "ContextName") {
      context_name_ = value;
    } else if (key == "BufferChunkSize") {
      settings_.emplace_back("write_buffer_size", value);
    } else {
      bool known = false;
      for (const ConfigVariable& v : Config::Variables()) {
        if (key == v.name) known = true;
      }
      if (!known) {
        Fail("unknown parameter " + key + " (did you mean " +
             Config::ClosestName(key) +
             "? The engine takes ContextName, DatasetName, BufferChunkSize and "
             "Sluice's configuration variables, docs/CONFIG.md)");
      }
      settings_.emplace_back(key, value);
    }
  }
  OpenContext();
  if (m_OpenMode == adios2::Mode::Read) {
    ListSteps();
    return;
  }
  // Every rank works from rank 0's list: the same ids, the same calls.
  std::vector<DatasetIdInfo> ids;
  Check("listing the steps", CommittedIds(&ids));
  int64_t next = 0;
  for (const DatasetIdInfo& i : ids) {
    next = std::max(next, i.id + 1);
    // Mode::Write replaces the output, but not before the new output has a
    // step (or is closed without one): a writer that dies first leaves the
    // old steps as they were.
    if (m_OpenMode == adios2::Mode::Write) replaced_.push_back(i.id);
  }
  next_id_ = next;
}

void SluiceEngine::OpenContext() {
  Config config;
  std::string key = context_name_;
  for (const auto& [k, v] : settings_) {
    Check("parameter " + k, config.Set(k, v));
    key += '\0' + k + '=' + v;
  }
  Status s;
#if ADIOS2_USE_MPI
  // The communicator ADIOS2 hands over is its own each open: no sharing.
  std::unique_ptr<Context> own;
  s = mpi::InitContext(m_Comm, context_name_, config, &own);
  ctx_ = std::move(own);
#else
  bool over_mpi = false;
#if SLUICE_ADIOS2_WITH_MPI
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  over_mpi = initialised && !finalised;
#endif
  over_mpi_ = over_mpi;
  key += '\0';
  key += over_mpi ? "world" : "single";
  s = AcquireContext(key, over_mpi, [&](std::unique_ptr<Context>* out) {
#if SLUICE_ADIOS2_WITH_MPI
    if (over_mpi) return mpi::InitContext(MPI_COMM_WORLD, context_name_, config, out);
#endif
    return Context::InitSingle(context_name_, config, out);
  }, &ctx_);
#endif
  Check("opening context " + context_name_, s);
}

adios2::StepStatus SluiceEngine::BeginStep(adios2::StepMode mode,
                                           const float timeout_seconds) {
  (void)timeout_seconds;
  if (closed_) Fail("BeginStep after Close");
  if (in_step_) Fail("BeginStep inside a step (EndStep first)");
  if (writing()) {
    if (mode != adios2::StepMode::Append) Fail("BeginStep for writing takes StepMode::Append");
    if (!implicit_.empty()) Fail("BeginStep after Puts outside a step");
    OpenWriteStep();
    return adios2::StepStatus::OK;
  }
  if (mode != adios2::StepMode::Read) Fail("BeginStep for reading takes StepMode::Read");
  // Steps a writer committed since: they are offered too.
  if (step_ >= ids_.size()) ListSteps();
  if (step_ >= ids_.size()) return adios2::StepStatus::EndOfStream;
  LoadStep();
  in_step_ = true;
  return adios2::StepStatus::OK;
}

// Rank 0's list, as "status\n" then "id ranks\n" per committed id.
Status SluiceEngine::CommittedIds(std::vector<DatasetIdInfo>* out) {
  std::string text;
  if (ctx_->rank() == 0) {
    std::vector<DatasetIdInfo> ids;
    Status s = ctx_->ListIds(dataset_name_, &ids);
    if (s.ok()) {
      text = "\n";
      for (const DatasetIdInfo& i : ids) {
        if (i.state != IdState::kCommitted) continue;
        text += std::to_string(i.id) + " " + std::to_string(i.ranks) + "\n";
      }
    } else {
      text = s.ToString();
      std::replace(text.begin(), text.end(), '\n', ' ');
      text += "\n";
    }
  }
  Broadcast(&text);
  const size_t nl = text.find('\n');
  if (nl == std::string::npos) return Status::IOError("no list of steps from rank 0");
  if (nl > 0) return Status::IOError("rank 0: " + text.substr(0, nl));
  out->clear();
  for (size_t at = nl + 1; at < text.size();) {
    DatasetIdInfo i;
    long long id = 0;
    int ranks = 0;
    if (sscanf(text.c_str() + at, "%lld %d", &id, &ranks) != 2) {
      return Status::IOError("a bad list of steps from rank 0");
    }
    i.id = id;
    i.ranks = ranks;
    out->push_back(i);
    at = text.find('\n', at) + 1;
    if (at == 0) break;
  }
  return Status::OK();
}

void SluiceEngine::ListSteps() {
  std::vector<DatasetIdInfo> ids;
  Check("listing the steps", CommittedIds(&ids));
  for (const DatasetIdInfo& i : ids) {
    if (ids_.empty() || i.id > ids_.back().id) ids_.push_back(i);
  }
}

#if ADIOS2_USE_MPI || SLUICE_ADIOS2_WITH_MPI
MPI_Comm SluiceEngine::Comm() const {
#if ADIOS2_USE_MPI
  return m_Comm;
#else
  return over_mpi_ ? MPI_COMM_WORLD : MPI_COMM_NULL;
#endif
}
#endif

void SluiceEngine::Broadcast(std::string* data) {
#if ADIOS2_USE_MPI || SLUICE_ADIOS2_WITH_MPI
  MPI_Comm comm = Comm();
  if (comm == MPI_COMM_NULL) return;
  unsigned long long n = data->size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  data->resize(n);
  // In pieces of at most 1 GiB (MPI counts are ints).
  for (unsigned long long at = 0; at < n;) {
    const int len = static_cast<int>(std::min<unsigned long long>(n - at, 1ull << 30));
    MPI_Bcast(data->data() + at, len, MPI_CHAR, 0, comm);
    at += len;
  }
#else
  (void)data;
#endif
}

bool SluiceEngine::AnyRank(bool mine) {
  int v = mine ? 1 : 0, any = v;
#if ADIOS2_USE_MPI || SLUICE_ADIOS2_WITH_MPI
  MPI_Comm comm = Comm();
  if (comm != MPI_COMM_NULL) MPI_Allreduce(&v, &any, 1, MPI_INT, MPI_MAX, comm);
#endif
  return any != 0;
}

std::vector<std::string> SluiceEngine::AllGather(const std::string& mine) {
#if ADIOS2_USE_MPI || SLUICE_ADIOS2_WITH_MPI
  MPI_Comm comm = Comm();
  if (comm == MPI_COMM_NULL) return {mine};
  int n = 1;
  MPI_Comm_size(comm, &n);
  // Lengths first, as 64-bit numbers, so that no rank fails alone.
  unsigned long long len = mine.size();
  std::vector<unsigned long long> lens(n);
  MPI_Allgather(&len, 1, MPI_UNSIGNED_LONG_LONG, lens.data(), 1,
                MPI_UNSIGNED_LONG_LONG, comm);
  unsigned long long total = 0;
  for (unsigned long long l : lens) total += l;
  if (total > static_cast<unsigned long long>(INT32_MAX)) {
    Fail("the ranks' step indexes take " + std::to_string(total) +
         " bytes, more than one gather carries (2 GiB)");
  }
  std::vector<int> counts(n), at(n);
  for (int i = 0, pos = 0; i < n; ++i) {
    counts[i] = static_cast<int>(lens[i]);
    at[i] = pos;
    pos += counts[i];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.data(), static_cast<int>(len), MPI_CHAR, all.data(),
                 counts.data(), at.data(), MPI_CHAR, comm);
  std::vector<std::string> out(n);
  for (int i = 0; i < n; ++i) out[i] = all.substr(at[i], counts[i]);
  return out;
#else
  return {mine};
#endif
}

size_t SluiceEngine::CurrentStep() const { return step_; }

size_t SluiceEngine::Steps() const { return writing() ? step_ : ids_.size(); }

void SluiceEngine::OpenWriteStep() {
  // Collective; a failure of this rank's element after it is kept for
  // EndStep, which fails the step on every rank.
  Status s = ctx_->OpenDataset(dataset_name_, next_id_, kDatasetWrite, &ds_);
  Check("opening step " + std::to_string(step_) + " (id " +
            std::to_string(next_id_) + ")",
        s);
  step_error_ = ds_->OpenElement("adios2.data", ElementKind::kUnique, &data_);
  data_end_ = 0;
  index_ = StepIndex();
  index_.rank = static_cast<uint32_t>(ctx_->rank());
  index_.step = static_cast<uint64_t>(next_id_);
  deferred_.clear();
  in_step_ = true;
}

template <class T>
void SluiceEngine::Put(adios2::Variable<T> v, const T* values, bool deferred) {
  if (closed_) Fail("Put after Close");
  if (!writing()) Fail("Put on an engine opened for reading");
  Block b;
  b.var = v.Name();
  b.type = adios2::GetType<T>();
#ifdef ADIOS2_HAVE_GPU_SUPPORT
  if (v.GetMemorySpace() == adios2::MemorySpace::GPU) {
    Fail("variable " + b.var + ": data in GPU memory is not supported");
  }
#endif
  switch (v.ShapeID()) {
    case adios2::ShapeID::GlobalValue:
      b.shape_id = Shape::kGlobalValue;
      break;
    case adios2::ShapeID::LocalValue:
      b.shape_id = Shape::kLocalValue;
      break;
    case adios2::ShapeID::GlobalArray: {
      b.shape_id = Shape::kGlobalArray;
      const adios2::Dims shape = v.Shape(), start = v.Start(), count = v.Count();
      b.shape.assign(shape.begin(), shape.end());
      b.start.assign(start.begin(), start.end());
      b.count.assign(count.begin(), count.end());
      break;
    }
    case adios2::ShapeID::LocalArray: {
      b.shape_id = Shape::kLocalArray;
      const adios2::Dims count = v.Count();
      b.count.assign(count.begin(), count.end());
      break;
    }
    default:
      Fail("variable " + b.var + ": joined arrays are not supported");
  }
  if constexpr (std::is_same<T, std::string>::value) {
    if (b.shape_id != Shape::kGlobalValue) {
      Fail("variable " + b.var + ": strings are global values only");
    }
  }
  size_t bytes = sizeof(T);
  if (b.shape_id == Shape::kGlobalArray || b.shape_id == Shape::kLocalArray) {
    if (b.count.size() > kMaxDims) Fail("variable " + b.var + ": more than 32 dimensions");
    for (size_t i = 0; i < b.start.size(); ++i) {
      if (b.start[i] > b.shape[i] || b.count[i] > b.shape[i] - b.start[i]) {
        Fail("variable " + b.var + ": the block (start + count) lies beyond "
             "the shape in dimension " + std::to_string(i));
      }
    }
    if (!BlockBytes(b.count, sizeof(T), &b.bytes)) {
      Fail("variable " + b.var + ": block too large");
    }
    bytes = b.bytes;
  }
  if (!in_step_) {
    // Puts outside BeginStep/EndStep: one step, opened (collectively) at
    // Close. Sync Puts' data is copied now; deferred ones' at PerformPuts,
    // or read at Close.
    Pending p;
    p.block = std::move(b);
    if constexpr (std::is_same<T, std::string>::value) {
      p.text = *values;
      p.is_text = true;
    } else if (deferred) {
      p.values = values;
    } else {
      p.own.assign(reinterpret_cast<const char*>(values), bytes);
    }
    implicit_.push_back(std::move(p));
    return;
  }
  index_.blocks.push_back(std::move(b));
  if (deferred) {
    deferred_.push_back({index_.blocks.size() - 1, values});
  } else {
    WriteBlock(&index_.blocks.back(), values);
  }
}

void SluiceEngine::WriteBlock(Block* b, const void* values) {
  auto write_value = [&](auto* typed) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(typed)>>;
    if (b->shape_id == Shape::kGlobalValue || b->shape_id == Shape::kLocalValue) {
      if constexpr (std::is_same<T, std::string>::value) {
        b->value = *typed;
      } else {
        b->value.assign(reinterpret_cast<const char*>(typed), sizeof(T));
        MinMax(typed, 1, b);
      }
      return;
    }
    if constexpr (!std::is_same<T, std::string>::value) {
      MinMax(typed, b->bytes / sizeof(T), b);
      b->offset = data_end_;
      if (!step_error_.ok()) return;  // the step fails at EndStep
      Status s = data_->Write(data_end_, typed, b->bytes);
      Check("writing variable " + b->var, s);
      data_end_ += b->bytes;
    }
  };
  if (!WithType(b->type, values, write_value)) {
    Fail("variable " + b->var + ": unknown type " + b->type);
  }
}

void SluiceEngine::PerformPuts() {
  if (!writing()) return;
  if (!in_step_) {
    // Outside a step: the deferred Puts' data is copied, as BP5 buffers it.
    for (Pending& p : implicit_) {
      if (p.values != nullptr) {
        p.own.assign(static_cast<const char*>(p.values),
                     p.block.shape_id == Shape::kGlobalArray ||
                             p.block.shape_id == Shape::kLocalArray
                         ? p.block.bytes
                         : TypeSize(p.block.type));
        p.values = nullptr;
      }
    }
    return;
  }
  for (const Deferred& d : deferred_) WriteBlock(&index_.blocks[d.block], d.values);
  deferred_.clear();
}

void SluiceEngine::CollectAttributes(StepIndex* index) {
  for (const auto& [name, info] : m_IO.AvailableAttributes()) {
    (void)info;
    Attr a;
    a.name = name;
    a.type = m_IO.AttributeType(name);
    bool known = ForType(a.type, [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      adios2::Attribute<T> attr = m_IO.InquireAttribute<T>(name);
      if (!attr) return;
      const std::vector<T> data = attr.Data();
      a.is_value = attr.IsValue();
      a.elements = data.size();
      if constexpr (std::is_same<T, std::string>::value) {
        a.data = EncodeStrings(data);
      } else {
        a.data.assign(reinterpret_cast<const char*>(data.data()),
                      data.size() * sizeof(T));
      }
    });
    if (!known) Fail("attribute " + name + ": unknown type " + a.type);
    index->attrs.push_back(std::move(a));
  }
}

void SluiceEngine::EndStep() {
  if (closed_) Fail("EndStep after Close");
  if (!in_step_) Fail("EndStep without BeginStep");
  if (!writing()) {
    data_elements_.clear();
    vars_.clear();
    step_indexes_.clear();
    Status s = ds_->Close();
    ds_.reset();
    in_step_ = false;
    ++step_;
    Check("closing step " + std::to_string(step_ - 1), s);
    return;
  }
  // Whatever fails on this rank, every rank reaches the dataset's Close,
  // which then commits nothing and fails everywhere.
  Status local = step_error_;
  try {
    PerformPuts();
    if (ctx_->rank() == 0) CollectAttributes(&index_);
  } catch (const std::exception& e) {
    if (local.ok()) local = Status::IOError(e.what());
  }
  if (local.ok()) local = data_->Close();
  std::unique_ptr<Element> el;
  if (local.ok()) local = ds_->OpenElement("adios2.index", ElementKind::kUnique, &el);
  if (local.ok()) {
    const std::string enc = EncodeStepIndex(index_);
    local = el->Write(0, enc.data(), enc.size());
  }
  if (local.ok()) local = el->Close();
  const std::string what = "committing step " + std::to_string(step_) + " (id " +
                           std::to_string(next_id_) + ")";
  Status s = ds_->Close(local);
  data_.reset();
  ds_.reset();
  in_step_ = false;
  step_error_ = Status::OK();
  Check(what, s);
  ++step_;
  ++next_id_;
  ReplaceOld();
}

void SluiceEngine::ReplaceOld() {
  // Collective: every rank holds rank 0's list.
  for (int64_t id : replaced_) {
    Check("removing id " + std::to_string(id) + ", which this output replaces",
          ctx_->UnlinkId(dataset_name_, id));
  }
  replaced_.clear();
}

void SluiceEngine::DoClose(const int transport_index) {
  (void)transport_index;
  if (closed_) return;
  if (in_step_) EndStep();
  if (writing()) {
    // Puts outside a step, on any rank: one step, on every rank.
    if (AnyRank(!implicit_.empty())) {
      std::vector<Pending> pending;
      pending.swap(implicit_);
      OpenWriteStep();
      for (Pending& p : pending) {
        index_.blocks.push_back(std::move(p.block));
        const void* data = p.is_text ? static_cast<const void*>(&p.text)
                           : p.values != nullptr ? p.values
                                                 : static_cast<const void*>(p.own.data());
        deferred_.push_back({index_.blocks.size() - 1, data});
      }
      // The pending data stays alive until EndStep has written it.
      EndStep();
    }
    ReplaceOld();  // closed without a step: the output is emptied
  }
  closed_ = true;
#if ADIOS2_USE_MPI
  Status s = ctx_ ? ctx_->Fini() : Status::OK();
  ctx_.reset();
  Check("closing", s);
#else
  ctx_.reset();  // kept open for the next engine (contexts.h)
#endif
}

#define SLUICE_DEFINE(T)                                                      \
  void SluiceEngine::DoPutSync(adios2::Variable<T> v, const T* values) {      \
    Put(v, values, false);                                                    \
  }                                                                           \
  void SluiceEngine::DoPutDeferred(adios2::Variable<T> v, const T* values) {  \
    Put(v, values, true);                                                     \
  }
ADIOS2_FOREACH_STDTYPE_1ARG(SLUICE_DEFINE)
#undef SLUICE_DEFINE

#define SLUICE_DEFINE(T)                                                      \
  void SluiceEngine::DoPut(adios2::Variable<T> v,                             \
                           typename adios2::Variable<T>::Span& span,          \
                           const bool initialize, const T& value) {           \
    (void)span;                                                               \
    (void)initialize;                                                         \
    (void)value;                                                              \
    Fail("variable " + v.Name() +                                             \
         ": span Puts are not supported (ADIOS2's plugin interface 2 gives "  \
         "a plugin no buffer to lend): Put the data instead");                \
  }
ADIOS2_FOREACH_PRIMITIVE_STDTYPE_1ARG(SLUICE_DEFINE)
#undef SLUICE_DEFINE

}  // namespace adios2_engine
}  // namespace sluice

extern "C" {

#if ADIOS2_USE_MPI
SLUICE_ADIOS2_EXPORT adios2::plugin::PluginEngineInterface* EngineCreate(
    adios2::IO io, const std::string& name, const adios2::Mode mode,
    MPI_Comm comm) {
  return new sluice::adios2_engine::SluiceEngine(io, name, mode, comm);
}
#else
SLUICE_ADIOS2_EXPORT adios2::plugin::PluginEngineInterface* EngineCreate(
    adios2::IO io, const std::string& name, const adios2::Mode mode) {
  return new sluice::adios2_engine::SluiceEngine(io, name, mode);
}
#endif

SLUICE_ADIOS2_EXPORT void EngineDestroy(
    adios2::plugin::PluginEngineInterface* engine) {
  delete engine;
}

}  // extern "C"
