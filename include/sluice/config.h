// Configuration: one system for every entry point (datasets, K/V stores,
// files, the interposer, the tool), libhio's model.
//
// A variable has a name ("write_buffer_size"), a value given as text, and a
// source. Sources, strongest first:
//   1. the API (Config::Set, sluice_config_set);
//   2. the environment: SLUICE_ + the name upper-cased
//      (SLUICE_WRITE_BUFFER_SIZE=64m);
//   3. a configuration file, whose sections say where a line applies:
//        [global]             every context and dataset
//        [context:NAME]       the context NAME
//        [dataset:NAME]       the dataset NAME (in any context)
//      and, within the file, a dataset's section beats its context's, which
//      beats [global]; lines before any section are [global];
//   4. the built-in default.
//
// File syntax (docs/CONFIG.md): "name = value" lines, blanks around the
// name and the value trimmed; '#' starts a comment (to the end of the
// line), so a value cannot hold one; blank lines are ignored. An empty
// value is accepted only by a variable whose values include "" (options,
// mount; config_file and config_file_prefix take "" too, but a file cannot
// set them). A name given twice
// in one section: the later line wins. With the variable
// config_file_prefix set (by the API before Load, or the environment:
// SLUICE_CONFIG_FILE_PREFIX=#SLUICE), only lines that begin with the
// prefix (in their first column) are read, the prefix removed before
// comments are, so the configuration can live inside a job script:
//     #SLUICE [context:restart]
//     #SLUICE data_roots = /dev/shm/ckpt,/scratch/me/ckpt
//
// Errors: an unknown name (from the API or a file), a bad value or a
// malformed line is InvalidArgument; the message names the file and line
// and, for an unknown name, the closest known one. An environment variable
// SLUICE_<X> whose <x> is no variable is not an error (the environment
// holds other programs' SLUICE_* settings too); `sluice config` lists them.
// A variable that applies to a whole context (one that tunes its stores,
// for instance) in a [dataset:NAME] section is an error naming the line.
//
// Environment: SLUICE_<X> sets the variable whose name upper-cased is
// exactly <X>; a name in another case (SLUICE_wal) is one of the unknown
// names, since two spellings of one variable would otherwise depend on the
// order of the environment. A bad value of a known one is an error as from
// a file. The same name twice in `env`: the first counts, as for getenv.
//
// Which file: the one Load is given, else the variable config_file (API,
// or the environment: SLUICE_CONFIG_FILE=job.conf), else none.
//
// Two names for one setting:
//   - root is the first entry of data_roots (the interposer's SLUICE_ROOT).
//     Set by a stronger source, root replaces that first entry and keeps
//     the others; set by a weaker one, it is overridden. Set by the same
//     source (both by the API, both in the environment, both in one
//     section of the file), they must name the same directory, or that is
//     an error naming both: a job that says two things is not guessed at.
//   - options is a list "name=value,..." of store options and
//     extent_bytes: each item counts as its variable set by the source
//     that set options, and the variable itself, set by the same source,
//     beats the item.
//
// Entry points: a context loads its own configuration (Load with its name
// and file). The K/V open (Store::Open) and the file layer
// (FileSystem::Open, sluice_mount, the stream API) complete the options
// their caller did not give from the environment and config_file's
// [global] lines (StoreOptions::use_configuration). The interposer reads
// the same once at its start, with its own variables (mount, root,
// writer, merged_reads, lock_wait, options). docs/CONFIG.md says which
// entry point reads which variable.
//
// In an MPI job, rank 0 reads the file and the environment and broadcasts
// the result (Serialize/Deserialize), so every rank uses the same values.
//
// Thread-safety: a Config is a value; const methods may run concurrently.
#ifndef SLUICE_CONFIG_H_
#define SLUICE_CONFIG_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/export.h"
#include "sluice/fs.h"
#include "sluice/status.h"

namespace sluice {

enum class ConfigSource : int {
  kDefault = 0,
  kFile = 1,
  kEnvironment = 2,
  kApi = 3,
};

// Where a variable may be set.
enum class ConfigScope : int {
  // Fixed for a context's lifetime (its stores' tuning, its data roots):
  // [global], [context:NAME], the environment, the API before any dataset
  // is opened.
  kContext = 0,
  // May differ per dataset: also [dataset:NAME].
  kDataset = 1,
};

struct ConfigVariable {
  const char* name;
  const char* default_value;
  ConfigScope scope;
  const char* help;
};

// An effective value and where it came from.
struct SLUICE_EXPORT ConfigValue {
  std::string name;
  std::string value;
  ConfigSource source = ConfigSource::kDefault;
  std::string file;  // kFile: the file
  int line = 0;      // kFile: its line (1-based)
  // The variable whose setting gave this value when it is another one:
  // "root" (for data_roots), "data_roots" (for root), "options" (for a
  // store option or extent_bytes); else empty.
  std::string via;
  // "default", "file PATH:LINE", "environment SLUICE_NAME", "API"; with
  // `via`, "file PATH:LINE (root)", "environment SLUICE_ROOT", "API (root)".
  std::string SourceText() const;
};

class SLUICE_EXPORT Config {
 public:
  // Every variable, sorted by name: each StoreOptions option
  // (StoreOptions::List), extent_bytes (FsOptions), the variables of
  // contexts and datasets (data_roots, dataset_mode, stats,
  // config_file_prefix, ...), and the interposer's (mount, root, ...).
  static const std::vector<ConfigVariable>& Variables();

