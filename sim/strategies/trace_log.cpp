#include "sim/strategies/trace_log.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dtsim::sim {

void TraceLog::name_track(int track, const std::string& name) { tracks_.emplace_back(track, name); }

void TraceLog::span(int track, const char* name, const char* category, double start_s, double end_s, int64_t step) {
  if (!wants(step) || !(end_s > start_s)) return;
  spans_.push_back({track, name, category, start_s, end_s, step});
  last_span_end_s_ = std::max(last_span_end_s_, end_s);
}

void TraceLog::counter(const std::string& name, double time_s, double value, int64_t step) {
  if (!wants(step)) return;
  for (auto it = counters_.rbegin(); it != counters_.rend(); ++it) {
    if (it->name != name) continue;
    if (it->time_s == time_s) {
      it->value = value;
      return;
    }
    break;
  }
  counters_.push_back({name, time_s, value});
}

void TraceLog::counter_until_last_span(const std::string& name, double time_s, double value) {
  if (time_s > last_span_end_s_) return;
  counters_.push_back({name, time_s, value});
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
  for (const Counter& c : counters_)
    events.push_back({{"name", c.name}, {"ph", "C"}, {"pid", 1}, {"ts", c.time_s * 1e6}, {"args", {{"value", c.value}}}});
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace dtsim::sim
