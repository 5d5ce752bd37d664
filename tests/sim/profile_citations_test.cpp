// Every number in a shipped profile carries its public source. The rule, simple enough to check by machine:
// each `key = value` line other than `name` must be preceded, since the previous value line, by a comment
// line holding a citation a reader can follow: a URL (http:// or https://), an arXiv id or a DOI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kProfiles = fs::path(DTSIM_SOURCE_DIR) / "network_profiles";

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool cites_a_source(const std::string& comment) {
  for (const char* marker : {"http://", "https://", "arXiv:", "doi:", "DOI:"})
    if (comment.find(marker) != std::string::npos) return true;
  return false;
}

// "line N: key" for every value line without a citation since the previous value line.
std::vector<std::string> uncited_values(const std::string& text) {
  std::vector<std::string> missing;
  std::istringstream in(text);
  std::string line;
  bool cited = false;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string t = trimmed(line);
    if (t.empty() || t[0] == '[') continue;
    if (t[0] == '#' || t[0] == ';') {
      cited = cited || cites_a_source(t);
      continue;
    }
    const size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trimmed(t.substr(0, eq));
    if (key != "name" && !cited) missing.push_back("line " + std::to_string(number) + ": " + key);
    cited = false;
  }
  return missing;
}

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ProfileCitations, TheRuleCatchesAValueWithoutASource) {
  EXPECT_TRUE(uncited_values("[gpu]\nname = X\n# https://example.org/datasheet\nmemory = 8GB\n").empty());
  EXPECT_TRUE(uncited_values("[gpu]\nname = X\n# Paper, arXiv:2104.04473\n\nefficiency = 0.5\n").empty());
  // No comment at all.
  EXPECT_EQ(uncited_values("[gpu]\nname = X\nmemory = 8GB\n"), std::vector<std::string>{"line 3: memory"});
  // A comment without a followable source.
  EXPECT_EQ(uncited_values("[gpu]\n# from the datasheet\nmemory = 8GB\n"), std::vector<std::string>{"line 3: memory"});
  // One citation does not cover the next value.
  EXPECT_EQ(uncited_values("# https://a.example\npeak_fp32 = 1TFLOPS\npeak_tf32 = 2TFLOPS\n"),
            std::vector<std::string>{"line 3: peak_tf32"});
}

TEST(ProfileCitations, EveryValueInEveryShippedProfileCitesItsSource) {
  int files = 0;
  for (const char* section : {"gpu", "fabric", "framework"}) {
    for (const auto& entry : fs::directory_iterator(kProfiles / section)) {
      if (entry.path().extension() != ".ini") continue;
      ++files;
      for (const std::string& where : uncited_values(read(entry.path())))
        ADD_FAILURE() << entry.path().string() << ": " << where << " has no source (URL, arXiv or DOI) above it";
    }
  }
  EXPECT_GE(files, 24);  // 5 GPUs, 14 fabrics and 5 frameworks ship
}

}  // namespace
