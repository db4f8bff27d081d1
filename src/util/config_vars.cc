// Configuration (sluice/config.h): the table of variables, their names,
// and how each value is checked.
#include <errno.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "util/config_internal.h"

namespace sluice {
namespace config_internal {
namespace {

// The default of every StoreOptions option, as StoreOptions::ToString
// prints a default-constructed one ("name=value" lines).
std::map<std::string, std::string> StoreDefaults() {
  std::map<std::string, std::string> out;
  std::istringstream in(StoreOptions().ToString());
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// One directory of data_roots. Paths may hold blanks, so none is trimmed;
// but a blank at either end of an entry is far likelier a space after a
// comma than a directory's name, and would send data to a directory
// nobody meant.
Status CheckRoot(std::string_view entry) {
  if (entry.empty()) {
    return Status::InvalidArgument("an empty directory in the list");
  }
  if (Trim(entry).size() != entry.size()) {
    return Status::InvalidArgument("directory '" + std::string(entry) +
                                   "' begins or ends with a blank");
  }
  return Status::OK();
}

// The reason alone: StoreOptions and FsOptions begin their messages with
// "option NAME: ", which the caller's message already says.
std::string Reason(const Status& s, const std::string& name) {
  const std::string prefix = "option " + name + ": ";
  const std::string& m = s.message();
  return m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

const Table& GetTable() {
  static const Table table = [] {
    Table t;
    const std::map<std::string, std::string> defaults = StoreDefaults();
    for (const StoreOptions::Info& info : StoreOptions::List()) {
      auto d = defaults.find(info.name);
      t.specs.push_back({info.name, d == defaults.end() ? "" : d->second,
                         info.help, ConfigScope::kContext, Kind::kStore});
    }
    t.specs.push_back({"extent_bytes", "4m",
                       "largest extent, and each open file's write buffer "
                       "(4k..256m)",
                       ConfigScope::kContext, Kind::kExtent});
    t.specs.push_back({"data_roots", ".",
                       "directories for data, comma-separated, in order; "
                       "data goes to the first",
                       ConfigScope::kContext, Kind::kRoots});
    t.specs.push_back({"stage_mode", "auto",
                       "when a committed id drains to the next data root: "
                       "auto (as soon as possible, skipping ids superseded "
                       "before their drain starts) | immediate (every id) "
                       "| end_of_job (at the context's end) | disable",
                       ConfigScope::kDataset, Kind::kStageMode});
    t.specs.push_back({"aggregation", "n_m",
                       "the drain's containers: n_n (one per rank) | n_m "
                       "(one per node, or per aggregation_group ranks) | "
                       "n_1 (one per id)",
                       ConfigScope::kDataset, Kind::kAggregation});
    t.specs.push_back({"aggregation_group", "0",
                       "n_m: ranks per container (0 = the ranks of a node)",
                       ConfigScope::kDataset, Kind::kCount});
    t.specs.push_back({"drain_threads", "1",
                       "threads draining ids in each process (at least 1)",
                       ConfigScope::kContext, Kind::kCount});
    t.specs.push_back({"drain_bandwidth", "0",
                       "bytes per second a node's drain writes at most, "
                       "shared by its ranks (k/m/g suffixes; 0 = no cap)",
                       ConfigScope::kContext, Kind::kBandwidth});
    t.specs.push_back({"keep_last", "0",
                       "ids of a dataset kept on a data root once as many "
                       "newer ones are complete there (0 = all); one number, "
                       "or one per data root, comma-separated",
                       ConfigScope::kDataset, Kind::kKeepLast});
    t.specs.push_back({"dataset_mode", "basic",
                       "basic (a store per rank) | file_per_node (a store "
                       "per node)",
                       ConfigScope::kDataset, Kind::kMode});
    t.specs.push_back({"stats", "0",
                       "print one line per dataset when the context ends",
                       ConfigScope::kContext, Kind::kBool});
    t.specs.push_back({"config_file_prefix", "",
                       "read only the file's lines that begin with this, "
                       "which is removed (API or environment only)",
                       ConfigScope::kContext, Kind::kText, true});
    t.specs.push_back({"config_file", "",
                       "the configuration file read when the caller names "
                       "none (API or environment only)",
                       ConfigScope::kContext, Kind::kText, true});
    t.specs.push_back({"root", ".",
                       "alias of the first entry of data_roots (the "
                       "interposer's SLUICE_ROOT)",
                       ConfigScope::kContext, Kind::kRoot});
    t.specs.push_back({"options", "",
                       "store options and extent_bytes as one list "
                       "name=value,...; the variables themselves beat it",
                       ConfigScope::kContext, Kind::kOptions});
    t.specs.push_back({"mount", "",
                       "interposer: the absolute directory whose paths are "
                       "stored (empty: the interposer is off)",
                       ConfigScope::kContext, Kind::kMount});
    t.specs.push_back({"writer", "-1",
                       "interposer: the process's writer number (-1: its "
                       "MPI rank, else none)",
                       ConfigScope::kContext, Kind::kWriter});
    t.specs.push_back({"merged_reads", "0",
                       "interposer: a process with a writer number reads "
                       "every writer's data until its first change",
                       ConfigScope::kContext, Kind::kBool});
    t.specs.push_back({"lock_wait", "60",
                       "interposer: how long to wait for a store another "
                       "process holds (duration)",
                       ConfigScope::kContext, Kind::kDuration});
    t.specs.push_back({"mtbf", "0",
                       "the machine's mean time between failures "
                       "(duration; 0 = unknown)",
                       ConfigScope::kContext, Kind::kDuration});
    t.specs.push_back({"job_end_time", "0",
                       "when the job ends, in Unix seconds (0 = not known)",
                       ConfigScope::kContext, Kind::kUnixTime});
    t.specs.push_back({"job_end_margin", "0",
                       "time kept free before the job's end (duration; 0 = "
                       "twice the cost of the last checkpoint)",
                       ConfigScope::kContext, Kind::kDuration});
    t.specs.push_back({"test_fail_commit_rank", "-1",
                       "for tests: this rank reports a failure when a "
                       "dataset closes (-1 = none)",
                       ConfigScope::kDataset, Kind::kRank});
    std::sort(t.specs.begin(), t.specs.end(),
              [](const Spec& a, const Spec& b) { return a.name < b.name; });
    // Pointers into t.specs: it is not changed after this.
    for (const Spec& s : t.specs) {
      t.vars.push_back({s.name.c_str(), s.default_value.c_str(), s.scope,
                        s.help.c_str()});
    }
    return t;
  }();
  return table;
}

const Spec* Find(std::string_view name) {
  const std::vector<Spec>& specs = GetTable().specs;
  auto it = std::lower_bound(
      specs.begin(), specs.end(), name,
      [](const Spec& s, std::string_view n) { return s.name < n; });
  return it != specs.end() && it->name == name ? &*it : nullptr;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  const char* blanks = " \t\r\f\v";
  const size_t b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return std::string_view();
  const size_t e = s.find_last_not_of(blanks);
  return s.substr(b, e - b + 1);
}

std::string UnknownName(std::string_view name) {
  return "unknown variable '" + std::string(name) + "' (did you mean " +
         Config::ClosestName(name) + "?)";
}

// Why `value` is no value of `spec` (OK if it is one).
Status Check(const Spec& spec, std::string_view value) {
  switch (spec.kind) {
    case Kind::kStore: {
      StoreOptions scratch;
      return scratch.Set(spec.name, value);
    }
    case Kind::kExtent: {
      FsOptions scratch;
      return scratch.Set(spec.name, value);
    }
    case Kind::kRoots: {
      size_t pos = 0;
      for (;;) {
        size_t end = value.find(',', pos);
        if (end == std::string_view::npos) end = value.size();
        Status s = CheckRoot(value.substr(pos, end - pos));
        if (!s.ok()) return s;
        if (end == value.size()) break;
        pos = end + 1;
      }
      return Status::OK();
    }
    case Kind::kRoot:
      if (value.find(',') != std::string_view::npos) {
        return Status::InvalidArgument(
            "one directory, without a comma (root is the first entry of "
            "data_roots)");
      }
      return CheckRoot(value);
    case Kind::kOptions: {
      FsOptions scratch;
      return scratch.SetAll(value);
    }
    case Kind::kMount:
      if (value.empty()) return Status::OK();
      if (value[0] != '/' ||
          value.find_first_not_of('/') == std::string_view::npos) {
        return Status::InvalidArgument(
            "not an absolute directory other than /");
      }
      return Status::OK();
    case Kind::kMode:
      if (value == "basic" || value == "file_per_node") return Status::OK();
      return Status::InvalidArgument("not basic or file_per_node");
    case Kind::kBool: {
      bool b = false;
      return Config::ParseBool(value, &b);
    }
    case Kind::kText:
      return Status::OK();
    case Kind::kStageMode:
      if (value == "auto" || value == "immediate" || value == "end_of_job" ||
          value == "disable") {
        return Status::OK();
      }
      return Status::InvalidArgument(
          "not auto, immediate, end_of_job or disable");
    case Kind::kAggregation:
      if (value == "n_n" || value == "n_m" || value == "n_1") {
        return Status::OK();
      }
      return Status::InvalidArgument("not n_n, n_m or n_1");
    case Kind::kCount:
    case Kind::kKeepLast: {
      // One count, or (keep_last) one per data root.
      std::string_view rest = value;
      do {
        const size_t comma = rest.find(',');
        const std::string t(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view()
                                               : rest.substr(comma + 1);
        char* end = nullptr;
        errno = 0;
        const long long v = strtoll(t.c_str(), &end, 10);
        if (t.empty() || !isdigit(static_cast<unsigned char>(t[0])) ||
            *end != '\0' || errno != 0 || v < 0 || v > INT32_MAX ||
            (spec.kind == Kind::kCount && comma != std::string_view::npos)) {
          return Status::InvalidArgument(
              spec.kind == Kind::kCount
                  ? "not an integer >= 0"
                  : "not an integer >= 0, or a comma-separated list of them");
        }
        if (comma == std::string_view::npos) break;
      } while (true);
      return Status::OK();
    }
    case Kind::kBandwidth: {
      size_t bytes = 0;
      Status s = ParseSize(value, &bytes);
      if (!s.ok()) {
        return Status::InvalidArgument("not a size in bytes per second "
                                       "(e.g. 256m)");
      }
      return Status::OK();
    }
    case Kind::kDuration: {
      double seconds = 0;
      return Config::ParseDuration(value, &seconds);
    }
    case Kind::kUnixTime:
    case Kind::kRank:
    case Kind::kWriter: {
      const std::string t(value);
      char* end = nullptr;
      errno = 0;
      const long long v = strtoll(t.c_str(), &end, 10);
      const long long lo = spec.kind == Kind::kUnixTime ? 0 : -1;
      const long long hi = spec.kind == Kind::kUnixTime ? INT64_MAX
                           : spec.kind == Kind::kRank   ? INT32_MAX
                                                        : 99999999;
      if (t.empty() || isspace(static_cast<unsigned char>(t[0])) ||
          *end != '\0' || errno != 0 || v < lo || v > hi) {
        switch (spec.kind) {
          case Kind::kRank:
            return Status::InvalidArgument("not an integer >= -1");
          case Kind::kWriter:
            return Status::InvalidArgument(
                "not a writer number (0..99999999, or -1: the MPI rank)");
          default:
            return Status::InvalidArgument(
                "not a whole number of seconds >= 0");
        }
      }
      return Status::OK();
    }
  }
  return Status::InvalidArgument("no such kind of variable");
}

// Check, with a message naming where the value came from ("FILE:LINE: ",
// "environment SLUICE_X: ", or nothing for the API), the variable and the
// value.
Status CheckValue(const std::string& where, const Spec& spec,
                  std::string_view value) {
  Status s = Check(spec, value);
  if (s.ok()) return s;
  return Status::InvalidArgument(where + "bad value '" + std::string(value) +
                                 "' for " + spec.name + ": " +
                                 Reason(s, spec.name));
}

namespace {
// Where a value came from, as the start of a message: "FILE:LINE: ",
// "environment SLUICE_X: ", or nothing for the API.
std::string Where(const ConfigValue& v) {
  switch (v.source) {
    case ConfigSource::kFile:
      return v.file + ":" + std::to_string(v.line) + ": ";
    case ConfigSource::kEnvironment:
      return "environment " + Config::EnvironmentName(v.name) + ": ";
    default:
      return "";
  }
}
}  // namespace

Status CheckRootAlias(const std::map<std::string, ConfigValue>& values) {
  auto r = values.find("root");
  auto d = values.find("data_roots");
  if (r == values.end() || d == values.end()) return Status::OK();
  const std::string& roots = d->second.value;
  if (roots.substr(0, roots.find(',')) == r->second.value) return Status::OK();
  const ConfigValue& dv = d->second;
  std::string other;
  switch (dv.source) {
    case ConfigSource::kFile:
      other = "line " + std::to_string(dv.line);
      break;
    case ConfigSource::kEnvironment:
      other = Config::EnvironmentName(dv.name);
      break;
    default:
      other = "also set by the API";
      break;
  }
  return Status::InvalidArgument(
      Where(r->second) + "root '" + r->second.value +
      "' disagrees with data_roots '" + roots + "' (" + other +
      "): root is another name for the first directory of data_roots; set "
      "one of them, or the same directory in both");
}

}  // namespace config_internal

using config_internal::GetTable;
using config_internal::Spec;
using config_internal::Upper;
using config_internal::Lower;
using config_internal::EditDistance;

std::string Config::EnvironmentName(std::string_view name) {
  return "SLUICE_" + Upper(name);
}

const std::vector<ConfigVariable>& Config::Variables() {
  return GetTable().vars;
}

std::string Config::ClosestName(std::string_view name) {
  // Lower case first: SLUICE_WRTE_BUFFER_SIZE and "WAL" are still near.
  const std::string lower = Lower(name);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const Spec& s : GetTable().specs) {  // sorted: ties go to the first
    const size_t d = EditDistance(lower, s.name);
    if (d < best_distance) {
      best_distance = d;
      best = s.name;
    }
  }
  return best;
}

Status Config::ParseDuration(std::string_view text, double* seconds) {
  std::string_view number = text;
  double unit = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: unit = 0; break;
    }
    if (unit != 0) {
      number.remove_suffix(1);
    } else {
      unit = 1;
    }
  }
  // Digits with at most one '.' ("90", "1.5", ".5", "120."): no sign,
  // exponent, "inf" or hexadecimal, which strtod would take. Read by hand,
  // as strtod would follow the program's locale (the interposer reads
  // lock_wait inside any program).
  double v = 0, scale = 1;
  bool digits = false, dot = false;
  for (const char c : number) {
    if (c >= '0' && c <= '9') {
      digits = true;
      if (dot) {
        scale /= 10;
        v += (c - '0') * scale;
      } else {
        v = v * 10 + (c - '0');
      }
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      digits = false;
      break;
    }
  }
  if (!digits) {
    return Status::InvalidArgument(
        "not a duration: '" + std::string(text) +
        "' (seconds, or a number with the suffix s, m, h or d)");
  }
  v *= unit;
  if (!std::isfinite(v)) {
    return Status::InvalidArgument("duration out of range: '" +
                                   std::string(text) + "'");
  }
  *seconds = v;
  return Status::OK();
}

Status Config::ParseBool(std::string_view text, bool* value) {
  const std::string t = Lower(text);
  if (t == "1" || t == "true" || t == "on" || t == "yes") {
    *value = true;
  } else if (t == "0" || t == "false" || t == "off" || t == "no") {
    *value = false;
  } else {
    return Status::InvalidArgument(
        "not a boolean (1/0, true/false, on/off, yes/no)");
  }
  return Status::OK();
}

}  // namespace sluice
