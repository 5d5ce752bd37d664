#include "sim/world/faults.hpp"

#include <algorithm>
#include <string>

#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

// Sorts and merges intervals that overlap or touch, so that a host downed by two events switches off once
// and on once.
std::vector<DownInterval> merged(std::vector<DownInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const DownInterval& a, const DownInterval& b) { return a.down_at < b.down_at; });
  std::vector<DownInterval> out;
  for (const DownInterval& i : intervals) {
    if (!out.empty() && i.down_at <= out.back().up_at)
      out.back().up_at = std::max(out.back().up_at, i.up_at);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace

FaultSchedule::FaultSchedule(const FaultConfig& config, const std::vector<int>& node_of_worker) {
  const int workers = static_cast<int>(node_of_worker.size());
  int nodes = 0;
  for (const int n : node_of_worker) nodes = std::max(nodes, n + 1);
  host_down_.resize(static_cast<size_t>(workers));
  link_down_.resize(static_cast<size_t>(workers));
  for (const FaultEvent& e : config.events) {
    const DownInterval interval{e.down_at, e.up_at};
    const int limit = e.target == FaultTarget::Node ? nodes : workers;
    if (e.index < 0 || e.index >= limit)
      throw ValueError(std::string(to_string(e.target)) + " " + std::to_string(e.index) + " does not exist",
                       "the platform has " + std::to_string(limit) + " " + to_string(e.target) + "s");
    switch (e.target) {
      case FaultTarget::Worker:
        host_down_[static_cast<size_t>(e.index)].push_back(interval);
        break;
      case FaultTarget::Link:
        link_down_[static_cast<size_t>(e.index)].push_back(interval);
        break;
      case FaultTarget::Node:
        for (int w = 0; w < workers; ++w)
          if (node_of_worker[static_cast<size_t>(w)] == e.index) host_down_[static_cast<size_t>(w)].push_back(interval);
        break;
    }
  }
  for (int w = 0; w < workers; ++w) {
    host_down_[static_cast<size_t>(w)] = merged(host_down_[static_cast<size_t>(w)]);
    link_down_[static_cast<size_t>(w)] = merged(link_down_[static_cast<size_t>(w)]);
    for (const bool link : {false, true})
      for (const DownInterval& i : link ? link_down_[static_cast<size_t>(w)] : host_down_[static_cast<size_t>(w)]) {
        transitions_.push_back({i.down_at, w, link, true});
        if (i.up_at < kNever) transitions_.push_back({i.up_at, w, link, false});
      }
  }
  std::stable_sort(transitions_.begin(), transitions_.end(), [](const FaultTransition& a, const FaultTransition& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.worker != b.worker) return a.worker < b.worker;
    return a.link < b.link;
  });
}

const DownInterval* FaultSchedule::find(const std::vector<DownInterval>& intervals, double t) {
  for (const DownInterval& i : intervals)
    if (i.down_at <= t && t < i.up_at) return &i;
  return nullptr;
}

double FaultSchedule::up_at(const std::vector<DownInterval>& intervals, double t) {
  const DownInterval* i = find(intervals, t);
  return i ? i->up_at : t;
}

double FaultSchedule::next_transition_after(double t) const {
  for (const FaultTransition& x : transitions_)
    if (x.time > t) return x.time;
  return kNever;
}

}  // namespace dtsim::sim
