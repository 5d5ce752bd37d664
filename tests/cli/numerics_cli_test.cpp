// The numerics fingerprint as a user meets it: in dtsim --version, in every run's summary.json and console
// summary, and in dtsim compare's warning when runs of different numerics are set side by side.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace fs = std::filesystem;
using dtsim::testing::lines_of;
using dtsim::testing::run_dtsim;

namespace {

const std::string kQuick = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini --quiet --set training.max_steps=6 "
                           "--set data.train_samples=1024 --set data.test_samples=200";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("dtsim_numerics_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void write_json(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Numerics, VersionNamesTheLevelAndTheFingerprint) {
  const auto v = run_dtsim("--version", true);
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_TRUE(std::regex_search(v.output, std::regex("\nnumerics: [^\n]+, fingerprint [0-9a-f]{16}\n"))) << v.output;
}

TEST(Numerics, EveryRunRecordsItsFingerprintAndTwoRunsOfOneBuildAreByteIdentical) {
  const fs::path a = scratch("a"), b = scratch("b");
  ASSERT_EQ(run_dtsim("run " + kQuick + " --set output.save_model=true --out " + a.string()).exit_code, 0);
  ASSERT_EQ(run_dtsim("run " + kQuick + " --set output.save_model=true --out " + b.string()).exit_code, 0);
  const nlohmann::json numerics = read_json(a / "summary.json")["numerics"];
  for (const char* key : {"fingerprint", "isa_level", "cpu_features", "compiler", "eigen", "gemm_blocking",
                          "elementary_functions", "floating_point", "backend", "ran_on_cpu"})
    EXPECT_TRUE(numerics.contains(key)) << key;
  EXPECT_EQ(numerics["backend"], "cpu");
  EXPECT_EQ(numerics["fingerprint"], read_json(b / "summary.json")["numerics"]["fingerprint"]);
  // The fingerprint dtsim --version prints is the runs' own.
  EXPECT_NE(run_dtsim("--version").output.find(numerics["fingerprint"].get<std::string>()), std::string::npos);
  EXPECT_FALSE(numerics.contains("floating_point_at_start")) << "nothing set the FP environment before dtsim";
  EXPECT_EQ(file_text(a / "metrics.csv"), file_text(b / "metrics.csv"));
  EXPECT_EQ(file_text(a / "model.bin"), file_text(b / "model.bin"));
  EXPECT_FALSE(file_text(a / "model.bin").empty());
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(Numerics, CompareWarnsWhenANativeRunIsSetBesideAPortableOne) {
  const fs::path portable = scratch("portable"), native = scratch("native"), same = scratch("same");
  for (const fs::path& dir : {portable, native, same})
    ASSERT_EQ(run_dtsim("run " + kQuick + " --out " + dir.string()).exit_code, 0);
  // Runs of one build: no warning.
  const auto quiet = run_dtsim("compare " + portable.string() + " " + same.string(), true);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("different numerics"), std::string::npos) << quiet.err;
  // `native` as a -march=native build on another machine would have written it: another level and fingerprint.
  nlohmann::json summary = read_json(native / "summary.json");
  const std::string portable_id = summary["numerics"]["fingerprint"];
  summary["numerics"]["isa_level"] = "native";
  summary["numerics"]["fingerprint"] = "0123456789abcdef";
  write_json(native / "summary.json", summary);
  const auto mixed = run_dtsim("compare " + portable.string() + " " + native.string(), true);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.output.find("final accuracy"), std::string::npos) << "the table is still printed: " << mixed.output;
  EXPECT_NE(mixed.err.find("warning: these runs were computed with different numerics"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("1 with fingerprint 0123456789abcdef (native)"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("1 with fingerprint " + portable_id + " ("), std::string::npos) << mixed.err;
  EXPECT_EQ(lines_of(mixed.err).size(), 1u) << mixed.err;
  // A run from a dtsim that recorded no numerics (before the fingerprint) beside a portable one: warned too.
  summary.erase("numerics");
  write_json(native / "summary.json", summary);
  const auto old = run_dtsim("compare " + portable.string() + " " + native.string(), true);
  EXPECT_NE(old.err.find("1 with none recorded"), std::string::npos) << old.err;
  for (const fs::path& dir : {portable, native, same}) fs::remove_all(dir);
}

}  // namespace
