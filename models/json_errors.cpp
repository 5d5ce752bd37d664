#include "models/json_errors.hpp"

#include <cstdio>
#include <set>
#include <vector>

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

nlohmann::json parse_json_noting_repeats(const std::string& text, std::string& twice) {
  using Event = nlohmann::json::parse_event_t;
  struct Level {
    bool array = false;
    int elements = 0;            // of an array, so far
    std::set<std::string> keys;  // of an object, so far
    std::string key;             // of an object, the member being read
  };
  std::vector<Level> levels;
  twice.clear();
  const auto path_to = [&levels](const std::string& key) {
    std::string path;
    for (size_t i = 0; i + 1 < levels.size(); ++i)
      path += levels[i].array ? "[" + std::to_string(levels[i].elements - 1) + "]"
                              : (path.empty() ? "" : ".") + levels[i].key;
    return path + (path.empty() ? "" : ".") + key;
  };
  const auto note = [&](int, Event event, nlohmann::json& parsed) {
    const bool in_array = !levels.empty() && levels.back().array;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (in_array) ++levels.back().elements;
        levels.push_back({event == Event::array_start, 0, {}, {}});
        break;
      case Event::key: {
        const std::string key = parsed.get<std::string>();
        if (!levels.back().keys.insert(key).second && twice.empty()) twice = path_to(key);
        levels.back().key = key;
        break;
      }
      case Event::value:
        if (in_array) ++levels.back().elements;
        break;
      case Event::object_end:
      case Event::array_end:
        if (!levels.empty()) levels.pop_back();
        break;
    }
    return true;
  };
  return nlohmann::json::parse(text, note);
}

}  // namespace dtsim::models
