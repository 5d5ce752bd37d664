#include "sim/scenario/ini_file.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "models/input_file.hpp"
#include "models/name_table.hpp"
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

bool starts_with(const std::string& s, const char* prefix, size_t n) { return s.compare(0, n, prefix, n) == 0; }

// UTF-16 text without a byte-order mark: an ASCII character is its byte and a NUL, so that the bytes on one
// side of each pair are nearly all NUL and those on the other side nearly none. Judged on the first 512 bytes.
bool looks_like_utf16(const std::string& content) {
  const size_t pairs = std::min<size_t>(content.size(), 512) / 2;
  if (pairs < 2) return false;
  size_t nul_even = 0, nul_odd = 0;
  for (size_t i = 0; i < 2 * pairs; ++i)
    if (content[i] == '\0') ++(i % 2 == 0 ? nul_even : nul_odd);
  return 4 * std::max(nul_even, nul_odd) >= 3 * pairs && 4 * std::min(nul_even, nul_odd) <= pairs;
}

// Refuses what is not UTF-8 text with LF or CRLF line endings, before any line is looked at: UTF-16 and
// UTF-32 files, and files whose only line breaks are lone carriage returns (old Mac), which would read as one
// long line. A UTF-8 byte-order mark is skipped. Returns the content to parse.
std::string checked_encoding(const std::string& path, const std::string& content) {
  if (starts_with(content, "\x00\x00\xFE\xFF", 4) || starts_with(content, "\xFF\xFE\x00\x00", 4))
    throw InputError(path, "", "file is UTF-32", "save it as UTF-8");
  if (starts_with(content, "\xFF\xFE", 2) || starts_with(content, "\xFE\xFF", 2) || looks_like_utf16(content))
    throw InputError(path, "", "file is UTF-16", "save it as UTF-8");
  const std::string text = starts_with(content, "\xEF\xBB\xBF", 3) ? content.substr(3) : content;
  if (text.find('\r') != std::string::npos && text.find('\n') == std::string::npos)
    throw InputError(path, "", "file uses CR-only (old Mac) line endings, so it reads as a single line",
                     "save it with LF (Unix) or CRLF (Windows) line endings");
  return text;
}

