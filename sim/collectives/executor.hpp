// Runs a Plan at any fidelity on the simulated platform.
//
// Stepwise: each step of the schedule is a put_async + get (+ wait) between the rank actors, mailboxes per
// (receiver, sender) pair so that a rank expecting a chunk from a given peer cannot get someone else's.
//
// Aggregated: all ranks meet at a barrier (so that no rank finishes before every rank has started, as the
// real data dependencies demand), then per phase each rank starts one flow per peer with the bytes its steps
// send that peer, waits for its flows, meets the others at a barrier and sleeps for what the phase's closed
// form has beyond the flows: phase_seconds − (α + max bytes per rank / B). Without other traffic this equals
// stepwise; with other traffic the flows still share links through max-min.
//
// Analytic: a barrier, then sleep_for(closed form). No flows.
//
// α and B per phase come from the platform: the flows of the schedule's first step (Schedule::pattern_peer)
// are routed; α is the largest route latency, B the smallest bandwidth share along any of them (a link's
// bandwidth divided by the number of those flows crossing it, unless the link is a fat pipe), times
// options.bandwidth_efficiency.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <list>
#include <map>
#include <unordered_map>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/schedule.hpp"

namespace dtsim::sim {

class PlannedCollective final : public Collective {
 public:
  using PlanBuilder = std::function<Plan(uint64_t bytes)>;

  PlannedCollective(CollectiveKind kind, Algorithm algorithm, Fidelity requested, const Platform& platform,
                    std::string name, const CollectiveOptions& options, PlanBuilder builder);

  void run(int rank, uint64_t bytes) override;
  uint64_t bytes_sent() const override { return bytes_sent_; }
  uint64_t bytes_per_call(uint64_t bytes) const override { return prepared(bytes).total_bytes; }
  double predicted_seconds(uint64_t bytes) const override { return prepared(bytes).total_seconds; }
  CollectiveKind kind() const override { return kind_; }
  Algorithm algorithm() const override { return algorithm_; }
  Fidelity fidelity() const override { return fidelity_; }
  int ranks() const override { return static_cast<int>(hosts_.size()); }
  std::string describe() const override;
  void abandon() override;

 private:
  struct Prepared {
    Plan plan;
    std::vector<double> phase_seconds;
    std::vector<double> residual;  // aggregated: what each phase's latency terms add to its flows
    double total_seconds = 0.0;
    uint64_t total_bytes = 0;
    mutable int users = 0;           // ranks inside run() with this size
    mutable uint64_t last_used = 0;  // for evicting old sizes
  };
  // Where each rank sits in each phase: its group (or −1) and position.
  struct Seat {
    int group = -1;
    int pos = -1;
  };

  const Prepared& prepared(uint64_t bytes) const;
  void measure_layout(const Plan& plan);
  void run_stepwise(int rank, const Prepared& p);
  void run_aggregated(int rank, const Prepared& p);
  void run_analytic(int rank, const Prepared& p);
  simgrid::s4u::Mailbox* mailbox(int to, int from);
  simgrid::s4u::Barrier& barrier();

  CollectiveKind kind_;
  Algorithm algorithm_;
  Fidelity requested_;
  Fidelity fidelity_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::string name_;
  CollectiveOptions options_;
  PlanBuilder builder_;
  uint64_t auto_stepwise_flows_ = 0;
  uint64_t auto_aggregated_flows_ = 0;

  // Filled on first use (simulations are single-threaded), independent of the message size.
  std::vector<std::vector<Seat>> seats_;  // [phase][rank]
  std::vector<AlphaBeta> links_;          // [phase]
  // Plans by message size; a few are kept (a plan can hold every rank's steps), never one still in use.
  static constexpr size_t kCachedSizes = 4;
  mutable std::map<uint64_t, Prepared> cache_;
  mutable uint64_t uses_ = 0;
  std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  simgrid::s4u::BarrierPtr barrier_;
  uint64_t bytes_sent_ = 0;
  // Transfers started and not yet waited for (abandon() cancels them).
  std::list<simgrid::s4u::CommPtr> in_flight_;
};

}  // namespace dtsim::sim
