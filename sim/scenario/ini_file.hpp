// Reading INI files ([section] headers, key = value lines, # comments) with Boost.Program_options, plus
// the line number of every entry so that errors can point at it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/input_file.hpp"
#include "sim/scenario/keys.hpp"

namespace dtsim::sim {

struct IniEntry {
  std::string key;  // "section.field"
  std::string value;
  int line = 0;
};

struct IniSection {
  std::string name;
  int line = 0;
};

struct IniFile {
  std::string path;
  std::vector<IniEntry> entries;    // in file order
  std::vector<IniSection> sections;  // headers in file order
};

// Parses INI text. Throws InputError for syntax errors (with the line), for keys outside any section and
// for a key given twice. Does not check key names: that is the caller's job; `keys` are the names Boost is
// told about. The text must be UTF-8 with LF or CRLF line endings (a UTF-8 byte-order mark is skipped):
// UTF-16 and UTF-32 files, CR-only line endings, NUL bytes, control characters other than tab (such as a
// terminal's ESC [ sequences) and bytes that are not UTF-8 are InputErrors naming the file and the line.
// Section headers may have spaces inside the brackets: [ training ] is [training].
IniFile parse_ini(const std::string& path, const std::string& content, const std::vector<KeySpec>& keys);

// What read_text_file accepts: files larger than `max_bytes` are refused as implausible (a scenario or key
// file is a few KiB; 16 MiB is far past any real one), and errors name `key` when a key named the file.
struct TextFileLimits {
  std::string key;
  std::uintmax_t max_bytes = models::kMaxTextInputBytes;
};

// The whole content of a text file; a missing, unreadable, non-regular or implausibly large file is an
// InputError naming it (and limits.key, if set).
std::string read_text_file(const std::string& path, const std::string& what, const TextFileLimits& limits = {});

// Reads a file from disk and parses it; a missing or unreadable file is an InputError naming it.
IniFile read_ini(const std::string& path, const std::string& what, const std::vector<KeySpec>& keys);

}  // namespace dtsim::sim
