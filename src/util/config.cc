// Configuration (sluice/config.h): the table of variables, the environment
// and file readers, precedence, and the byte string rank 0 broadcasts.
#include "sluice/config.h"

#include <errno.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "util/coding.h"
#include "util/posix.h"
#include "util/text.h"

namespace sluice {
namespace {

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
};

struct Spec {
  std::string name;
  std::string default_value;
  std::string help;
  ConfigScope scope;
  Kind kind;
};

struct Table {
  std::vector<Spec> specs;            // sorted by name
  std::vector<ConfigVariable> vars;   // the same, pointing into specs
};

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
                       ConfigScope::kContext, Kind::kText});
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

std::string UnknownName(std::string_view name) {
  return "unknown variable '" + std::string(name) + "' (did you mean " +
         Config::ClosestName(name) + "?)";
}

// The reason alone: StoreOptions and FsOptions begin their messages with
// "option NAME: ", which the caller's message already says.
std::string Reason(const Status& s, const std::string& name) {
  const std::string prefix = "option " + name + ": ";
  const std::string& m = s.message();
  return m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m;
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
      // Paths may hold blanks, so none is trimmed; but a blank at either
      // end of an entry is far likelier a space after a comma than a
      // directory's name, and would send data to a directory nobody meant.
      size_t pos = 0;
      for (;;) {
        size_t end = value.find(',', pos);
        if (end == std::string_view::npos) end = value.size();
        const std::string_view entry = value.substr(pos, end - pos);
        if (entry.empty()) {
          return Status::InvalidArgument("an empty directory in the list");
        }
        if (Trim(entry).size() != entry.size()) {
          return Status::InvalidArgument("directory '" + std::string(entry) +
                                         "' begins or ends with a blank");
        }
        if (end == value.size()) break;
        pos = end + 1;
      }
      return Status::OK();
    }
    case Kind::kMode:
      if (value == "basic" || value == "file_per_node") return Status::OK();
      return Status::InvalidArgument("not basic or file_per_node");
    case Kind::kBool: {
      bool b = false;
      return Config::ParseBool(value, &b);
    }
    case Kind::kText:
      return Status::OK();
    case Kind::kDuration: {
      double seconds = 0;
      return Config::ParseDuration(value, &seconds);
    }
    case Kind::kUnixTime:
    case Kind::kRank: {
      const std::string t(value);
      char* end = nullptr;
      errno = 0;
      const long long v = strtoll(t.c_str(), &end, 10);
      const long long lo = spec.kind == Kind::kRank ? -1 : 0;
      const long long hi = spec.kind == Kind::kRank ? INT32_MAX : INT64_MAX;
      if (t.empty() || isspace(static_cast<unsigned char>(t[0])) ||
          *end != '\0' || errno != 0 || v < lo || v > hi) {
        return Status::InvalidArgument(
            spec.kind == Kind::kRank ? "not an integer >= -1"
                                     : "not a whole number of seconds >= 0");
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

// ---- the file --------------------------------------------------------------

// Where the lines of one section go.
enum class Section { kGlobal, kThisContext, kOtherContext, kDataset };

struct FileValues {
  std::map<std::string, ConfigValue> global, context;
  std::map<std::string, std::map<std::string, ConfigValue>> datasets;
};

Status ParseHeader(const std::string& where, std::string_view line,
                   const std::string& context, Section* section,
                   std::string* dataset) {
  const Status bad = Status::InvalidArgument(
      where + "bad section header '" + std::string(line) +
      "' (want [global], [context:NAME] or [dataset:NAME])");
  if (line.size() < 2 || line.back() != ']') return bad;
  const std::string_view inside = Trim(line.substr(1, line.size() - 2));
  if (inside == "global") {
    *section = Section::kGlobal;
    return Status::OK();
  }
  const size_t colon = inside.find(':');
  if (colon == std::string_view::npos) return bad;
  const std::string_view kind = Trim(inside.substr(0, colon));
  const std::string_view name = Trim(inside.substr(colon + 1));
  if (name.empty() || name.find_first_of("[]") != std::string_view::npos) {
    return bad;
  }
  if (kind == "context") {
    *section =
        name == context ? Section::kThisContext : Section::kOtherContext;
  } else if (kind == "dataset") {
    *section = Section::kDataset;
    *dataset = std::string(name);
  } else {
    return bad;
  }
  return Status::OK();
}

Status ParseFile(const std::string& path, const std::string& text,
                 const std::string& context, const std::string& prefix,
                 FileValues* out) {
  Section section = Section::kGlobal;
  std::string dataset;
  size_t pos = 0;
  for (int number = 1; pos < text.size(); ++number) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    // The prefix first: with "#SLUICE" every line it marks would otherwise
    // be a comment.
    if (!prefix.empty()) {
      if (line.compare(0, prefix.size(), prefix) != 0) continue;
      line.remove_prefix(prefix.size());
    }
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (line[0] == '[') {
      Status s = ParseHeader(where, line, context, &section, &dataset);
      if (!s.ok()) return s;
      continue;
    }
    const size_t eq = line.find('=');
    const std::string_view name =
        eq == std::string_view::npos ? std::string_view()
                                     : Trim(line.substr(0, eq));
    if (name.empty()) {
      return Status::InvalidArgument(
          where + "malformed line '" + std::string(line) +
          "' (want name = value, or a section header [global], "
          "[context:NAME] or [dataset:NAME])");
    }
    const std::string_view value = Trim(line.substr(eq + 1));
    const Spec* spec = Find(name);
    if (spec == nullptr) {
      return Status::InvalidArgument(where + UnknownName(name));
    }
    if (spec->name == "config_file_prefix") {
      return Status::InvalidArgument(
          where + "config_file_prefix cannot be set in a configuration file "
                  "(it says which of the file's lines are read): set it by "
                  "the API or SLUICE_CONFIG_FILE_PREFIX");
    }
    if (section == Section::kDataset && spec->scope == ConfigScope::kContext) {
      return Status::InvalidArgument(
          where + spec->name + " applies to a whole context and cannot be " +
          "set in [dataset:" + dataset + "] (set it in [global] or " +
          "[context:NAME])");
    }
    Status s = CheckValue(where, *spec, value);
    if (!s.ok()) return s;
    ConfigValue v;
    v.name = spec->name;
    v.value = std::string(value);
    v.source = ConfigSource::kFile;
    v.file = path;
    v.line = number;
    switch (section) {
      case Section::kGlobal: out->global[v.name] = v; break;
      case Section::kThisContext: out->context[v.name] = v; break;
      case Section::kOtherContext: break;  // checked, not used
      case Section::kDataset: out->datasets[dataset][v.name] = v; break;
    }
  }
  return Status::OK();
}

// ---- text and JSON ---------------------------------------------------------

// A value from the environment or the API may hold a line break: as \xHH,
// so that ToText stays one line per variable.
std::string OneLine(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      text::AppendHex("\\x%02x", c, &out);
    } else {
      out += ch;
    }
  }
  return out;
}


