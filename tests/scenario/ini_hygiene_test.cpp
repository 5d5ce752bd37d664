// What the INI reader does with text that is not plain UTF-8 with LF or CRLF line endings (issue 11): each
// case is refused with one line naming the file, the line and the problem, or read as the user meant it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "sim/scenario/errors.hpp"
#include "sim/scenario/ini_file.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

KeySpec text_key(const std::string& name) {
  KeySpec k;
  k.name = name;
  k.type = ValueType::Text;
  k.optional = true;
  return k;
}

// A small schema in the shape the parser expects: a [run] section, and [gpu]/[fabric] with their .profile keys.
const KeySchema& schema() {
  static const KeySchema s = [] {
    KeySpec size;
    size.name = "run.size";
    size.type = ValueType::Quantity;
    size.dim = Dimension::Bytes;
    size.default_text = "1B";
    size.range.lo = 0;
    size.range.lo_open = true;
    KeySpec mode;
    mode.name = "run.mode";
    mode.type = ValueType::Choice;
    mode.default_text = "fast";
    mode.choices = {"fast", "slow"};
    return KeySchema({text_key("run.name"), size, mode, text_key("gpu.profile"), text_key("gpu.name"),
                      text_key("fabric.profile")});
  }();
  return s;
}

IniFile parse(const std::string& content) { return parse_ini("t.ini", content, schema().keys()); }

