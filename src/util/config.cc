// Configuration (sluice/config.h): the environment and file loaded,
// values set by the API, and precedence.
#include "sluice/config.h"

#include <set>

#include "util/config_internal.h"
#include "util/posix.h"

namespace sluice {

using config_internal::CheckValue;
using config_internal::FileValues;
using config_internal::Find;
using config_internal::GetTable;
using config_internal::Kind;
using config_internal::Lower;
using config_internal::ParseFile;
using config_internal::Spec;
using config_internal::UnknownName;
using config_internal::Upper;

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

}  // namespace sluice
