// `dtsim profiles` through the executable: it lists every shipped profile, and a broken profile is bad input
// (exit 2, one line naming the file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kProfiles = fs::path(DTSIM_SOURCE_DIR) / "network_profiles";

using Outcome = dtsim::testing::DtsimOutcome;
using dtsim::testing::run_dtsim;

// A throw-away profile folder holding copies of two good profiles.
class ProfilesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_profiles_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "gpu");
    fs::create_directories(dir_ / "fabric");
    fs::copy_file(kProfiles / "gpu" / "a100-40gb.ini", dir_ / "gpu" / "a100-40gb.ini");
    fs::copy_file(kProfiles / "fabric" / "ib-hdr-200.ini", dir_ / "fabric" / "ib-hdr-200.ini");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ProfilesCli, ListsEveryShippedProfile) {
  const Outcome r = run_dtsim("profiles");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int listed = 0;
  for (const char* section : {"gpu", "fabric"}) {
    for (const auto& entry : fs::directory_iterator(kProfiles / section)) {
      if (entry.path().extension() != ".ini") continue;
      ++listed;
      EXPECT_NE(r.output.find("\n" + entry.path().stem().string() + " "), std::string::npos)
          << entry.path().stem() << " missing from:\n" << r.output;
    }
  }
  EXPECT_GE(listed, 19);
  for (const char* column : {"FP32", "BF16", "PRICE/GPU-HOUR", "PROTOCOL", "GBIT/S", "LINK LATENCY", "EFFICIENCY"})
    EXPECT_NE(r.output.find(column), std::string::npos) << column;
  EXPECT_NE(r.output.find("12-20 CNY"), std::string::npos) << r.output;  // the Beijing A100 40G range
}

TEST_F(ProfilesCli, ListsTheFolderGivenOnTheCommandLine) {
  const Outcome r = run_dtsim("profiles " + dir_.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("a100-40gb"), std::string::npos);
  EXPECT_NE(r.output.find("ib-hdr-200"), std::string::npos);
  EXPECT_EQ(r.output.find("h100-80gb"), std::string::npos) << "only the given folder is listed";
}

// A folder whose name ends in .ini is no profile: it used to make the listing fail at "line 2" of it.
TEST_F(ProfilesCli, AFolderNamedLikeAProfileIsNotOne) {
  fs::create_directories(dir_ / "gpu" / "d.ini");
  const Outcome r = run_dtsim("profiles " + dir_.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("a100-40gb"), std::string::npos);
  EXPECT_EQ(r.output.find("\nd "), std::string::npos) << r.output;
}

TEST_F(ProfilesCli, ABrokenProfileIsBadInputNamingTheFile) {
  std::ofstream(dir_ / "gpu" / "broken-gpu.ini") << "[gpu]\nname = Broken\npeak_fp32 = lots\n";
  const Outcome r = run_dtsim("profiles " + dir_.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.rfind("dtsim: error: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("broken-gpu.ini:3"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
}

TEST_F(ProfilesCli, AProfileMissingARequiredValueIsBadInputNamingTheFile) {
  std::ofstream(dir_ / "fabric" / "no-bandwidth.ini")
      << "[fabric]\nname = X\nlink_latency = 1us\nswitch_latency = 0ns\nefficiency = 0.9\n";
  const Outcome r = run_dtsim("profiles " + dir_.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no-bandwidth.ini"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fabric.bandwidth"), std::string::npos) << r.output;
}

TEST_F(ProfilesCli, AMissingFolderIsBadInput) {
  const Outcome r = run_dtsim("profiles " + (dir_ / "nowhere").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nowhere"), std::string::npos) << r.output;
}

TEST_F(ProfilesCli, HelpMentionsTheCommand) {
  const Outcome r = run_dtsim("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("\n  profiles [DIR] "), std::string::npos) << r.output;
  const Outcome own = run_dtsim("profiles --help");  // its own help (it printed the general one until issue 57)
  EXPECT_EQ(own.exit_code, 0);
  EXPECT_EQ(own.output.rfind("usage: dtsim profiles [DIR]\n", 0), 0u) << own.output;
}

}  // namespace
