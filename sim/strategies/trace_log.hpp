// The run's timeline in Chrome's trace-event format (trace.json; Perfetto and chrome://tracing open it): one
// track per worker, and on it a span for each stretch of simulated time the worker spent computing, waiting
// for the slowest peer, or in a collective. Strategies add spans where they charge time to a worker
// (WorkerTime), so the timeline and summary.json's time breakdown describe the same seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::sim {

class TraceLog {
 public:
  // Steps from `max_steps` on are not recorded (output.trace_steps), so that a long run's file stays small.
  explicit TraceLog(int64_t max_steps) : max_steps_(max_steps) {}

  bool wants(int64_t step) const { return step < max_steps_; }
  void name_track(int track, const std::string& name);
  // A span of `track` from `start_s` to `end_s` (simulated seconds); zero-length spans are dropped.
  void span(int track, const char* name, const char* category, double start_s, double end_s, int64_t step);

  // A counter track's value from `time_s` on (Perfetto draws each counter name as a track of its own); like
  // spans, only while `step` is recorded. A value at the same time as the previous one replaces it.
  void counter(const std::string& name, double time_s, double value, int64_t step);
  // The same without a step, for series known only at the end (link utilisation): kept up to the last span's
  // end, so the counters cover the recorded steps.
  void counter_until_last_span(const std::string& name, double time_s, double value);

  size_t span_count() const { return spans_.size(); }
  size_t counter_count() const { return counters_.size(); }
  // The JSON document: {"traceEvents": [...], "displayTimeUnit": "ms"}; times in microseconds.
  std::string json() const;

 private:
  struct Span {
    int track;
    const char* name;
    const char* category;
    double start_s, end_s;
    int64_t step;
  };
  struct Counter {
    std::string name;
    double time_s;
    double value;
  };
  int64_t max_steps_;
  double last_span_end_s_ = 0.0;
  std::vector<Counter> counters_;
  std::vector<std::pair<int, std::string>> tracks_;
  std::vector<Span> spans_;
};

}  // namespace dtsim::sim
