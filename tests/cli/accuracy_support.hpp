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

namespace dtsim::testing {

// `dtsim run scenarios/<name>.ini --quiet --out <tmp> <extra>`; returns the parsed summary.json.
inline nlohmann::json run_scenario(const std::string& name, const std::string& extra = "") {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("dtsim_accuracy_" + name + "_" + std::to_string(::getpid()) + "_" +
                                                    std::to_string(std::hash<std::string>{}(extra)));
  const std::string command = std::string(DTSIM_BINARY) + " run " + DTSIM_SOURCE_DIR + "/scenarios/" + name +
                              ".ini --quiet --out " + out.string() + " " + extra + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + command);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(command + " failed: " + output);
  std::ifstream f(out / "summary.json");
  std::stringstream text;
  text << f.rdbuf();
  fs::remove_all(out);
  return nlohmann::json::parse(text.str());
}

}  // namespace dtsim::testing
