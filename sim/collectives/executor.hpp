// Runs a Plan at any fidelity on the simulated platform.
//
// Stepwise (executor_stepwise.cpp): each step of the schedule is a put_async + get (+ wait) between the rank actors, mailboxes per
// (receiver, sender, lane) so that a rank expecting a chunk from a given peer cannot get someone else's. A
// rank is the permanent receiver of its mailboxes during the call, so a send moves as soon as it is posted
// (NCCL's receive buffers); the protocol's hop wait is the receiver's alone.
//
// Aggregated: all ranks meet at a barrier (so that no rank finishes before every rank has started, as the
// real data dependencies demand), then per phase each rank starts one flow per peer with the bytes its steps
// send that peer, waits for its flows, meets the others at a barrier and sleeps for what the phase's closed
// form has beyond the flows: phase_seconds − (α + max bytes per rank / B); a phase timed by replay lasts its
// replayed time instead (or longer, if other traffic slows its flows past it). Without other traffic this
// equals stepwise; with other traffic the flows still share links through max-min.
//
// Analytic: a barrier, then the phases' times: their latencies, then their link-bound part (the busiest rank's
// bytes at the phase's bandwidth share), which concurrent analytic calls over the same ranks share equally
// (world/shared_links.hpp), as flows on the same bottleneck would. No flows.
//
// Phase times: plans with a schedule that is timed_by_replay (tree, halving-doubling, the chain, channel
// rings) are replayed (replay_plan) on a fluid model of SimGrid's CM02 sharing on the platform's links
// (fluid_replay.hpp), up to kReplayMaxTransfers; rings follow their hop-by-hop recurrence (ring_seconds); the
// others, and those beyond the replay's limit, take their closed forms.
//
// α and B per phase for the closed forms come from the platform: the flows of the schedule's first step (Schedule::pattern_peer)
// are routed; α is the largest route latency, B the smallest bandwidth share along any of them (a link's
// bandwidth divided by the number of those flows crossing it, unless the link is a fat pipe), times the
// route's bandwidth factor from the platform's calibration (options.bandwidth_efficiency without one).
#pragma once

#include <simgrid/s4u.hpp>

#include <array>
#include <functional>
#include <list>
#include <map>
#include <unordered_map>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/fluid_replay.hpp"
#include "sim/collectives/nccl_tuning.hpp"
#include "sim/collectives/protocol.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/topology/calibration.hpp"

namespace dtsim::sim {

class LinkTraffic;

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
  std::string variant(uint64_t bytes) const override;
  std::optional<double> nccl_predicted_seconds(uint64_t bytes) const override;
  void abandon() override;
  void stand_in_for_all() override;
  void share_plans_with(Collective& sibling) override;

  // A route between two ranks' hosts, as replays use it (the factor is options.bandwidth_efficiency without a
  // calibration).
  using CachedRoute = ReplayRoute;
  const CachedRoute& cached_route(int from, int to) const;

 private:
  struct Prepared {
    Plan plan;
    std::vector<double> phase_seconds;
    std::vector<double> residual;  // aggregated: what each phase's latency terms add to its flows
    std::vector<bool> until_replayed;  // aggregated: the phase is timed by replay (it lasts phase_seconds)
    double total_seconds = 0.0;  // with the protocol's call latency
    double link_seconds = 0.0;   // analytic and aggregated: of total_seconds, what the links' bandwidth sets
    uint64_t total_bytes = 0;
    Protocol protocol = Protocol::None;  // as chosen for this size (never Auto)
    ProtocolCosts costs;
    mutable int users = 0;           // ranks inside run() with this size
    mutable uint64_t last_used = 0;  // for evicting old sizes
  };
  // Where each rank sits in each phase: its group (or −1) and position.
  struct Seat {
    int group = -1;
    int pos = -1;
  };

  // The greatest route latency of each hop class among a phase's pattern flows (−1: none of that class).
  struct PhaseHops {
    double route[3] = {-1.0, -1.0, -1.0};
  };

