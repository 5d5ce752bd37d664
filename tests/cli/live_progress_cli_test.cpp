// The live progress display through the executable: on a terminal (a pseudo-terminal here) `dtsim run`
// redraws one line with the step count out of the total and an ETA; with --quiet, or with stderr not a
// terminal, there is none of it.
#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";

struct Terminal {
  std::string text;  // everything dtsim wrote to the terminal
  int exit_code = -1;
};

// dtsim with stdin, stdout and stderr on a pseudo-terminal, as a person at a terminal runs it.
Terminal run_on_terminal(const std::string& extra) {
  const std::string out = (fs::temp_directory_path() / ("dtsim_live_" + std::to_string(::getpid()))).string();
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::setenv("TERM", "xterm", 1);
    const std::string command = std::string(DTSIM_BINARY) + " run " + kQuickstart + " --out " + out +
                                " --set training.max_steps=40 --set training.epochs=1 " + extra;
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  Terminal t;
  if (pid < 0) return t;
  char buffer[4096];
  for (ssize_t n; (n = ::read(master, buffer, sizeof buffer)) > 0;) t.text.append(buffer, static_cast<size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  fs::remove_all(out);
  return t;
}

TEST(LiveProgress, RedrawsOneLineWithTheTotalOnATerminal) {
  const Terminal t = run_on_terminal("");
  ASSERT_EQ(t.exit_code, 0) << t.text;
  EXPECT_NE(t.text.find("\r\033[Kstep "), std::string::npos) << "drawn in place";
  EXPECT_NE(t.text.find("/40  "), std::string::npos) << "out of the 40 planned steps";
  EXPECT_NE(t.text.find("Summary of"), std::string::npos) << "the summary still follows";
  // The line is erased before anything else is printed: the summary's line starts clean.
  const size_t summary = t.text.find("Summary of");
  const size_t last_erase = t.text.rfind("\r\033[K", summary);
  ASSERT_NE(last_erase, std::string::npos);
  EXPECT_EQ(t.text.find("ETA", last_erase), t.text.find("ETA", summary)) << "no live text after the last erase";
  // A step is drawn once, however many workers report its loss.
  EXPECT_EQ(t.text.find("step 40/40"), t.text.rfind("step 40/40"));
}

TEST(LiveProgress, IsSilentWithQuietOrWithoutATerminal) {
  const Terminal quiet = run_on_terminal("--quiet");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.text;
  EXPECT_EQ(quiet.text.find("\033[K"), std::string::npos) << quiet.text;
  // Captured output (a pipe, not a terminal): progress lines only.
  const auto piped = dtsim::testing::run_dtsim("run " + kQuickstart + " --out " +
                                               (fs::temp_directory_path() / "dtsim_live_pipe").string() +
                                               " --set training.max_steps=40 --set training.epochs=1");
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(piped.output.find("\033[K"), std::string::npos);
  EXPECT_EQ(piped.output.find('\r'), std::string::npos);
  fs::remove_all(fs::temp_directory_path() / "dtsim_live_pipe");
}

}  // namespace
