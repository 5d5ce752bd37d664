// Small string helpers shared by the scenario parser and its value checks.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace dtsim::sim {

inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// A number as printf's %g writes it ("0.1", "1e+06"): for messages that echo a value.
inline std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// One number through a printf format ("%.4g ms", "%.2f %%"): for reports that round a value their own way.
inline std::string printf_number(const char* format, double v) {
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// `text` cut to about `most` bytes by leaving out its middle, on UTF-8 character boundaries, saying how much was
// left out: a message quoting a pasted megabyte stays one readable line, its start and end kept.
inline std::string elide_middle(const std::string& text, size_t most = 240) {
  if (text.size() <= most) return text;
  const auto continuation = [&](size_t at) { return (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80; };
  size_t head = most * 2 / 3;
  while (head > 0 && continuation(head)) --head;
  size_t tail = text.size() - (most - most * 2 / 3);
  while (tail < text.size() && continuation(tail)) ++tail;
  return text.substr(0, head) + "[... " + std::to_string(tail - head) + " bytes left out ...]" + text.substr(tail);
}

}  // namespace dtsim::sim
