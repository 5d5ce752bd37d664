#include "sim/strategies/federated/federated_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "gpu/portable_math.hpp"
#include "models/random.hpp"

namespace dtsim::sim {
namespace {

// The first moment ≥ t at which one of the intervals starts (the resource goes down), or kNever.
double next_down(const std::vector<DownInterval>& intervals, double t) {
  for (const DownInterval& d : intervals)
    if (d.down_at >= t) return d.down_at;
  return kNever;
}

// One stream per (purpose, round, client): the value a client draws never depends on who else is drawn.
uint64_t round_client_id(int64_t round, int client, int clients) {
  return static_cast<uint64_t>(round) * static_cast<uint64_t>(clients) + static_cast<uint64_t>(client);
}

}  // namespace

int overcommitted_count(int k, double overcommit, int clients) {
  // The small slack keeps ⌈10·1.3⌉ at 13 although 10·1.3 is 13.000000000000002 in binary.
  const double wanted = std::ceil(static_cast<double>(k) * (1.0 + overcommit) - 1e-9);
  return static_cast<int>(std::min<double>(wanted, clients));
}

int straggler_count(int n, double fraction) {
  return n - static_cast<int>(std::llround(static_cast<double>(n) * (1.0 - fraction)));
}

RoundPlanner::RoundPlanner(const FlConfig& config, uint64_t seed, std::vector<double> samples, int batch,
                           const FaultSchedule& faults)
    : config_(config), seed_(seed), samples_(std::move(samples)), batch_(std::max(1, batch)), faults_(faults) {
  windows_.resize(samples_.size());
  traced_.assign(samples_.size(), false);
  for (const ClientAvailability& a : config.availability_trace) {
    if (a.client < 0 || a.client >= clients())
      throw std::invalid_argument("the availability trace names an unknown client");
    windows_[a.client] = a.windows;
    traced_[a.client] = true;
  }
}

int64_t RoundPlanner::steps_per_epoch(int client) const {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(samples_.at(client) / batch_)));
}

int64_t RoundPlanner::full_steps(int client) const {
  if (!config_.local_steps_by_client.empty()) return config_.local_steps_by_client.at(client);
  if (config_.local_steps > 0) return config_.local_steps;
  return config_.local_epochs * steps_per_epoch(client);
}

bool RoundPlanner::available(int client, int64_t round, double t) const {
  if (traced_[client]) {
    const auto& w = windows_[client];
    if (std::none_of(w.begin(), w.end(), [t](const AvailabilityWindow& a) { return a.from <= t && t < a.to; }))
      return false;
  }
  if (client < faults_.num_workers() && !faults_.reachable(client, t)) return false;
  if (config_.availability >= 1.0) return true;
  models::Rng rng(seed_, "fl-availability", round_client_id(round, client, clients()));
  return rng.uniform() < config_.availability;
}

double RoundPlanner::lost_at(int client, double t) const {
  double lost = kNever;
  if (client < faults_.num_workers())
    lost = std::min(next_down(faults_.worker_intervals(client), t), next_down(faults_.link_intervals(client), t));
  if (traced_[client])
    for (const AvailabilityWindow& w : windows_[client])
      if (w.from <= t && t < w.to) lost = std::min(lost, w.to);
  return lost;
}

double RoundPlanner::next_availability_change(double t) const {
  double next = faults_.next_transition_after(t);
  for (const auto& windows : windows_)
    for (const AvailabilityWindow& w : windows) {
      if (w.from > t) next = std::min(next, w.from);
      if (w.to > t) next = std::min(next, w.to);
    }
  return next;
}

std::vector<int> RoundPlanner::sample(const std::vector<int>& candidates, int count, int64_t round) const {
  count = std::clamp(count, 0, static_cast<int>(candidates.size()));
  std::vector<int> chosen;
  if (!config_.weighted_sampling) {
    std::vector<int> order = candidates;
    models::Rng(seed_, "fl-sampling", static_cast<uint64_t>(round)).shuffle(order);
    chosen.assign(order.begin(), order.begin() + count);
  } else {
    // Efraimidis & Spirakis (2006): key_i = log(u_i) / w_i; the `count` largest keys are a sample drawn one
    // at a time with probability ∝ w among those not yet drawn. One uniform per candidate, in id order.
    models::Rng rng(seed_, "fl-weighted-sampling", static_cast<uint64_t>(round));
    std::vector<std::pair<double, int>> keyed;
    for (const int c : candidates) {
      const double w = samples_.at(c);
      const double u = rng.uniform();
      // log(1 − u) rather than log(u): uniform() can return 0 but never 1.
      keyed.push_back({w > 0 ? portable::log1p(-u) / w : -std::numeric_limits<double>::infinity(), c});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (int i = 0; i < count; ++i) chosen.push_back(keyed[i].second);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

RoundPlan RoundPlanner::plan(int64_t round, double t) const {
  RoundPlan p;
  p.round = round;
  std::vector<int> candidates;
  for (int c = 0; c < clients(); ++c)
    if (available(c, round, t)) candidates.push_back(c);
  p.available = static_cast<int>(candidates.size());
  const int k = std::min(config_.clients_per_round, p.available);
  p.keep = k;
  const std::vector<int> chosen = sample(candidates, overcommitted_count(k, config_.overcommit, p.available), round);

  std::vector<int> stragglers;
  const int n_stragglers = straggler_count(static_cast<int>(chosen.size()), config_.straggler_fraction);
  if (n_stragglers > 0) {
    stragglers = chosen;
    models::Rng(seed_, "fl-stragglers", static_cast<uint64_t>(round)).shuffle(stragglers);
    stragglers.resize(static_cast<size_t>(n_stragglers));
    std::sort(stragglers.begin(), stragglers.end());
  }
  for (const int c : chosen) {
    ClientAssignment a;
    a.client = c;
    a.local_steps = full_steps(c);
    a.straggler = std::binary_search(stragglers.begin(), stragglers.end(), c);
    if (a.straggler) {
      // The FedProx reference draws randint(1, E): 1..E−1 epochs. In step mode, 1..τ−1 steps.
      models::Rng rng(seed_, "fl-straggler-work", round_client_id(round, c, clients()));
      const bool by_epochs = config_.local_steps_by_client.empty() && config_.local_steps == 0;
      const int64_t units = by_epochs ? config_.local_epochs : a.local_steps;
      const int64_t done = units > 1 ? 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(units - 1))) : 0;
      a.local_steps = by_epochs ? done * (a.local_steps / std::max<int64_t>(1, units)) : done;
    }
    p.selected.push_back(a);
  }
  return p;
}

}  // namespace dtsim::sim
