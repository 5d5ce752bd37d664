#include "models/json_errors.hpp"

#include <cstdio>

namespace dtsim::models {

std::string json_error_reason(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what.front() == '[') {
    const std::size_t close = what.find("] ");
    if (close != std::string::npos) what.erase(0, close + 2);
  }
  for (const char* lead : {"parse error at ", "parse error: "})
    if (what.rfind(lead, 0) == 0) what.erase(0, std::string(lead).size());
  std::string printable;
  for (const unsigned char c : what) {
    if (c >= 0x20 && c < 0x7f) {
      printable += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      printable += hex;
    }
  }
  return printable;
}

}  // namespace dtsim::models
