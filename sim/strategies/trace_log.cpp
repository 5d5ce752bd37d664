#include "sim/strategies/trace_log.hpp"

#include <nlohmann/json.hpp>

namespace dtsim::sim {

void TraceLog::name_track(int track, const std::string& name) { tracks_.emplace_back(track, name); }

void TraceLog::span(int track, const char* name, const char* category, double start_s, double end_s, int64_t step) {
  if (!wants(step) || !(end_s > start_s)) return;
  spans_.push_back({track, name, category, start_s, end_s, step});
}

std::string TraceLog::json() const {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& [track, name] : tracks_)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", track}, {"args", {{"name", name}}}});
  for (const Span& s : spans_)
    events.push_back({{"name", s.name},
                      {"cat", s.category},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", s.track},
                      {"ts", s.start_s * 1e6},
                      {"dur", (s.end_s - s.start_s) * 1e6},
                      {"args", {{"step", s.step}}}});
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace dtsim::sim