// Refuses a line holding a NUL, a stray carriage return, another control character (such as the ESC of a
// terminal escape sequence) or bytes that are not UTF-8, naming the line, the column and, on a key line, the
// key. Tabs are fine. The messages never show the character itself.
void check_line_characters(const Origin& here, const std::string& line, const std::string& section) {
  const size_t bad = find_unprintable(line, /*allow_tab=*/true);
  if (bad == std::string::npos) return;
  size_t column = 1;  // in characters: every byte that does not continue a UTF-8 sequence starts one
  for (size_t i = 0; i < bad; ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++column;
  std::string key;
  const size_t eq = line.find('=');
  if (!section.empty() && eq < bad && is_identifier(trim(line.substr(0, eq))))
    key = section + "." + trim(line.substr(0, eq));
  const std::string at = " at column " + std::to_string(column);
  const unsigned char c = static_cast<unsigned char>(line[bad]);
  if (c == '\0')
    throw InputError(here, key, "contains a NUL byte" + at,
                     "the file is binary or was damaged; save it as UTF-8 text");
  if (c == '\r')
    throw InputError(here, key, "stray carriage return (CR)" + at,
                     "save the file with LF (Unix) or CRLF (Windows) line endings");
  const unsigned char next = bad + 1 < line.size() ? static_cast<unsigned char>(line[bad + 1]) : 0;
  const bool c1 = c == 0xC2 && next >= 0x80 && next < 0xA0;  // U+0080-U+009F
  const std::string shown = printable(std::string_view(line).substr(bad, c1 ? 2 : 1));
  if (c < 0x20 || c == 0x7F || c1)
    throw InputError(here, key, "control character " + shown + (c == 0x1B ? " (ESC)" : "") + at,
                     c == 0x1B ? "remove the terminal escape sequence (ESC [ ...) copied with the text"
                               : "remove it; only tabs are allowed");
  throw InputError(here, key, "byte " + shown + at + " is not UTF-8", "save the file as UTF-8");
}

// '#' starts a comment wherever it stands, so "name = base#1" would read as "base" without a word. A '#' glued
// to the text of a value is refused; one after a space (or right after '=') starts a comment as usual.
void check_comment_after_value(const Origin& here, const std::string& key, const std::string& raw) {
  const size_t hash = raw.find('#');
  const size_t eq = raw.find('=');
  if (hash == std::string::npos || eq == std::string::npos || hash <= eq + 1) return;
  const unsigned char before = static_cast<unsigned char>(raw[hash - 1]);
  if (std::isspace(before) || before == '=') return;
  const size_t start = raw.find_last_of(" \t=", hash) + 1;
  const std::string word = raw.substr(start, raw.find_first_of(" \t", hash) - start);
  throw InputError(here, key,
                   "'#' starts a comment, so '" + printable(word) + "' would be read as '" +
                       printable(word.substr(0, hash - start)) + "'",
                   "a value cannot hold '#'; to end the line with a comment, put a space before it");
}

// A line-by-line pass that finds what Boost's parser does not report: the line of each key, syntax errors
// with their line, keys repeated within the file, and characters that do not belong in a text file. It also
// writes the text Boost is given: the same lines without carriage returns, with section headers spelled
// [name] ("[ training ]" is read as [training]).
IniFile scan_lines(const std::string& path, const std::string& content, const std::vector<KeySpec>& keys,
                   std::string& for_boost) {
  IniFile ini;
  ini.path = path;
  std::istringstream in(content);
  std::string raw;
  std::string section;
  std::map<std::string, int> first_line;
  for (int line_no = 1; std::getline(in, raw); ++line_no) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();  // CRLF
    const Origin here = Origin::at(path, line_no);
    check_line_characters(here, raw, section);
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty() || line.front() != '[') for_boost += raw + "\n";
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3)
        throw InputError(here, "", "malformed section header '" + printable(line) + "'", "write [section]");
      section = trim(line.substr(1, line.size() - 2));
      if (!is_identifier(section)) throw InputError(here, "", "invalid section name '" + printable(section) + "'");
      ini.sections.push_back({section, line_no});
      for_boost += "[" + section + "]\n";
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos)
      throw InputError(here, "", "expected 'key = value' but found '" + printable(line) + "'", "comments start with #");
    const std::string field = trim(line.substr(0, eq));
    if (!is_identifier(field))
      throw InputError(here, printable(field), "invalid key name", "keys are letters, digits and _");
    if (section.empty()) {
      // The sections that have a key of this name, for the fix.
      std::vector<std::string> homes;
      for (const KeySpec& spec : keys)
        if (spec.field() == field) homes.push_back("[" + spec.section() + "]");
      throw InputError(here, field, "key outside of any [section]",
                       homes.empty() ? "put it under its section, e.g. [training]"
                       : homes.size() == 1 ? "put it under " + homes.front()
                                           : "put it under its section: " + models::join_names(homes, ", ", " or "));
    }
    const std::string key = section + "." + field;
    check_comment_after_value(here, key, raw);
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
  std::string for_boost;
  IniFile ini = scan_lines(path, checked_encoding(path, content), keys, for_boost);

  // Boost does the actual key/value parsing; its result must agree with the scan, entry by entry.
  po::options_description schema;
  for (const KeySpec& k : keys) schema.add_options()(k.name.c_str(), po::value<std::string>());
  std::istringstream in(for_boost);
  po::parsed_options parsed(&schema);
  try {
    parsed = po::parse_config_file(in, schema, /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw InputError(Origin::at(path, 0), "", printable(e.what()));
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

std::string read_text_file(const std::string& path, const std::string& what, const TextFileLimits& limits) {
  models::InputFileProblem problem;
  if (std::optional<std::string> content = models::read_input_file(path, limits.max_bytes, problem)) return *content;
  using Kind = models::InputFileProblem::Kind;
  const std::string hint = problem.kind == Kind::Missing       ? "check the path"
                           : problem.kind == Kind::TooLarge    ? "is it the right file?"
                           : problem.kind == Kind::Unreadable ? "check the path and its permissions"
                                                               : "name a regular file";
  throw InputError(path, limits.key, what + " " + problem.reason, hint);
}

IniFile read_ini(const std::string& path, const std::string& what, const std::vector<KeySpec>& keys) {
  return parse_ini(path, read_text_file(path, what), keys);
}

}  // namespace dtsim::sim