  const Prepared& prepared(uint64_t bytes) const;
  // Fills p's costs, phase_seconds, residual and total_seconds: `plan` timed under `costs`.
  void time_plan(const Plan& plan, const ProtocolCosts& costs, Prepared& p) const;
  void measure_layout(const Plan& plan);
  // A ring group's time in phase ph (ring_recurrence_seconds over each lane's hops: route latencies, the
  // level's bandwidth share, the protocol's hop latency), the slowest lane's.
  double ring_seconds(const Group& g, size_t ph, const ProtocolCosts& costs) const;
  HopClass hop_class(int from, int to) const;
  // What a step from `from` to `to` waits beyond its route latency under `costs`.
  double hop_extra(int from, int to, const ProtocolCosts& costs) const;
  void run_stepwise(int rank, const Prepared& p);
  void run_steps(int rank, const Prepared& p);
  // The mailboxes the rank receives from in the plan (it is their permanent receiver during a stepwise call).
  std::vector<simgrid::s4u::Mailbox*> incoming_mailboxes(int rank, const Prepared& p);
  void run_lanes(int rank, const Group& group, int pos, const Prepared& p);
  void run_aggregated(int rank, const Prepared& p);
  void run_analytic(int rank, const Prepared& p);
  void record_planned_traffic(LinkTraffic& traffic, const Prepared& p) const;
  // One per (receiver, sender, lane group): groups that share a pair of ranks must not take each other's
  // transfers (a pair meets at most once in a group's step, and both ends agree on the group).
  simgrid::s4u::Mailbox* mailbox(int to, int from, int group = 0);
  simgrid::s4u::Barrier& barrier();

  CollectiveKind kind_;
  Algorithm algorithm_;
  Fidelity requested_;
  Fidelity fidelity_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::shared_ptr<const topology::LinkCalibration> calibration_;  // may be null (see Platform::calibration)
  std::shared_ptr<RouteCache> shared_routes_;  // the platform's, shared with its other collectives
  std::shared_ptr<SharedLinks> shared_links_;  // the platform's; null: analytic calls never share links
  std::string name_;
  CollectiveOptions options_;
  PlanBuilder builder_;
  uint64_t auto_stepwise_flows_ = 0;
  uint64_t auto_aggregated_flows_ = 0;

  // Filled on first use (simulations are single-threaded), independent of the message size.
  std::vector<std::vector<Seat>> seats_;  // [phase][rank]
  std::vector<AlphaBeta> links_;          // [phase]
  std::vector<PhaseHops> phase_hops_;     // [phase]
  std::vector<int> fanout_;               // [phase]: most pattern flows of one rank
  std::vector<std::array<AlphaBeta, 2>> level_links_;  // [phase]: inside a node, between nodes
  std::vector<std::unordered_map<uint64_t, double>> pattern_rates_;  // [phase][(from, to)]: each pattern flow's share
  std::vector<int> node_of_;              // each rank's node
  double tcp_gamma_ = 0.0;                // SimGrid's network/TCP-gamma: a flow's rate ≤ it / (2 · route latency)
  HopContext hop_context_;
  bool any_pcie_hop_ = false;
  NcclTopology nccl_topology_;  // what NCCL's tuner reads (collective.tuner = nccl, protocol auto)
  mutable std::unordered_map<uint64_t, CachedRoute> routes_;  // (from, to), filled as steps and replays need them
  // Above this many transfers a schedule is timed by its closed form instead of a replay.
  static constexpr uint64_t kReplayMaxTransfers = 1'000'000;
  // Plans by message size; a few are kept per collective sharing them (a plan can hold every rank's
  // steps), never one still in use.
  static constexpr size_t kCachedSizes = 4;
  struct PlanCache {
    std::map<uint64_t, Prepared> by_size;
    uint64_t uses = 0;
    size_t capacity = kCachedSizes;
  };
  std::shared_ptr<PlanCache> plans_ = std::make_shared<PlanCache>();
  std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes_;
  simgrid::s4u::BarrierPtr barrier_;
  bool stand_in_ = false;  // rank 0 calls alone (stand_in_for_all)
  uint64_t bytes_sent_ = 0;
  // Transfers started and not yet waited for (abandon() cancels them).
  std::list<simgrid::s4u::CommPtr> in_flight_;
};

}  // namespace dtsim::sim
