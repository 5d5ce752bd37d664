#include "sim/app/live_progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace dtsim::sim {
namespace {

std::string duration(double s) {
  char text[32];
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) std::snprintf(text, sizeof text, "%.0f s", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(text, sizeof text, "%d h %02d min", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  return text;
}

// Redraws closer together than this would only cost time on a slow terminal.
constexpr std::chrono::milliseconds kRedrawEvery{200};

}  // namespace

std::string live_progress_text(const char* unit, int64_t done, int64_t total, double sim_time_s, double elapsed_s) {
  char text[160];
  std::string line = unit;
  if (total > 0) {
    std::snprintf(text, sizeof text, " %lld/%lld  %.0f %%", static_cast<long long>(done), static_cast<long long>(total),
                  100.0 * static_cast<double>(done) / static_cast<double>(total));
  } else {
    std::snprintf(text, sizeof text, " %lld", static_cast<long long>(done));
  }
  line += text;
  std::snprintf(text, sizeof text, "  simulated %.6g s  elapsed %s", sim_time_s, duration(elapsed_s).c_str());
  line += text;
  if (total > 0 && done > 0 && done < total)
    line += "  ETA " + duration(elapsed_s * static_cast<double>(total - done) / static_cast<double>(done));
  return line;
}

LiveProgress::LiveProgress(bool enabled, const char* unit, std::FILE* out) : enabled_(enabled), unit_(unit), out_(out) {}

void LiveProgress::step(int64_t done, int64_t total, double sim_time_s) {
  if (!enabled_) return;
  // A synchronous step reports each worker's loss: the same step again changes nothing on the line.
  if (drawn_ && done == last_done_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < kRedrawEvery && done != total) return;
  last_done_ = done;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // \r and "erase to the end of the line" (ECMA-48 EL): the new text replaces the old, however long it was.
  std::fprintf(out_, "\r\033[K%s", live_progress_text(unit_, done, total, sim_time_s, elapsed).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void LiveProgress::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

bool terminal_wants_live() {
  if (isatty(STDERR_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

}  // namespace dtsim::sim
