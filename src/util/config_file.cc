// Configuration (sluice/config.h): the file reader.
#include "util/config_internal.h"

namespace sluice {
namespace config_internal {
namespace {

// Where the lines of one section go.
enum class Section { kGlobal, kThisContext, kOtherContext, kDataset };

Status ParseHeader(const std::string& where, std::string_view line,
                   const std::string& context, Section* section,
                   std::string* section_name) {
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
    *section_name = std::string(name);
  } else if (kind == "dataset") {
    *section = Section::kDataset;
    *section_name = std::string(name);
  } else {
    return bad;
  }
  return Status::OK();
}

}  // namespace

Status ParseFile(const std::string& path, const std::string& text,
                 const std::string& context, const std::string& prefix,
                 FileValues* out) {
  Section section = Section::kGlobal;
  std::string section_name;  // of a [context:NAME] or [dataset:NAME]
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
      Status s = ParseHeader(where, line, context, &section, &section_name);
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
    if (spec->not_in_file) {
      return Status::InvalidArgument(
          where + spec->name + " cannot be set in a configuration file (it "
          "says which file, or which of its lines, is read): set it by the "
          "API or " + Config::EnvironmentName(spec->name));
    }
    if (section == Section::kDataset && spec->scope == ConfigScope::kContext) {
      return Status::InvalidArgument(
          where + spec->name + " applies to a whole context and cannot be " +
          "set in [dataset:" + section_name + "] (set it in [global] or " +
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
      case Section::kOtherContext:  // checked, not applied
        out->other_contexts[section_name][v.name] = v;
        break;
      case Section::kDataset: out->datasets[section_name][v.name] = v; break;
    }
  }
  return Status::OK();
}

}  // namespace config_internal
}  // namespace sluice
