#include "sim/scenario/ini_file.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/keys.hpp"
#include "sim/scenario/text.hpp"

namespace po = boost::program_options;

namespace dtsim::sim {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// A line-by-line pass that finds what Boost's parser does not report: the line of each key, syntax errors
// with their line, and keys repeated within the file.
IniFile scan_lines(const std::string& path, const std::string& content) {
  IniFile ini;
  ini.path = path;
  std::istringstream in(content);
  std::string raw;
  std::string section;
  std::map<std::string, int> first_line;
  for (int line_no = 1; std::getline(in, raw); ++line_no) {
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const Origin here = Origin::at(path, line_no);
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3)
        throw InputError(here, "", "malformed section header '" + line + "'", "write [section]");
      section = trim(line.substr(1, line.size() - 2));
      if (!is_identifier(section)) throw InputError(here, "", "invalid section name '" + section + "'");
      ini.sections.push_back({section, line_no});
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos)
      throw InputError(here, "", "expected 'key = value' but found '" + line + "'", "comments start with #");
    const std::string field = trim(line.substr(0, eq));
    if (!is_identifier(field)) throw InputError(here, field, "invalid key name", "keys are letters, digits and _");
    if (section.empty())
      throw InputError(here, field, "key outside of any [section]", "put it under its section, e.g. [training]");
    const std::string key = section + "." + field;
    const auto [it, inserted] = first_line.emplace(key, line_no);
    if (!inserted)
      throw InputError(here, key, "set twice (first at line " + std::to_string(it->second) + ")",
                       "keep one of the two lines");
    ini.entries.push_back({key, trim(line.substr(eq + 1)), line_no});
  }
  return ini;
}

}  // namespace

IniFile parse_ini(const std::string& path, const std::string& content, const std::vector<KeySpec>& keys) {
  IniFile ini = scan_lines(path, content);

  // Boost does the actual key/value parsing; its result must agree with the scan, entry by entry.
  po::options_description schema;
  for (const KeySpec& k : keys) schema.add_options()(k.name.c_str(), po::value<std::string>());
  std::istringstream in(content);
  po::parsed_options parsed(&schema);
  try {
    parsed = po::parse_config_file(in, schema, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw InputError(Origin::at(path, 0), "", e.what());
  }
  if (parsed.options.size() != ini.entries.size())
    throw InputError(Origin::at(path, 0), "", "could not be parsed consistently (is a value continued on a new line?)");
  for (size_t i = 0; i < parsed.options.size(); ++i) {
    const po::option& opt = parsed.options[i];
    IniEntry& entry = ini.entries[i];
    if (opt.string_key != entry.key)
      throw InputError(Origin::at(path, entry.line), entry.key, "could not be parsed consistently");
    entry.value = opt.value.empty() ? std::string() : trim(opt.value.front());
  }
  return ini;
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "", what + " not found", "check the path");
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path, "", what + " is not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot open " + what, "check its permissions");
  std::ostringstream content;
  content << f.rdbuf();
  if (f.bad()) throw InputError(path, "", "cannot read " + what);
  return content.str();
}

IniFile read_ini(const std::string& path, const std::string& what, const std::vector<KeySpec>& keys) {
  return parse_ini(path, read_text_file(path, what), keys);
}

}  // namespace dtsim::sim
