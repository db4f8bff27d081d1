// Internals of the configuration (sluice/config.h), shared by its files:
// the table of variables and how each value is checked (config_vars.cc),
// the file reader (config_file.cc); config.cc holds the sources and their
// precedence, config_format.cc the text, JSON and serialized forms.
#ifndef SLUICE_UTIL_CONFIG_INTERNAL_H_
#define SLUICE_UTIL_CONFIG_INTERNAL_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/config.h"

namespace sluice {
namespace config_internal {

// How a variable's value is checked.
enum class Kind {
  kStore,     // a StoreOptions option: StoreOptions::Set decides
  kExtent,    // extent_bytes: FsOptions::Set decides
  kRoots,     // comma-separated directories
  kMode,      // dataset_mode
  kBool,      // 1/0, true/false, on/off, yes/no (as StoreOptions)
  kText,      // anything, "" included
  kDuration,  // Config::ParseDuration
  kUnixTime,  // whole seconds since the epoch, >= 0
  kRank,      // an integer >= -1
  kRoot,      // one directory, as an entry of data_roots (root)
  kOptions,   // a "name=value,..." list FsOptions::SetAll takes (options)
  kMount,     // "" or an absolute directory other than / (mount)
  kWriter,    // an integer in [-1, 99999999] (writer)
  kStageMode,    // auto | immediate | end_of_job | disable
  kAggregation,  // n_n | n_m | n_1
  kCount,        // an integer >= 0
  kBandwidth,    // bytes per second, with k/m/g suffixes (0: no cap)
  kKeepLast,     // an integer >= 0, or one per data root, comma-separated
};

struct Spec {
  std::string name;
  std::string default_value;
  std::string help;
  ConfigScope scope;
  Kind kind;
  // Only by the API and the environment: it says which file, or which of
  // its lines, is read (config_file, config_file_prefix).
  bool not_in_file = false;
};

struct Table {
  std::vector<Spec> specs;            // sorted by name
  std::vector<ConfigVariable> vars;   // the same, pointing into specs
};

// Every variable, sorted by name, made once.
const Table& GetTable();
// The variable `name`, or null.
const Spec* Find(std::string_view name);

std::string Lower(std::string_view s);
std::string Upper(std::string_view s);
// `s` without blanks (space, tab, CR, FF, VT) at either end.
std::string_view Trim(std::string_view s);

// The edit (Levenshtein) distance between a and b.
size_t EditDistance(std::string_view a, std::string_view b);

// "unknown variable 'NAME' (did you mean CLOSEST?)"
std::string UnknownName(std::string_view name);

// Why `value` is no value of `spec` (OK if it is one).
Status Check(const Spec& spec, std::string_view value);
// Check, with a message naming where the value came from ("FILE:LINE: ",
// "environment SLUICE_X: ", or nothing for the API), the variable and the
// value.
Status CheckValue(const std::string& where, const Spec& spec,
                  std::string_view value);

// root and data_roots both in `values` (one source: the API, the
// environment, or one section of a file) must name the same first
// directory: else InvalidArgument naming both.
Status CheckRootAlias(const std::map<std::string, ConfigValue>& values);

// ---- the file --------------------------------------------------------------

// The values of a file: [global] (and the lines before any section),
// [context:<this context>], and each [dataset:NAME].
struct FileValues {
  std::map<std::string, ConfigValue> global, context;
  std::map<std::string, std::map<std::string, ConfigValue>> datasets;
  // [context:NAME] of the other contexts: checked, not applied.
  std::map<std::string, std::map<std::string, ConfigValue>> other_contexts;
};

// Reads configuration file `path`, whose text is `text`, for context
// `context`: only the lines that begin with `prefix` when it is not empty.
Status ParseFile(const std::string& path, const std::string& text,
                 const std::string& context, const std::string& prefix,
                 FileValues* out);

}  // namespace config_internal
}  // namespace sluice

#endif  // SLUICE_UTIL_CONFIG_INTERNAL_H_
