// Configuration (sluice/config.h): the environment and file loaded,
// values set by the API, and precedence.
#include "sluice/config.h"

#include <set>
#include <sstream>

#include "util/config_internal.h"
#include "util/option_list.h"
#include "util/posix.h"

namespace sluice {

using config_internal::CheckRootAlias;
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

namespace {

// The first directory of a data_roots value, and the rest (",..." or "").
std::string FirstRoot(const std::string& roots) {
  return roots.substr(0, roots.find(','));
}
std::string OtherRoots(const std::string& roots) {
  const size_t comma = roots.find(',');
  return comma == std::string::npos ? std::string() : roots.substr(comma);
}

// The item of the variable options in `values` that sets `name` (the last
// one, as FsOptions::SetAll would leave it), or false.
bool OptionItem(const std::map<std::string, ConfigValue>& values,
                const std::string& name, ConfigValue* out) {
  auto it = values.find("options");
  if (it == values.end()) return false;
  bool found = false;
  ForEachOption(it->second.value,
                [&](std::string_view n, std::string_view v) {
                  if (n == name) {
                    *out = it->second;
                    out->name = name;
                    out->value = std::string(v);
                    out->via = "options";
                    found = true;
                  }
                  return Status::OK();
                });
  return found;
}

}  // namespace

Status Config::Load(const std::string& context, const std::string& file,
                    const char* const* env, Config* out) {
  Config c;
  c.context_ = context;
  c.api_ = out->api_;
  // The environment first: it may say which file, and which of its lines,
  // to read.
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
  Status s = CheckRootAlias(c.env_);
  if (!s.ok()) return s;
  std::string path = file;
  if (!path.empty()) {
    ConfigValue v;
    v.name = "config_file";
    v.value = path;
    v.source = ConfigSource::kApi;
    c.api_[v.name] = v;
  } else {
    path = c.Get("config_file").value;
  }
  if (!path.empty()) {
    std::string text;
    s = posix::ReadFile(path, &text);
    if (!s.ok()) {
      return Status(s.code(), "configuration file: " + s.message());
    }
    FileValues values;
    s = ParseFile(path, text, context, c.Get("config_file_prefix").value,
                  &values);
    if (s.ok()) s = CheckRootAlias(values.global);
    if (s.ok()) s = CheckRootAlias(values.context);
    for (const auto& [name, m] : values.other_contexts) {
      if (s.ok()) s = CheckRootAlias(m);
    }
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
  Values api = api_;
  api[v.name] = v;
  s = CheckRootAlias(api);
  if (!s.ok()) return s;
  api_ = std::move(api);
  return Status::OK();
}

std::vector<const Config::Values*> Config::Levels(
    std::string_view dataset) const {
  std::vector<const Values*> levels = {&api_, &env_};
  if (!dataset.empty()) {
    auto d = file_dataset_.find(std::string(dataset));
    if (d != file_dataset_.end()) levels.push_back(&d->second);
  }
  levels.push_back(&file_context_);
  levels.push_back(&file_global_);
  return levels;
}

ConfigValue Config::GetRoots(const std::string& name,
                             const std::vector<const Values*>& levels,
                             size_t from) const {
  for (size_t i = from; i < levels.size(); ++i) {
    auto r = levels[i]->find("root");
    auto d = levels[i]->find("data_roots");
    const bool has_r = r != levels[i]->end();
    const bool has_d = d != levels[i]->end();
    if (!has_r && !has_d) continue;
    ConfigValue v;
    if (name == "root") {
      if (has_r) return r->second;  // agrees with a data_roots beside it
      v = d->second;
      v.value = FirstRoot(v.value);
    } else {
      if (has_d) return d->second;
      // root alone: the first directory, the others from weaker sources.
      v = r->second;
      v.value += OtherRoots(GetRoots(name, levels, i + 1).value);
    }
    v.name = name;
    v.via = name == "root" ? "data_roots" : "root";
    return v;
  }
  ConfigValue v;
  v.name = name;
  v.value = Find(name)->default_value;
  return v;
}

ConfigValue Config::Get(std::string_view name, std::string_view dataset) const {
  const Spec* spec = Find(name);
  ConfigValue v;
  v.name = std::string(name);
  if (spec == nullptr) return v;
  const std::vector<const Values*> levels = Levels(dataset);
  if (spec->name == "root" || spec->name == "data_roots") {
    return GetRoots(spec->name, levels, 0);
  }
  const bool in_options =
      spec->kind == Kind::kStore || spec->kind == Kind::kExtent;
  for (const Values* m : levels) {
    auto it = m->find(spec->name);
    if (it != m->end()) return it->second;
    if (in_options && OptionItem(*m, spec->name, &v)) return v;
  }
  v.value = spec->default_value;
  return v;
}

std::vector<ConfigValue> Config::All(std::string_view dataset) const {
  std::vector<ConfigValue> out;
  for (const Spec& s : GetTable().specs) out.push_back(Get(s.name, dataset));
  return out;
}

Status Config::ToFsOptions(FsOptions* out) const {
  return ToFsOptions(FsOptions(), FsOptions(), out);
}

Status Config::ToFsOptions(const FsOptions& given, const FsOptions& defaults,
                           FsOptions* out) const {
  // The given values as text, as Set takes them.
  std::map<std::string, std::string> given_text;
  std::istringstream lines(given.store.ToString());
  std::string line;
  while (std::getline(lines, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) {
      given_text[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  given_text["extent_bytes"] = std::to_string(given.extent_bytes);
  FsOptions o = defaults;
  for (const Spec& spec : GetTable().specs) {
    if (spec.kind != Kind::kStore && spec.kind != Kind::kExtent) continue;
    Status s;
    if (given.Given(spec.name)) {
      s = o.Set(spec.name, given_text[spec.name]);
    } else {
      const ConfigValue v = Get(spec.name);
      if (v.source == ConfigSource::kDefault) continue;
      s = o.Set(spec.name, v.value);
      if (!s.ok()) s = Status::InvalidArgument(v.SourceText() + ": " +
                                               s.message());
    }
    if (!s.ok()) return s;
  }
  o.store.use_configuration = false;
  *out = o;
  return Status::OK();
}

}  // namespace sluice
