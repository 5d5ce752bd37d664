// Fuzz target: the INI reader (sim/scenario/ini_file.hpp parse_ini) on arbitrary bytes. Bad input must be an
// InputError whose message is safe to print and says what is wrong (not that the reader's two passes
// disagree); accepted input must satisfy the reader's promises.
#include <algorithm>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/ini_file.hpp"
#include "sim/scenario/text.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace dtsim::sim;

const std::vector<KeySpec>& keys() {
  static const std::vector<KeySpec> k = [] {
    std::vector<KeySpec> out;
    for (const char* name : {"run.name", "cluster.workers", "training.strategy", "gpu.profile", "fabric.bandwidth"}) {
      KeySpec spec;
      spec.name = name;
      out.push_back(spec);
    }
    return out;
  }();
  return k;
}

void check_accepted(const std::string& content, const IniFile& ini) {
  using dtsim::fuzz::finding;
  const int lines = static_cast<int>(std::count(content.begin(), content.end(), '\n')) + 1;
  int previous = 0;
  for (const IniEntry& e : ini.entries) {
    if (e.line <= previous || e.line > lines) finding("entry line numbers out of order or past the end");
    previous = e.line;
    const size_t dot = e.key.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == e.key.size()) finding("key without section.field: " + e.key);
    const std::string section = e.key.substr(0, dot);
    const bool declared = std::any_of(ini.sections.begin(), ini.sections.end(),
                                      [&](const IniSection& s) { return s.name == section && s.line < e.line; });
    if (!declared) finding("key in a section declared nowhere above it: " + e.key);
    if (e.value != trim(e.value)) finding("value not trimmed");
    if (e.value.find('#') != std::string::npos) finding("comment left in a value");
    if (find_unprintable(e.value, /*allow_tab=*/true) != std::string::npos) finding("control character in a value");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string content(reinterpret_cast<const char*>(data), size);
  try {
    const IniFile ini = parse_ini("fuzz.ini", content, keys());
    check_accepted(content, ini);
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Accepted;
  } catch (const InputError& e) {
    dtsim::fuzz::check_message(e.what(), [](std::string_view m) { return find_unprintable(m); });
    // The line scan and Boost's parser must agree on every input the scan accepts; this vague message is
    // what the user sees when they do not (issue 11: "[ training ]").
    // (Matched at the end of the message, where no quoted input can stand.)
    const std::string_view message = e.what();
    for (const std::string_view tail : {std::string_view("could not be parsed consistently"),
                                        std::string_view("(is a value continued on a new line?)")})
      if (message.size() >= tail.size() && message.substr(message.size() - tail.size()) == tail)
        dtsim::fuzz::finding(std::string("the line scan and Boost disagree: ") + e.what());
    dtsim::fuzz::last_outcome() = dtsim::fuzz::Outcome::Refused;
  }
  return 0;
}
