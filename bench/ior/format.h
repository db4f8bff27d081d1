// Formatting shared by sluice-bench's text and JSON reports.
#ifndef SLUICE_BENCH_IOR_FORMAT_H_
#define SLUICE_BENCH_IOR_FORMAT_H_

#include <string>

namespace sluice {
namespace bench {

// printf into a string (up to 1023 characters).
std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// `s` as a JSON string: quoted, with quotes, backslashes and control
// characters escaped.
std::string JsonString(const std::string& s);

// `v` as a JSON number (%.12g), or null when it is not finite.
std::string JsonNumber(double v);

// A figure that may not have been measured: null then.
std::string JsonOrNull(bool measured, double v);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_FORMAT_H_
