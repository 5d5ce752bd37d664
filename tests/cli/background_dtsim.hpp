// A dtsim command started in the background, so that a test can signal it while it runs.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dtsim::testing {

// Polls `ready` every 100 ms; false when it has not held within `seconds`.
inline bool wait_until(const std::function<bool()>& ready, int seconds = 120) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ready();
}

// The number of lines in a file (0 when it cannot be read).
inline size_t line_count(const std::filesystem::path& p) {
  std::ifstream f(p);
  size_t n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

class BackgroundRun {
 public:
  // `dtsim <args>`, stderr into `stderr_file`, stdout into `stdout_file` (default: discarded).
  BackgroundRun(const std::vector<std::string>& args, const std::filesystem::path& stderr_file,
                const std::filesystem::path& stdout_file = "/dev/null") {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!std::freopen(stderr_file.c_str(), "w", stderr) || !std::freopen(stdout_file.c_str(), "w", stdout))
        std::_Exit(126);
      std::vector<char*> argv;
      std::string binary = DTSIM_BINARY;
      argv.push_back(binary.data());
      std::vector<std::string> copy = args;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      std::_Exit(127);
    }
  }
  ~BackgroundRun() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;
  pid_t pid() const { return pid_; }

  // Waits until the run has recorded `rows` evaluation rows in its staging folder (false after 120 s).
  bool wait_for_rows(const std::filesystem::path& out, size_t rows) const {
    const std::filesystem::path staged = out / ("partial-run-" + std::to_string(pid_)) / "metrics.csv";
    return wait_until([&] { return line_count(staged) >= rows + 1; });
  }

  // Sends `signal` and returns the exit status (-1 when killed by a signal).
  int stop(int signal) {
    ::kill(pid_, signal);
    return wait();
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace dtsim::testing
