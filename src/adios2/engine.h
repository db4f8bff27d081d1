// Sluice's ADIOS2 plugin engine (libsluice_adios2.so), on ADIOS2's plugin
// interface 2 (ADIOS2 >= 2.12, adios2/plugin/PluginEngineInterface.h).
// An application selects it in its XML, no code changed:
//
//   <io name="checkpoint">
//     <engine type="Plugin">
//       <parameter key="PluginName" value="sluice"/>
//       <parameter key="PluginLibrary" value="sluice_adios2"/>
//       <parameter key="data_roots" value="/dev/shm/ckpt,/scratch/ckpt"/>
//     </engine>
//   </io>
//
// with ADIOS2_PLUGIN_PATH naming the directory that holds the library.
//
// What it stores (docs/ADIOS2.md). ADIOS2 2.12 hands a plugin the
// plugin's name, not the one the program opens, so the output is placed by
// the IO and the parameters: the dataset context ContextName (default: the
// IO's name + ".sluice", sluice/dataset.h) in the first data root, and in
// it the dataset DatasetName (default "steps"), one id per step, committed
// atomically at EndStep once every rank's data is durable: a reader never
// sees a step whose commit did not complete. In a step, each rank writes
// its blocks one after the other into its own element "adios2.data" and
// their index (step_index.h) into "adios2.index"; rank 0's index also
// holds the attributes.
//
// Parameters: PluginName and PluginLibrary (ADIOS2's); ContextName;
// DatasetName; BufferChunkSize (the store's write_buffer_size, as LSMIO
// maps it); Profile (ADIOS2's, ignored); and any of Sluice's configuration
// variables by name (docs/CONFIG.md), which beat the environment and the
// configuration file. Any other key is an error naming the closest one.
//
// Ranks. ADIOS2 built with MPI hands the engine its communicator. ADIOS2
// built without MPI (the PyPI wheel) gives none: under mpiexec each rank
// opens its own serial ADIOS2, and the engine, finding MPI initialised,
// runs over MPI_COMM_WORLD; without MPI it is rank 0 of 1. Every decision
// that leads to a collective call is taken from rank 0's view or agreed
// (the steps listed, Puts outside a step), and a rank's failure in a step
// reaches the commit, which then fails on every rank.
//
// Modes: Write (replaces the steps there: they go once the new output has
// its first step, or at a Close without one, so a writer that dies first
// leaves them as they were), Append (goes on after the last step) and Read
// (BeginStep offers each committed step in turn, then EndOfStream). Not
// supported, each an exception that says so: ReadRandomAccess; a Get with
// a step selection; span Puts (interface 2 gives a plugin no way to lend
// the application its memory: ADIOS2's core asks the engine for the span's
// buffer, and its plugin wrapper answers null); joined arrays; strings
// other than global values; GPU memory. A memory selection (SetMemory-
// Selection) is not seen by a plugin at all: do not use one with it.
//
// Puts: sync Puts are written (into the store's buffers) at once; deferred
// ones keep the application's pointer until PerformPuts or EndStep, as
// ADIOS2 promises, and are written then, without another copy. Outside a
// step they are held (sync ones copied) until Close, which writes them as
// one step on every rank.
// Gets are served when called (sync or deferred): a selection is assembled
// from every block that overlaps it, whichever rank wrote it. The
// variables a plugin defines have no engine for ADIOS2's core to ask a
// block's size: after SetBlockSelection, SetSelection (the block's count,
// from BlocksInfo) sizes a Get into a vector.
#ifndef SLUICE_ADIOS2_ENGINE_H_
#define SLUICE_ADIOS2_ENGINE_H_

#include <adios2/plugin/PluginEngineInterface.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adios2/step_index.h"
#include "sluice/dataset.h"
#if SLUICE_ADIOS2_WITH_MPI && !ADIOS2_USE_MPI
#include <mpi.h>
#endif

namespace sluice {
namespace adios2_engine {

class SluiceEngine : public adios2::plugin::PluginEngineInterface {
 public:
#if ADIOS2_USE_MPI
  SluiceEngine(adios2::IO io, const std::string& name, adios2::Mode mode,
               MPI_Comm comm);
#endif
  SluiceEngine(adios2::IO io, const std::string& name, adios2::Mode mode);
  ~SluiceEngine() override;

  void Init() override;
  adios2::StepStatus BeginStep(adios2::StepMode mode,
                               const float timeout_seconds = -1.0f) override;
  void EndStep() override;
  size_t CurrentStep() const override;
  void PerformPuts() override;
  void PerformGets() override;
  size_t Steps() const override;
  adios2::MinVarInfo* MinBlocksInfo(const std::string& var,
                                    const size_t step) const override;
  void DoClose(const int transport_index = -1) override;

#define SLUICE_DECLARE(T)                                                  \
  void DoPutSync(adios2::Variable<T> v, const T* values) override;         \
  void DoPutDeferred(adios2::Variable<T> v, const T* values) override;     \
  void DoGetSync(adios2::Variable<T> v, T* values) override;               \
  void DoGetDeferred(adios2::Variable<T> v, T* values) override;           \
  void DoGetSync(adios2::Variable<T> v, T* values,                         \
                 const adios2::core::Selection& sel) override;             \
  void DoGetDeferred(adios2::Variable<T> v, T* values,                     \
                     const adios2::core::Selection& sel) override;
  ADIOS2_FOREACH_STDTYPE_1ARG(SLUICE_DECLARE)
#undef SLUICE_DECLARE
#define SLUICE_DECLARE(T)                                                  \
  void DoPut(adios2::Variable<T> v, typename adios2::Variable<T>::Span& s, \
             const bool initialize, const T& value) override;
  ADIOS2_FOREACH_PRIMITIVE_STDTYPE_1ARG(SLUICE_DECLARE)
#undef SLUICE_DECLARE

