// Runs the dtsim executable as a user would and captures what it printed and its exit status.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace dtsim::testing {

struct DtsimOutcome {
  int exit_code = -1;
  std::string output;  // stdout, with stderr too unless separated
  std::string err;     // stderr, when run_dtsim was asked to keep it apart
};

// `dtsim <args>` through the shell (args may quote). With separate_stderr, stderr goes to `err` instead of
// being mixed into `output`. A command still running after `timeout_s` seconds is killed and reads as exit 124:
// tests of what used to hang give a short one, so that a hang fails the test instead of stalling the suite.
inline DtsimOutcome run_dtsim(const std::string& args, bool separate_stderr = false, int timeout_s = 3600) {
  DtsimOutcome o;
  const std::string err_file = "/tmp/dtsim_test_stderr_" + std::to_string(::getpid());
  const std::string command = "timeout " + std::to_string(timeout_s) + " " + std::string(DTSIM_BINARY) + " " + args +
                              (separate_stderr ? " 2>" + err_file : std::string(" 2>&1"));
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) o.output.append(buf, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (separate_stderr) {
    if (FILE* f = std::fopen(err_file.c_str(), "r")) {
      while ((n = fread(buf, 1, sizeof buf, f)) > 0) o.err.append(buf, n);
      std::fclose(f);
    }
    std::remove(err_file.c_str());
  }
  return o;
}

// `args` as one shell command line, each quoted.
inline std::string join_args(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) {
    std::string quoted = "'";
    for (const char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + quoted + "'";
  }
  return line;
}

// The lines of `text`, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace dtsim::testing
