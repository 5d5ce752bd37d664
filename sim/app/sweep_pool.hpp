// Runs a list of commands as child processes, at most `jobs` at a time, each with its output in a log file.
// SIGINT or SIGTERM to the sweep stops it starting new ones and passes SIGTERM to those running (a dtsim run
// then publishes what it has, status interrupted); a child whose parent dies, even by SIGKILL, gets SIGTERM
// from the kernel, so no run is left going on its own after the sweep is gone.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dtsim::sim {

struct PoolTask {
  std::vector<std::string> argv;  // argv[0]: the program's path
  std::string log;                // stdout and stderr go here (created, truncated)
};

struct PoolExit {
  size_t task = 0;
  int exit_code = 0;  // the child's exit status, or 128 + the signal that ended it
};

// Runs the tasks in order; calls `finished` in the parent as each one ends. Returns 0, or the signal number
// that stopped the sweep early (the tasks not started then are skipped).
int run_pool(const std::vector<PoolTask>& tasks, int jobs, const std::function<void(const PoolExit&)>& finished);

// The path of the running executable (/proc/self/exe), for starting `dtsim run` children.
std::string own_executable();

}  // namespace dtsim::sim