const char* SourceKind(ConfigSource source) {
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile: return "file";
    case ConfigSource::kEnvironment: return "environment";
    case ConfigSource::kApi: return "api";
  }
  return "unknown";
}

// ---- the serialized form ---------------------------------------------------
//
// "SLUICECF", format version (fixed32), then the context, the maps api,
// environment, [global], [context:] (each: count, then per value its name,
// value, source (one byte), file, line), the datasets (count, then per
// dataset its name and map), the unknown environment names (count, then
// each). Strings are a fixed32 length and the bytes; integers fixed32.

constexpr char kMagic[] = "SLUICECF";
constexpr size_t kMagicSize = 8;
constexpr uint32_t kFormatVersion = 1;

void PutU32(std::string* out, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  out->append(buf, 4);
}

void PutString(std::string* out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out->append(s.data(), s.size());
}

void PutMap(std::string* out, const std::map<std::string, ConfigValue>& m) {
  PutU32(out, static_cast<uint32_t>(m.size()));
  for (const auto& [name, v] : m) {
    PutString(out, name);
    PutString(out, v.value);
    out->push_back(static_cast<char>(v.source));
    PutString(out, v.file);
    PutU32(out, static_cast<uint32_t>(v.line));
  }
}

// Reads what PutU32 and PutString wrote, never past the end: a count or
// length beyond what is left fails at once, so garbage cannot make it
// allocate much.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool U32(uint32_t* v) {
    if (data_.size() < 4) return false;
    *v = DecodeFixed32(data_.data());
    data_.remove_prefix(4);
    return true;
  }
  bool Byte(uint8_t* v) {
    if (data_.empty()) return false;
    *v = static_cast<uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return true;
  }
  bool String(std::string* s) {
    uint32_t n = 0;
    if (!U32(&n) || data_.size() < n) return false;
    s->assign(data_.data(), n);
    data_.remove_prefix(n);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
};

Status Corrupt(const std::string& why) {
  return Status::Corruption("serialized configuration: " + why);
}