  // The environment variable that sets `name`: "SLUICE_" + name
  // upper-cased.
  static std::string EnvironmentName(std::string_view name);

  // The known name closest to `name` (edit distance), for messages.
  static std::string ClosestName(std::string_view name);

  // Builds the configuration of context `context` ("" for the entry points
  // that are no context: only [global] applies): reads the environment
  // (`env`: "NAME=value" strings, as environ, ending with a null pointer;
  // null for none) and then the file `file`, which is then config_file's
  // value set by the API; empty: config_file's value (API, environment),
  // if any. A file that cannot be read is an error. Values already Set on
  // *out by the API are kept, and apply while the file is read
  // (config_file_prefix); everything else of *out is replaced. On error
  // *out is unchanged.
  static Status Load(const std::string& context, const std::string& file,
                     const char* const* env, Config* out);

  // Sets a variable by the API (the strongest source), checking its value.
  // Setting config_file or config_file_prefix after Load does not read the
  // file again: it only changes what Get reports. root and data_roots both
  // set by the API must agree (else an error, and nothing changes).
  Status Set(std::string_view name, std::string_view value);

  // The effective value of `name` for dataset `dataset` ("" for the
  // context level). `name` must be a known variable: for any other, a
  // programming error, the value is "" (source kDefault).
  ConfigValue Get(std::string_view name,
                  std::string_view dataset = std::string_view()) const;
  // Every variable's effective value for `dataset`, sorted by name.
  std::vector<ConfigValue> All(
      std::string_view dataset = std::string_view()) const;

  // The store and file options these values give (every StoreOptions
  // name, extent_bytes, at the context level): FsOptions() when none is
  // set. Combinations (StoreOptions::Validate) are checked when a store
  // opens, as for options set any other way.
  Status ToFsOptions(FsOptions* out) const;
  // The options an entry point opens with: each option `given` gives
  // (FsOptions::Given: set by name, or not its default) keeps its value;
  // each other takes this configuration's value where a source set it,
  // else its value in `defaults` (the entry point's own: FsOptions() for
  // Store::Open and FileSystem::Open, the interposer's tuning). The result
  // has store.use_configuration off: it is complete. A value that does not
  // fit (none should, Load checks them all) is InvalidArgument naming its
  // source; *out is then unchanged.
  Status ToFsOptions(const FsOptions& given, const FsOptions& defaults,
                     FsOptions* out) const;

  // A duration: a number of seconds ("90", "1.5"), or a number with the
  // suffix s, m, h or d ("30m", "2d"). Not negative.
  static Status ParseDuration(std::string_view text, double* seconds);
  // A boolean as every boolean variable takes it: 1/0, true/false, on/off,
  // yes/no, in any case (values are kept as given: "ON" stays "ON").
  static Status ParseBool(std::string_view text, bool* value);

  // The environment's SLUICE_* names that are no variable, each with the
  // closest variable name: "SLUICE_WRTE_BUFFER_SIZE (write_buffer_size?)".
  const std::vector<std::string>& unknown_environment() const {
    return unknown_env_;
  }

  const std::string& context() const { return context_; }

  // For rank 0 to hand its configuration to the other ranks: every value
  // with its source, and the unknown environment names, in a versioned
  // byte string. Deserialize checks it whole (anything else is
  // InvalidArgument or Corruption, *out then unchanged).
  std::string Serialize() const;
  static Status Deserialize(std::string_view data, Config* out);

  // The effective configuration of `dataset` ("" for the context level),
  // one variable a line: "name = value  # source" (control characters as
  // \xHH), or a JSON object {"context": ..., "dataset": ..., "variables":
  // [{"name", "value", "source": "default" | "file" | "environment" |
  // "api", "file", "line", "via"}...], "unknown_environment": [...]}
  // ("file" and "line" null unless the source is a file; "via" null unless
  // the value came from another variable, ConfigValue::via).
  std::string ToText(std::string_view dataset = std::string_view()) const;
  std::string ToJson(std::string_view dataset = std::string_view()) const;

 private:
  using Values = std::map<std::string, ConfigValue>;
  // The maps that may hold a value for `dataset`, strongest first: API,
  // environment, [dataset:], [context:], [global].
  std::vector<const Values*> Levels(std::string_view dataset) const;
  // data_roots or root (`name`), from levels[from...].
  ConfigValue GetRoots(const std::string& name,
                       const std::vector<const Values*>& levels,
                       size_t from) const;

  std::string context_;
  // Values set by the API and the environment.
  std::map<std::string, ConfigValue> api_, env_;
  // Values of the file: [global] and [context:<this context>] lines, and
  // the [dataset:NAME] lines of every dataset.
  std::map<std::string, ConfigValue> file_global_, file_context_;
  std::map<std::string, std::map<std::string, ConfigValue>> file_dataset_;
  std::vector<std::string> unknown_env_;
};

}  // namespace sluice

#endif  // SLUICE_CONFIG_H_
