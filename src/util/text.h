// Text for people and for JSON: UTF-8 sequence lengths and JSON string
// escaping, shared by the configuration's output and the `sluice` tool.
// Header-only, so the tool (which sees only libsluice's exported symbols)
// compiles its own copy of the one definition.
#ifndef SLUICE_UTIL_TEXT_H_
#define SLUICE_UTIL_TEXT_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace sluice {
namespace text {

// The length of the UTF-8 sequence at s[i] (2 to 4), or 0 if what is there
// is not one (overlong forms and surrogates are not).
inline size_t Utf8Length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  const unsigned char c = at(0);
  const auto cont = [&](size_t k) { return (at(k) & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
    const unsigned char hi = c == 0xed ? 0x9f : 0xbf;
    return at(1) >= lo && at(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
    const unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;
    return at(1) >= lo && at(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Appends `c` formatted by `format` ("\\x%02x", "\\u%04x", ...).
inline void AppendHex(const char* format, unsigned c, std::string* out) {
  char buf[8];
  snprintf(buf, sizeof buf, format, c);
  *out += buf;
}

// `s` as a JSON string, quotes included. Bytes that are not UTF-8, which
// JSON text must be, become lone surrogates "\udcXX", as Python's
// "surrogateescape" writes them (s.encode("utf-8", "surrogateescape")
// gives the bytes back).
inline std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : Utf8Length(s, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      AppendHex("\\u%04x", c, &out);
    } else if (n == 0) {
      AppendHex("\\udc%02x", c, &out);
    } else {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    ++i;
  }
  return out + "\"";
}

}  // namespace text
}  // namespace sluice

#endif  // SLUICE_UTIL_TEXT_H_