 private:
  // A selection to read: a box of a global array (empty count: the whole
  // shape), or a block.
  struct Want {
    std::vector<uint64_t> start, count;
    bool block = false;
    size_t block_id = 0;
  };
  struct Deferred {
    size_t block;        // in index_.blocks
    const void* values;
  };
  // A Put outside BeginStep/EndStep, held until Close.
  struct Pending {
    Block block;
    const void* values = nullptr;  // deferred: the application's
    std::string own;               // sync, or deferred after PerformPuts
    std::string text;              // a string value
    bool is_text = false;
  };
  // The blocks of one variable in the step being read.
  struct VarBlocks {
    std::string type;
    Shape shape_id = Shape::kGlobalArray;
    std::vector<uint64_t> shape;  // global arrays; local values: {blocks}
    std::vector<std::pair<int, const Block*>> blocks;  // (writer rank, block)
    std::vector<const char*> strings;  // string values, for MinBlocksInfo
    // Global arrays: the blocks in order of their start in dimension 0,
    // and their longest count there, to find those a box overlaps.
    std::vector<std::pair<uint64_t, uint32_t>> by_start;
    uint64_t longest = 0;
  };

  [[noreturn]] void Fail(const std::string& what, const Status& s) const;
  [[noreturn]] void Fail(const std::string& what) const;
  void Check(const std::string& what, const Status& s) const {
    if (!s.ok()) Fail(what, s);
  }
  bool writing() const;
  void OpenContext();
  // Over the engine's ranks (one without MPI). Rank 0's `data` on every
  // rank; whether any rank says `mine`; every rank's `mine`, in rank order.
#if ADIOS2_USE_MPI || SLUICE_ADIOS2_WITH_MPI
  MPI_Comm Comm() const;
#endif
  void Broadcast(std::string* data);
  bool AnyRank(bool mine);
  std::vector<std::string> AllGather(const std::string& mine);
  // The dataset's committed ids as rank 0 lists them, on every rank, so
  // that every rank makes the same collective calls from them (a writer
  // may commit, or another rank unlink, while they list).
  Status CommittedIds(std::vector<DatasetIdInfo>* out);
  // Reading: the committed ids after the last one known, appended to ids_.
  void ListSteps();
  // Writing, Mode::Write: removes the ids the output had when opened.
  void ReplaceOld();
  // Writing.
  void OpenWriteStep();
  template <class T>
  void Put(adios2::Variable<T> v, const T* values, bool deferred);
  void WriteBlock(Block* b, const void* values);
  void CollectAttributes(StepIndex* index);
  // Reading.
  void LoadStep();
  void DefineVariables();
  void DefineAttributes(const StepIndex& index);
  template <class T>
  void Get(adios2::Variable<T> v, T* values, const Want& want);
  // Fails unless the box [s0, s0 + sc) lies in `shape`.
  void CheckBox(const std::string& name, const std::vector<uint64_t>& shape,
                const std::vector<uint64_t>& s0, const std::vector<uint64_t>& sc);
  // Copies what block b (of writer `rank`, its box starting at bstart)
  // holds of the box [s0, s0 + sc) into `out`, laid out as that box.
  void CopyBlock(const std::string& name, int rank, const Block& b,
                 const std::vector<uint64_t>& bstart, size_t elem,
                 const std::vector<uint64_t>& s0, const std::vector<uint64_t>& sc,
                 char* out);
  Element* DataElement(int rank);

  std::string context_name_;
  std::string dataset_name_ = "steps";
  std::vector<std::pair<std::string, std::string>> settings_;
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<Dataset> ds_;
  bool over_mpi_ = false;
  bool in_step_ = false;
  bool closed_ = false;
  size_t step_ = 0;  // the step being (or next) written or read
  // Writing: the id the next step gets, the ids this output replaces,
  // this rank's failure in the step (the step then fails on every rank).
  int64_t next_id_ = 0;
  std::vector<int64_t> replaced_;
  Status step_error_;
  std::unique_ptr<Element> data_;
  uint64_t data_end_ = 0;
  StepIndex index_;
  std::vector<Deferred> deferred_;
  std::vector<Pending> implicit_;
  // Reading: the committed ids; the step's indexes and variables.
  std::vector<DatasetIdInfo> ids_;
  std::vector<StepIndex> step_indexes_;
  std::map<std::string, VarBlocks> vars_;
  std::map<int, std::unique_ptr<Element>> data_elements_;
  std::string tmp_;  // a span of a block, copied out run by run
};

}  // namespace adios2_engine
}  // namespace sluice

#endif  // SLUICE_ADIOS2_ENGINE_H_
