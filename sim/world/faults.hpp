// When each worker and each worker's link is down: the [faults] events resolved against the platform's
// node map, as merged intervals per worker. Pure (no SimGrid): strategies query it to plan around failures
// (skip a dead peer, wait for it to come back, decide when to restart), and apply_heterogeneity turns it
// into hosts and links switched off and on at exactly these times.
#pragma once

#include <vector>

#include "sim/config/heterogeneity_config.hpp"

namespace dtsim::sim {

// [down_at, up_at): the resource is off from down_at (included) to up_at (excluded); up_at may be kNever.
struct DownInterval {
  double down_at = 0.0;
  double up_at = kNever;
};

// One switch of one resource, in time order.
struct FaultTransition {
  double time = 0.0;
  int worker = 0;
  bool link = false;  // false: the worker's host; true: the worker's own link
  bool down = true;   // true: goes down; false: comes back up
};

class FaultSchedule {
 public:
  FaultSchedule() = default;
  // `node_of_worker` is Platform::node_of_worker (a node failure takes every worker of the node down).
  // Throws ValueError if an event names a node the platform does not have. Overlapping failures of one host
  // (a node event and a worker event) merge into one down interval.
  FaultSchedule(const FaultConfig& config, const std::vector<int>& node_of_worker);

  bool empty() const { return transitions_.empty(); }
  int num_workers() const { return static_cast<int>(host_down_.size()); }

  bool worker_down(int worker, double t) const { return find(host_down_.at(worker), t) != nullptr; }
  bool link_down(int worker, double t) const { return find(link_down_.at(worker), t) != nullptr; }
  // The worker can compute and communicate at t: its host and its link are up.
  bool reachable(int worker, double t) const { return !worker_down(worker, t) && !link_down(worker, t); }

  // t itself when the worker (its host) is up at t, else when it comes back (kNever if it never does).
  double worker_up_at(int worker, double t) const { return up_at(host_down_.at(worker), t); }
  double link_up_at(int worker, double t) const { return up_at(link_down_.at(worker), t); }

  const std::vector<DownInterval>& worker_intervals(int worker) const { return host_down_.at(worker); }
  const std::vector<DownInterval>& link_intervals(int worker) const { return link_down_.at(worker); }

  // Every switch, by time (ties: by worker, hosts before links, then as written).
  const std::vector<FaultTransition>& transitions() const { return transitions_; }
  // The first transition strictly after t, or kNever.
  double next_transition_after(double t) const;

 private:
  static const DownInterval* find(const std::vector<DownInterval>& intervals, double t);
  static double up_at(const std::vector<DownInterval>& intervals, double t);

  std::vector<std::vector<DownInterval>> host_down_;  // per worker, sorted, disjoint
  std::vector<std::vector<DownInterval>> link_down_;
  std::vector<FaultTransition> transitions_;
};

}  // namespace dtsim::sim