// A map of values, each of a known variable, from `expected` and, for a
// dataset's map (`dataset_scope`), of a variable a dataset may set.
Status GetMap(Reader* in, ConfigSource expected, bool dataset_scope,
              std::map<std::string, ConfigValue>* m) {
  uint32_t count = 0;
  if (!in->U32(&count)) return Corrupt("truncated");
  for (uint32_t i = 0; i < count; ++i) {
    ConfigValue v;
    uint8_t source = 0;
    uint32_t line = 0;
    if (!in->String(&v.name) || !in->String(&v.value) || !in->Byte(&source) ||
        !in->String(&v.file) || !in->U32(&line)) {
      return Corrupt("truncated");
    }
    const Spec* spec = Find(v.name);
    if (spec == nullptr) return Corrupt("unknown variable '" + v.name + "'");
    if (source != static_cast<uint8_t>(expected)) {
      return Corrupt(v.name + ": wrong source " + std::to_string(source));
    }
    if (dataset_scope && spec->scope != ConfigScope::kDataset) {
      return Corrupt(v.name + " set for a dataset");
    }
    if (line > INT32_MAX) return Corrupt(v.name + ": bad line number");
    if (!Check(*spec, v.value).ok()) {
      return Corrupt(v.name + ": bad value '" + v.value + "'");
    }
    if (m->count(v.name)) return Corrupt(v.name + " given twice");
    v.source = expected;
    v.line = static_cast<int>(line);
    (*m)[v.name] = std::move(v);
  }
  return Status::OK();
}

}  // namespace

std::string ConfigValue::SourceText() const {
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile:
      return "file " + file + ":" + std::to_string(line);
    case ConfigSource::kEnvironment:
      return "environment " + Config::EnvironmentName(name);
    case ConfigSource::kApi: return "API";
  }
  return "unknown";
}

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
  // Digits, then optionally '.' and digits: no sign, exponent, "inf" or
  // hexadecimal, which strtod would take.
  const size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos
                                    ? std::string_view()
                                    : number.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return c >= '0' && c <= '9';
    });
  };
  if (!digits(whole) || (dot != std::string_view::npos && !digits(frac))) {
    return Status::InvalidArgument(
        "not a duration: '" + std::string(text) +
        "' (seconds, or a number with the suffix s, m, h or d)");
  }
  const double v = strtod(std::string(number).c_str(), nullptr) * unit;
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

Status Config::Load(const std::string& context, const std::string& file,
                    const char* const* env, Config* out) {
  Config c;
  c.context_ = context;
  c.api_ = out->api_;
  // The environment first: it may say which lines of the file to read.
  std::set<std::string> seen;
  for (const char* const* e = env; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = entry.substr(0, eq);
    if (key.compare(0, 7, "SLUICE_") != 0) continue;
    if (!seen.insert(std::string(key)).second) continue;  // getenv's choice
    const std::string_view x = key.substr(7);
    const Spec* spec = Find(Lower(x));
    if (spec == nullptr || Upper(spec->name) != x) {
      c.unknown_env_.push_back(std::string(key) + " (" + ClosestName(x) + "?)");
      continue;
    }
    const std::string_view value = entry.substr(eq + 1);
    Status s =
        CheckValue("environment " + std::string(key) + ": ", *spec, value);
    if (!s.ok()) return s;
    ConfigValue v;
    v.name = spec->name;
    v.value = std::string(value);
    v.source = ConfigSource::kEnvironment;
    c.env_[v.name] = v;
  }
  if (!file.empty()) {
    std::string text;
    Status s = posix::ReadFile(file, &text);
    if (!s.ok()) {
      return Status(s.code(), "configuration file: " + s.message());
    }
    FileValues values;
    s = ParseFile(file, text, context, c.Get("config_file_prefix").value,
                  &values);
    if (!s.ok()) return s;
    c.file_global_ = std::move(values.global);
    c.file_context_ = std::move(values.context);
    c.file_dataset_ = std::move(values.datasets);
  }
  *out = std::move(c);
  return Status::OK();
}

Status Config::Set(std::string_view name, std::string_view value) {
  const Spec* spec = Find(name);
  if (spec == nullptr) return Status::InvalidArgument(UnknownName(name));
  Status s = CheckValue("", *spec, value);
  if (!s.ok()) return s;
  ConfigValue v;
  v.name = spec->name;
  v.value = std::string(value);
  v.source = ConfigSource::kApi;
  api_[v.name] = v;
  return Status::OK();
}

ConfigValue Config::Get(std::string_view name, std::string_view dataset) const {
  const Spec* spec = Find(name);
  ConfigValue v;
  v.name = std::string(name);
  if (spec == nullptr) return v;
  const auto in = [&](const std::map<std::string, ConfigValue>& m) {
    auto it = m.find(spec->name);
    return it == m.end() ? nullptr : &it->second;
  };
  if (const ConfigValue* p = in(api_)) return *p;
  if (const ConfigValue* p = in(env_)) return *p;
  if (!dataset.empty()) {
    auto d = file_dataset_.find(std::string(dataset));
    if (d != file_dataset_.end()) {
      if (const ConfigValue* p = in(d->second)) return *p;
    }
  }
  if (const ConfigValue* p = in(file_context_)) return *p;
  if (const ConfigValue* p = in(file_global_)) return *p;
  v.value = spec->default_value;
  return v;
}

