#include "ior/fio_output.h"

#include <cstdlib>

namespace sluice {
namespace bench {

namespace {

// The number after `"key" : ` at or after `pos`, or -1.
double NumberAfter(const std::string& json, const std::string& key,
                   size_t pos) {
  const std::string k = "\"" + key + "\" : ";
  pos = json.find(k, pos);
  if (pos == std::string::npos) return -1;
  return atof(json.c_str() + pos + k.size());
}

size_t Section(const std::string& json, const std::string& section) {
  return json.find("\"" + section + "\" : {");
}

}  // namespace

double FioBandwidth(const std::string& json, const std::string& section) {
  const size_t pos = Section(json, section);
  return pos == std::string::npos ? -1 : NumberAfter(json, "bw_bytes", pos);
}

double FioMeanLatency(const std::string& json, const std::string& section) {
  size_t pos = Section(json, section);
  if (pos == std::string::npos) return -1;
  pos = json.find("\"lat_ns\" : {", pos);
  if (pos == std::string::npos) return -1;
  const double ns = NumberAfter(json, "mean", pos);
  return ns < 0 ? -1 : ns / 1e9;
}

}  // namespace bench
}  // namespace sluice
