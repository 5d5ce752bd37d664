// The live one-line progress display of `dtsim run` on a terminal: the step (or update, or round) reached
// out of those planned, the simulated time, and an estimate of the wall time left. It redraws one line in
// place on stderr, at most a few times a second; it stays silent when stderr is not a terminal (a log file,
// a sweep's child) or with --quiet, so that captured output holds only the progress lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace dtsim::sim {

// The display's text for `done` of `total` units at simulated time `sim_time_s`, `elapsed_s` wall seconds in:
// e.g. "step 120/600  20 %  simulated 1.23 s  elapsed 10 s  ETA 40 s". Without a total (0) there is no
// percentage or ETA; the ETA assumes the remaining units take as long as the ones done so far.
std::string live_progress_text(const char* unit, int64_t done, int64_t total, double sim_time_s, double elapsed_s);

class LiveProgress {
 public:
  // Draws on `out` when `enabled`; whether a terminal is there is the caller's question (terminal_wants_live()).
  LiveProgress(bool enabled, const char* unit, std::FILE* out = stderr);
  ~LiveProgress() { clear(); }
  LiveProgress(const LiveProgress&) = delete;
  LiveProgress& operator=(const LiveProgress&) = delete;

  void step(int64_t done, int64_t total, double sim_time_s);
  // Erases the line (before other output, and at the end); the next step draws it again.
  void clear();

 private:
  bool enabled_;
  const char* unit_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_ = false;
  int64_t last_done_ = -1;
};

// True when stderr is a terminal and the TERM does not say it cannot redraw a line ("dumb").
bool terminal_wants_live();

}  // namespace dtsim::sim