std::string error_of(const std::string& content) {
  try {
    parse(content);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has_raw_control(const std::string& s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return true;
  return false;
}

// ---- line endings -------------------------------------------------------------------------------------------
TEST(IniLineEndings, CrOnlyFileIsRefusedNamingTheProblem) {
  EXPECT_EQ(error_of("[run]\rname = a\rsize = 2B\r"),
            "t.ini: file uses CR-only (old Mac) line endings, so it reads as a single line; "
            "save it with LF (Unix) or CRLF (Windows) line endings");
}

TEST(IniLineEndings, CrlfIsReadLineByLine) {
  const IniFile ini = parse("# comment\r\n[run]\r\nname = a b\r\nsize = 2B # two bytes\r\n");
  ASSERT_EQ(ini.entries.size(), 2u);
  EXPECT_EQ(ini.entries[0].key, "run.name");
  EXPECT_EQ(ini.entries[0].value, "a b");
  EXPECT_EQ(ini.entries[0].line, 3);
  EXPECT_EQ(ini.entries[1].value, "2B");
  EXPECT_EQ(ini.entries[1].line, 4);
}

TEST(IniLineEndings, StrayCarriageReturnInsideALineIsRefused) {
  EXPECT_EQ(error_of("[run]\nname = a\rb\n"),
            "t.ini:2: run.name: stray carriage return (CR) at column 9; "
            "save the file with LF (Unix) or CRLF (Windows) line endings");
}

// ---- NUL bytes ----------------------------------------------------------------------------------------------
TEST(IniNul, NulInAValueIsRefusedInsteadOfTruncatingIt) {
  const std::string content("[run]\nname = ab\0cd\n", 19);
  EXPECT_EQ(error_of(content),
            "t.ini:2: run.name: contains a NUL byte at column 10; the file is binary or was damaged; save it as UTF-8 text");
}

TEST(IniNul, NulOnAHeaderLineNamesTheLine) {
  const std::string msg = error_of(std::string("[run]\nname = a\n[gp\0u]\n", 21));
  EXPECT_EQ(msg.rfind("t.ini:3: contains a NUL byte at column 4", 0), 0u) << msg;
}

TEST(IniNul, FileOnDiskWithNulNamesThePath) {
  const fs::path file = fs::temp_directory_path() / ("dtsim_nul_" + std::to_string(::getpid()) + ".ini");
  std::ofstream(file, std::ios::binary) << std::string("[run]\n\nname = x\0y\n", 17);
  std::string msg;
  try {
    read_ini(file.string(), "scenario file", schema().keys());
  } catch (const InputError& e) {
    msg = e.what();
  }
  fs::remove(file);
  EXPECT_EQ(msg.rfind(file.string() + ":3: run.name: contains a NUL byte", 0), 0u) << msg;
}

// ---- control characters and escape sequences ----------------------------------------------------------------
TEST(IniControl, EscapeSequenceIsRefusedAndNotEchoed) {
  const std::string msg = error_of("[run]\nname = \x1b[31mred\x1b[0m\n");
  EXPECT_EQ(msg, "t.ini:2: run.name: control character \\x1b (ESC) at column 8; "
                 "remove the terminal escape sequence (ESC [ ...) copied with the text");
  EXPECT_FALSE(has_raw_control(msg));
}

TEST(IniControl, OtherControlsAndC1AreRefused) {
  EXPECT_EQ(error_of("[run]\nname = a\x08" "b\n"),
            "t.ini:2: run.name: control character \\x08 at column 9; remove it; only tabs are allowed");
  EXPECT_EQ(error_of("[run]\n# bell \x07\n"), "t.ini:2: control character \\x07 at column 8; remove it; only tabs are allowed");
  // U+009B, the one-character CSI of the C1 set, in UTF-8.
  EXPECT_EQ(error_of("[run]\nname = \xC2\x9B" "2J\n"),
            "t.ini:2: run.name: control character \\u009b at column 8; remove it; only tabs are allowed");
}

TEST(IniControl, TabsAreAllowedButNeverQuotedRaw) {
  // Found by fuzz_ini: a tab inside a malformed header or a key name reached the message as it was.
  EXPECT_EQ(error_of("[run]\n[\tclus\n"), "t.ini:2: malformed section header '[\\x09clus'; write [section]");
  EXPECT_EQ(error_of("[run]\na\tb = 1\n"), "t.ini:2: a\\x09b: invalid key name; keys are letters, digits and _");
  EXPECT_EQ(error_of("[a\tb]\n"), "t.ini:1: invalid section name 'a\\x09b'");
  EXPECT_EQ(error_of("[run]\nname\t1\n"), "t.ini:2: expected 'key = value' but found 'name\\x091'; comments start with #");
}

TEST(IniControl, TabsAndUtf8TextAreFine) {
  const IniFile ini = parse("[run]\n# prices in yuan (\xE5\x85\x83)\nname\t=\tA100 \xC3\x97 8\n");
  ASSERT_EQ(ini.entries.size(), 1u);
  EXPECT_EQ(ini.entries[0].value, "A100 \xC3\x97 8");
}

TEST(IniControl, BytesThatAreNotUtf8AreRefused) {
  // A Latin-1 µ (0xB5), as an editor set to ISO-8859-1 writes it.
  EXPECT_EQ(error_of("[run]\nsize = 1 \xB5s\n"),
            "t.ini:2: run.size: byte \\xb5 at column 10 is not UTF-8; save the file as UTF-8");
  // A lead byte without its continuation: only that byte is named.
  EXPECT_EQ(error_of("[run]\nname = \xC2" "A\n"), "t.ini:2: run.name: byte \\xc2 at column 8 is not UTF-8; save the file as UTF-8");
}

TEST(IniControl, ValueErrorsNeverCarryRawControls) {
  // A --set value gets the same hygiene as a file's line: refused before any key check, and quoted escaped.
  std::string msg;
  try {
    Scenario::parse(schema(), "t.ini", "", {"run.mode=\x1b]0;title\x07slow"}, "");
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_EQ(msg,
            "command line (--set): --set 'run.mode=\\x1b]0;title\\x07slow' holds a control character or a byte that is "
            "not UTF-8 at column 10; type the value as plain text");
  try {
    validate_value(*schema().find("run.size"), "5\x1b[2JB");
    FAIL() << "a size with an escape sequence must be refused";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown unit '\\x1b[2JB' for a B quantity");
  }
}

TEST(IniControl, PrintableEscapesOnlyWhatATerminalWouldObey) {
  EXPECT_EQ(printable("a\tb\x1b[1m\x7f"), "a\\x09b\\x1b[1m\\x7f");
  EXPECT_EQ(printable("1.3\xC2\xB5s 28\xC3\x97" "28 \xE5\x85\x83 \xF0\x9F\x98\x80"),
            "1.3\xC2\xB5s 28\xC3\x97" "28 \xE5\x85\x83 \xF0\x9F\x98\x80");
  EXPECT_EQ(printable("\xC2\x85\xC2\x9F"), "\\u0085\\u009f");
  // A lone continuation byte, an overlong '/', a UTF-8 surrogate and a sequence cut short.
  EXPECT_EQ(printable("\x80\xC0\xAF\xED\xA0\x80\xE5\x85"), "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe5\\x85");
  EXPECT_EQ(find_unprintable("ab\tc", true), std::string::npos);
  EXPECT_EQ(find_unprintable("ab\tc", false), 2u);
}

// ---- encodings ----------------------------------------------------------------------------------------------
TEST(IniEncoding, Utf8ByteOrderMarkIsSkipped) {
  const IniFile ini = parse("\xEF\xBB\xBF[run]\nname = a\n");
  ASSERT_EQ(ini.sections.size(), 1u);
  EXPECT_EQ(ini.sections[0].name, "run");
  EXPECT_EQ(ini.sections[0].line, 1);
  ASSERT_EQ(ini.entries.size(), 1u);
  EXPECT_EQ(ini.entries[0].line, 2);
}

// "[run]\nname = a\n" in UTF-16, little or big endian, with or without a byte-order mark.
std::string utf16(bool little_endian, bool bom) {
  std::string out;
  if (bom) out += little_endian ? "\xFF\xFE" : "\xFE\xFF";
  for (const char c : std::string("[run]\nname = a\n")) {
    if (little_endian) out += c;
    out += '\0';
    if (!little_endian) out += c;
  }
  return out;
}

TEST(IniEncoding, Utf16IsRefusedWithOrWithoutAByteOrderMark) {
  for (const bool le : {true, false})
    for (const bool bom : {true, false})
      EXPECT_EQ(error_of(utf16(le, bom)), "t.ini: file is UTF-16; save it as UTF-8") << le << bom;
}

TEST(IniEncoding, Utf32IsRefused) {
  EXPECT_EQ(error_of(std::string("\xFF\xFE\0\0[\0\0\0", 8)), "t.ini: file is UTF-32; save it as UTF-8");
  EXPECT_EQ(error_of(std::string("\0\0\xFE\xFF\0\0\0[", 8)), "t.ini: file is UTF-32; save it as UTF-8");
}

TEST(IniEncoding, AFewNulsAreNotMistakenForUtf16) {
  EXPECT_EQ(error_of(std::string("[run]\nname = a\0\n", 15)).rfind("t.ini:2: run.name: contains a NUL byte", 0), 0u);
}

// ---- section headers ----------------------------------------------------------------------------------------
TEST(IniSections, SpacesInsideTheBracketsAreTrimmed) {
  const IniFile ini = parse("[ run ]\nname = a\n[\tgpu\t] # the device\nname = b\n");
  ASSERT_EQ(ini.sections.size(), 2u);
  EXPECT_EQ(ini.sections[0].name, "run");
  EXPECT_EQ(ini.sections[1].name, "gpu");
  ASSERT_EQ(ini.entries.size(), 2u);
  EXPECT_EQ(ini.entries[0].key, "run.name");
  EXPECT_EQ(ini.entries[1].key, "gpu.name");
  EXPECT_EQ(ini.entries[1].value, "b");
  const Scenario sc = Scenario::parse(schema(), "t.ini", "[ run ]\nname = spaced\n", {}, "");
  EXPECT_EQ(sc.text("run.name"), "spaced");
}

TEST(IniSections, ANameWithSpacesInsideIsStillRefused) {
  EXPECT_EQ(error_of("[my run]\n"), "t.ini:1: invalid section name 'my run'");
}

// ---- through a scenario and its profile -----------------------------------------------------------------------
class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_hygiene_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "gpu");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string error_with_profile(const std::string& profile_text) {
    std::ofstream(dir_ / "gpu" / "mine.ini", std::ios::binary) << profile_text;
    try {
      Scenario::parse(schema(), "s.ini", "[gpu]\nprofile = mine\n", {}, dir_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  std::string profile_path() const { return (dir_ / "gpu" / "mine.ini").string(); }
  fs::path dir_;
};

TEST_F(ProfileFiles, ProfileProblemsNameTheProfileFile) {
  EXPECT_EQ(error_with_profile("[gpu]\rname = x\r"),
            profile_path() + ": file uses CR-only (old Mac) line endings, so it reads as a single line; "
                             "save it with LF (Unix) or CRLF (Windows) line endings");
  EXPECT_EQ(error_with_profile(utf16(true, true)), profile_path() + ": file is UTF-16; save it as UTF-8");
  EXPECT_EQ(error_with_profile("[gpu]\nname = \x1b[5mX\n").rfind(profile_path() + ":2: gpu.name: control character", 0), 0u);
  EXPECT_EQ(error_with_profile("\xEF\xBB\xBF[ gpu ]\r\nname = H100\r\n"), "");
}

TEST_F(ProfileFiles, TooLargeAFileIsRefusedBeforeReadingIt) {
  const fs::path big = dir_ / "big.ini";
  std::ofstream(big).close();
  fs::resize_file(big, (std::uintmax_t(16) << 20) + 1);
  std::string msg;
  try {
    Scenario::load(schema(), big.string(), {}, dir_.string());
  } catch (const InputError& e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, big.string() + ": scenario file is 16777217 bytes, more than the 16 MiB such a file may hold; is it the right file?");
}

}  // namespace
}  // namespace dtsim::sim
