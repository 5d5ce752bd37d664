// Who takes part in a federated round and how much work each is asked to do: availability, client
// sampling, protocol stragglers and local step counts. Pure (no SimGrid): every decision is a function of
// (run.seed, purpose, round, client) and of the simulated time the round starts at, never of the order in
// which actors run, so tests can check the frequencies directly.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/world/faults.hpp"
#include "sim/config/fl_config.hpp"

namespace dtsim::sim {

struct ClientAssignment {
  int client = 0;
  int64_t local_steps = 0;  // what the client is asked to do this round
  bool straggler = false;   // a protocol straggler (fl.straggler_fraction): less work, or dropped
};

struct RoundPlan {
  int64_t round = 0;
  int available = 0;                       // clients online and reachable at the round's start
  int keep = 0;                            // the round aggregates at most this many reports (K)
  std::vector<ClientAssignment> selected;  // ascending client id
};

class RoundPlanner {
 public:
  // `samples[c]` is client c's training sample count: it sets the weighted sampling probabilities and, with
  // `batch`, the steps of a local epoch (⌈samples / batch⌉, at least one).
  RoundPlanner(const FlConfig& config, uint64_t seed, std::vector<double> samples, int batch,
               const FaultSchedule& faults);

  int clients() const { return static_cast<int>(samples_.size()); }
  // ⌈samples / batch⌉, at least one: the mini-batches of one local epoch of `client`.
  int64_t steps_per_epoch(int client) const;
  // The local steps of a full round's work for `client`.
  int64_t full_steps(int client) const;

  // Online at `t` in round `round`: inside its availability windows (if the trace lists it), up and reachable
  // (host and link), and drawn online with probability fl.availability.
  bool available(int client, int64_t round, double t) const;
  // The first moment ≥ t at which `client` stops being reachable: its host or link goes down or its
  // availability window closes (kNever if it never does).
  double lost_at(int client, double t) const;

  // The first moment after t at which some client's host, link or availability window changes (kNever if
  // none does): when an empty round may stop being empty.
  double next_availability_change(double t) const;

  // The round's participants: ⌈K(1+f)⌉ of the available clients (all of them if fewer), uniformly or with
  // probability ∝ samples, without replacement; then the protocol stragglers among them.
  RoundPlan plan(int64_t round, double t) const;

  // Selection without replacement of `count` of `candidates` (ascending ids): uniform (a seeded shuffle), or
  // successive sampling ∝ weight (Efraimidis–Spirakis keys, equivalent to drawing one client at a time with
  // probability ∝ weight among those left). Returns ascending ids.
  std::vector<int> sample(const std::vector<int>& candidates, int count, int64_t round) const;

 private:
  FlConfig config_;
  uint64_t seed_;
  std::vector<double> samples_;
  int batch_;
  const FaultSchedule& faults_;
  std::vector<std::vector<AvailabilityWindow>> windows_;  // per client; empty = always online
  std::vector<bool> traced_;
};

// How many clients a round samples: ⌈K(1 + f)⌉, capped by the number of clients.
int overcommitted_count(int k, double overcommit, int clients);
// How many of n selected clients straggle: n − round(n·(1 − fraction)), as in the FedProx reference, where
// round(n·(1 − fraction)) clients are the ones that do all their work.
int straggler_count(int n, double fraction);

}  // namespace dtsim::sim
