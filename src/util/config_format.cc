// Configuration (sluice/config.h): the forms a configuration is written
// in: text and JSON for people and tools, and the byte string rank 0
// broadcasts.
#include <cstdint>

#include "util/coding.h"
#include "util/config_internal.h"
#include "util/text.h"

namespace sluice {
namespace {

using config_internal::Check;
using config_internal::Find;
using config_internal::Spec;

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
  const std::string as = via.empty() ? "" : " (" + via + ")";
  switch (source) {
    case ConfigSource::kDefault: return "default";
    case ConfigSource::kFile:
      return "file " + file + ":" + std::to_string(line) + as;
    case ConfigSource::kEnvironment:
      return "environment " +
             Config::EnvironmentName(via.empty() ? name : via);
    case ConfigSource::kApi: return "API" + as;
  }
  return "unknown";
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
    out += ", \"via\": " + (v.via.empty() ? "null" : text::JsonString(v.via));
    out += "}";
  }
  out += "\n], \"unknown_environment\": [";
  for (size_t i = 0; i < unknown_env_.size(); ++i) {
    out += (i ? ", " : "") + text::JsonString(unknown_env_[i]);
  }
  return out + "]}\n";
}

}  // namespace sluice