std::vector<ConfigValue> Config::All(std::string_view dataset) const {
  std::vector<ConfigValue> out;
  for (const Spec& s : GetTable().specs) out.push_back(Get(s.name, dataset));
  return out;
}

Status Config::ToFsOptions(FsOptions* out) const {
  FsOptions o;
  for (const Spec& spec : GetTable().specs) {
    if (spec.kind != Kind::kStore && spec.kind != Kind::kExtent) continue;
    const ConfigValue v = Get(spec.name);
    Status s = o.Set(spec.name, v.value);
    if (!s.ok()) {
      return Status::InvalidArgument(v.SourceText() + ": " + s.message());
    }
  }
  *out = o;
  return Status::OK();
}

std::string Config::Serialize() const {
  std::string out(kMagic, kMagicSize);
  PutU32(&out, kFormatVersion);
  PutString(&out, context_);
  PutMap(&out, api_);
  PutMap(&out, env_);
  PutMap(&out, file_global_);
  PutMap(&out, file_context_);
  PutU32(&out, static_cast<uint32_t>(file_dataset_.size()));
  for (const auto& [dataset, m] : file_dataset_) {
    PutString(&out, dataset);
    PutMap(&out, m);
  }
  PutU32(&out, static_cast<uint32_t>(unknown_env_.size()));
  for (const std::string& u : unknown_env_) PutString(&out, u);
  return out;
}

Status Config::Deserialize(std::string_view data, Config* out) {
  if (data.size() < kMagicSize + 4 ||
      data.compare(0, kMagicSize, std::string_view(kMagic, kMagicSize)) != 0) {
    return Status::InvalidArgument("not a serialized configuration");
  }
  Reader in(data.substr(kMagicSize));
  uint32_t version = 0;
  in.U32(&version);
  if (version != kFormatVersion) {
    return Status::InvalidArgument(
        "serialized configuration of format version " +
        std::to_string(version) + "; this Sluice reads version " +
        std::to_string(kFormatVersion));
  }
  Config c;
  if (!in.String(&c.context_)) return Corrupt("truncated");
  Status s = GetMap(&in, ConfigSource::kApi, false, &c.api_);
  if (s.ok()) s = GetMap(&in, ConfigSource::kEnvironment, false, &c.env_);
  if (s.ok()) s = GetMap(&in, ConfigSource::kFile, false, &c.file_global_);
  if (s.ok()) s = GetMap(&in, ConfigSource::kFile, false, &c.file_context_);
  if (!s.ok()) return s;
  uint32_t datasets = 0;
  if (!in.U32(&datasets)) return Corrupt("truncated");
  for (uint32_t i = 0; i < datasets; ++i) {
    std::string name;
    if (!in.String(&name)) return Corrupt("truncated");
    if (c.file_dataset_.count(name)) {
      return Corrupt("dataset '" + name + "' given twice");
    }
    s = GetMap(&in, ConfigSource::kFile, true, &c.file_dataset_[name]);
    if (!s.ok()) return s;
  }
  uint32_t unknown = 0;
  if (!in.U32(&unknown)) return Corrupt("truncated");
  for (uint32_t i = 0; i < unknown; ++i) {
    std::string u;
    if (!in.String(&u)) return Corrupt("truncated");
    c.unknown_env_.push_back(std::move(u));
  }
  if (!in.done()) return Corrupt("bytes after the end");
  *out = std::move(c);
  return Status::OK();
}

std::string Config::ToText(std::string_view dataset) const {
  std::string out;
  for (const ConfigValue& v : All(dataset)) {
    out += v.name + " = " + OneLine(v.value) + "  # " +
           OneLine(v.SourceText()) + "\n";
  }
  return out;
}

std::string Config::ToJson(std::string_view dataset) const {
  std::string out = "{\"context\": " + text::JsonString(context_) +
                    ", \"dataset\": " + text::JsonString(dataset) +
                    ", \"variables\": [";
  bool first = true;
  for (const ConfigValue& v : All(dataset)) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += "{\"name\": " + text::JsonString(v.name) +
           ", \"value\": " + text::JsonString(v.value) + ", \"source\": \"" +
           SourceKind(v.source) + "\", \"file\": ";
    if (v.source == ConfigSource::kFile) {
      out += text::JsonString(v.file) + ", \"line\": " + std::to_string(v.line);
    } else {
      out += "null, \"line\": null";
    }
    out += "}";
  }
  out += "\n], \"unknown_environment\": [";
  for (size_t i = 0; i < unknown_env_.size(); ++i) {
    out += (i ? ", " : "") + text::JsonString(unknown_env_[i]);
  }
  return out + "]}\n";
}

}  // namespace sluice
