// A test's own empty folder, named after the test and the process, removed afterwards; and the scenario of
// issue 57's reports, base.ini: a 2-worker MLP on 2,000 samples, one epoch.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dtsim::testing {

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A run folder's summary.json.
inline nlohmann::json run_summary(const std::filesystem::path& run) {
  return nlohmann::json::parse(file_text(run / "summary.json"));
}

class ScratchFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dtsim_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    base_ = (dir_ / "base.ini").string();
    std::ofstream(base_) << "[cluster]\nworkers = 2\n[model]\narch = mlp\nhidden = 64\n"
                            "[data]\ntrain_samples = 2000\ntest_samples = 500\n[training]\nepochs = 1\n";
  }
  void TearDown() override {
    ::unsetenv("DTSIM_WORKLOAD_DIR");
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::string base_;
};

}  // namespace dtsim::testing
