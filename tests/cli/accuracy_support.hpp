// Runs a shipped scenario with the dtsim executable and reads its summary.json.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace dtsim::testing {

// `dtsim run scenarios/<name>.ini --quiet --out <tmp> <extra>`; returns the parsed summary.json.
inline nlohmann::json run_scenario(const std::string& name, const std::string& extra = "") {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("dtsim_accuracy_" + name + "_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(std::hash<std::string>{}(extra)));
  const std::string args = std::string("run ") + DTSIM_SOURCE_DIR + "/scenarios/" + name + ".ini --quiet --out " +
                           out.string() + " " + extra;
  const DtsimOutcome r = run_dtsim(args);
  if (r.exit_code != 0) throw std::runtime_error("dtsim " + args + " failed: " + r.output);
  std::ifstream f(out / "summary.json");
  std::stringstream text;
  text << f.rdbuf();
  fs::remove_all(out);
  return nlohmann::json::parse(text.str());
}

}  // namespace dtsim::testing
