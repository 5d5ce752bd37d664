// Small string helpers shared by the scenario parser and its value checks.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace dtsim::sim {

inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// `s` safe to print on a terminal: control characters (ESC, CR, NUL, DEL, ...) written as \xNN, so that text
// from a file can never move the cursor or recolour the terminal when an error message quotes it.
inline std::string printable(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace dtsim::sim
