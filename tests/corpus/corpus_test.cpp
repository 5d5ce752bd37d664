// The bad-input corpus (tests/corpus/cases.txt): each case runs the dtsim executable on hostile input and
// must end with its exact expected first line of stderr and exit status. Nothing in it may crash, hang (each
// case runs under a 120 s timeout) or pass silently (exit 0).
//
// The format, one case after another:
//   == name                      starts a case
//   file NAME <<                 a file in the case's own folder, its lines up to a line ">>"; C escapes
//   ...                          (\xNN, \r, \n, \t, \\) give any byte, so CR-only, NUL or UTF-16 files fit
//   >>
//   env: NAME=value ...          optional: environment variables for the run (the same substitutions)
//   args: run {quickstart} ...   dtsim's arguments (a shell word list); {dir} is the case's folder,
//                                {src} the source tree, {quickstart} scenarios/quickstart.ini
//   exit: 2                      the expected exit status
//   stderr: dtsim: error: ...    the expected first line of stderr (after the same substitutions)
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct CorpusCase {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes
  std::string env;  // NAME=value words, for `env`
  std::string args;
  int exit_code = -1;
  std::string first_stderr_line;
  int line = 0;  // in cases.txt
};

// gtest prints a case by its name, not its bytes.
void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.name; }

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    if (c == 'n') out += '\n';
    else if (c == 'r') out += '\r';
    else if (c == 't') out += '\t';
    else if (c == '\\') out += '\\';
    else if (c == 'x' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

std::vector<CorpusCase> read_cases(const std::string& path) {
  std::ifstream in(path);
  std::vector<CorpusCase> cases;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("== ", 0) == 0) {
      cases.push_back({});
      cases.back().name = line.substr(3);
      cases.back().line = number;
    } else if (line.rfind("file ", 0) == 0 && !cases.empty()) {
      const std::string name = line.substr(5, line.find(' ', 5) - 5);
      std::string bytes;
      while (std::getline(in, line) && line != ">>") {
        ++number;
        bytes += unescape(line) + "\n";
      }
      ++number;
      // A file whose last line ends in "\c" has no final newline (the marker is dropped).
      if (bytes.size() >= 3 && bytes.compare(bytes.size() - 3, 3, "\\c\n") == 0) bytes.resize(bytes.size() - 3);
      cases.back().files.emplace_back(name, bytes);
    } else if (line.rfind("env: ", 0) == 0 && !cases.empty()) {
      cases.back().env = line.substr(5);
    } else if (line.rfind("args: ", 0) == 0 && !cases.empty()) {
      cases.back().args = line.substr(6);
    } else if (line.rfind("exit: ", 0) == 0 && !cases.empty()) {
      cases.back().exit_code = std::stoi(line.substr(6));
    } else if (line.rfind("stderr: ", 0) == 0 && !cases.empty()) {
      cases.back().first_stderr_line = line.substr(8);
    }
  }
  return cases;
}

std::string substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [from, to] : values)
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  return text;
}

class Corpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(Corpus, RefusedWithItsExactMessage) {
  const CorpusCase& c = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("dtsim_corpus_" + std::to_string(::getpid()) + "_" + c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, bytes] : c.files) {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
  const std::map<std::string, std::string> values = {{"{dir}", dir.string()},
                                                     {"{src}", DTSIM_SOURCE_DIR},
                                                     {"{quickstart}", std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini"}};
  const fs::path err = dir / "stderr.txt";
  const std::string env = c.env.empty() ? "" : "env " + substitute(c.env, values) + " ";
  const std::string command = "cd " + dir.string() + " && " + env + "timeout 120 " + DTSIM_BINARY + " " +
                              substitute(c.args, values) + " > /dev/null 2> " + err.string();
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(err);
  std::string first;
  std::getline(f, first);
  EXPECT_NE(code, 124) << "cases.txt:" << c.line << ": " << c.name << " hung";
  EXPECT_NE(code, 0) << "cases.txt:" << c.line << ": " << c.name << " passed silently";
  EXPECT_EQ(code, c.exit_code) << "cases.txt:" << c.line << ": " << c.name << "\n" << first;
  EXPECT_EQ(first, substitute(c.first_stderr_line, values)) << "cases.txt:" << c.line << ": " << c.name;
  fs::remove_all(dir);
}

std::string case_name(const ::testing::TestParamInfo<CorpusCase>& info) {
  std::string name;
  for (const char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(BadInputs, Corpus,
                         ::testing::ValuesIn(read_cases(std::string(DTSIM_SOURCE_DIR) + "/tests/corpus/cases.txt")),
                         case_name);

TEST(CorpusFile, HoldsAtLeast150CasesEachComplete) {  // (a case may have no arguments: bare `dtsim`)
  const std::vector<CorpusCase> cases = read_cases(std::string(DTSIM_SOURCE_DIR) + "/tests/corpus/cases.txt");
  EXPECT_GE(cases.size(), 150u);
  std::map<std::string, int> seen;
  for (const CorpusCase& c : cases) {
    EXPECT_GE(c.exit_code, 1) << c.name;
    EXPECT_FALSE(c.first_stderr_line.empty()) << c.name;
    EXPECT_EQ(++seen[c.name], 1) << "two cases named " << c.name;
  }
}

}  // namespace
