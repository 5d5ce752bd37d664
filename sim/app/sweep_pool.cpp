#include "sim/app/sweep_pool.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <stdexcept>

namespace dtsim::sim {
namespace {

volatile std::sig_atomic_t g_pool_signal = 0;

void on_stop_signal(int signal) { g_pool_signal = signal; }

// Installs the handlers for the pool's lifetime and puts the previous ones back after.
class StopSignals {
 public:
  StopSignals() {
    g_pool_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

pid_t start_child(const PoolTask& task, pid_t parent) {
  std::vector<char*> argv;
  for (const std::string& a : task.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int log = ::open(task.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error("cannot write " + task.log + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    throw std::runtime_error(std::string("cannot start a run: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The child: ends with the sweep, however the sweep ends (if the sweep died before this line, stop now).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);
    // Its own process group, so that Ctrl-C on the terminal reaches the sweep only, which then sends one
    // SIGTERM: a dtsim run ends at once on a second signal, without publishing what it measured.
    ::setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execv(argv[0], argv.data());
    const std::string message = std::string("dtsim sweep: cannot start ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::close(log);
  return pid;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

std::string own_executable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error(std::string("cannot find dtsim's own path: ") + std::strerror(errno));
  return std::string(path, static_cast<size_t>(n));
}

int run_pool(const std::vector<PoolTask>& tasks, int jobs, const std::function<void(const PoolExit&)>& finished) {
  const StopSignals signals;
  const pid_t self = ::getpid();
  std::map<pid_t, size_t> running;
  size_t next = 0;
  bool stopping = false;
  while (next < tasks.size() || !running.empty()) {
    if (g_pool_signal != 0 && !stopping) {
      stopping = true;
      for (const auto& [pid, task] : running) ::kill(pid, SIGTERM);
    }
    while (!stopping && next < tasks.size() && static_cast<int>(running.size()) < jobs) {
      running[start_child(tasks[next], self)] = next;
      ++next;
    }
    if (stopping && running.empty()) break;
    // Polled, so that a signal arriving just before the wait is seen within 20 ms, not after a whole run.
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      ::usleep(20000);
      continue;
    }
    if (pid < 0) throw std::runtime_error(std::string("waiting for a run: ") + std::strerror(errno));
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    const size_t task = it->second;
    running.erase(it);
    finished({task, exit_code_of(status)});
  }
  return g_pool_signal;
}

}  // namespace dtsim::sim
