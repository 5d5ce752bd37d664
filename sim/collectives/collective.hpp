// Collectives over the simulated cluster. They move simulated bytes, not values: the strategy that calls
// them sums the real data itself, in rank order, once the collective is complete (so floating-point results
// never depend on the simulated schedule).
//
//   auto ar = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, Fidelity::Auto, platform, "grads");
//   // in rank r's actor, every rank with the same size:
//   ar->run(r, bytes);   // returns when rank r holds the result
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/collective_error.hpp"
#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

struct Platform;

class Collective {
 public:
  virtual ~Collective() = default;

  // Rank `rank`'s part of one collective of `bytes` bytes (the whole buffer, as nccl-tests counts it: the
  // gathered size for all-gather, the input size for reduce-scatter). Every rank of the platform calls it
  // from its own actor, in the same order of calls and with the same sizes; it returns when this rank is done.
  virtual void run(int rank, uint64_t bytes) = 0;

  virtual uint64_t bytes_sent() const = 0;                    // by all ranks, all calls so far
  virtual uint64_t bytes_per_call(uint64_t bytes) const = 0;  // by all ranks in one call of `bytes`
  // The α-β prediction on this platform (what the analytic fidelity charges), α and B read from the routes
  // the algorithm uses, see executor.hpp.
  virtual double predicted_seconds(uint64_t bytes) const = 0;

  virtual CollectiveKind kind() const = 0;
  virtual Algorithm algorithm() const = 0;
  virtual Fidelity fidelity() const = 0;  // as resolved: never Auto
  virtual int ranks() const = 0;
  // One line for people, e.g. "ring allreduce, stepwise (auto: 2 240 flows per call), alpha 1.33 us, B 24 GB/s".
  virtual std::string describe() const = 0;
  // What runs for a call of `bytes` bytes: the algorithm and, with a protocol model, the protocol chosen for
  // that size, e.g. "ring/ll128".
  virtual std::string variant(uint64_t bytes) const = 0;
  // NCCL's own prediction for that variant (its tuning model, nccl_tuning.hpp), in seconds: what NCCL expects
  // the call to take, beside the simulated time. Nullopt where the variant is none NCCL predicts (an algorithm
  // NCCL does not have, all-to-all, no protocol).
  virtual std::optional<double> nccl_predicted_seconds(uint64_t) const { return std::nullopt; }

  // Cancels the transfers in flight when a member has failed and the caller is about to kill the other
  // members' actors: a transfer destroyed while still running is a SimGrid error, a cancelled one is not.
  virtual void abandon() {}
  // One rank standing in for all. Under the analytic fidelity a call is a barrier and then the same sleep on
  // every rank, so when every rank reaches every call at the same simulated time (identical ranks with
  // nothing to tell them apart, as in timing-only data parallelism on one kind of GPU) the barrier releases
  // each rank the moment it arrives, and one rank's calls take exactly the time they take with all ranks
  // present. At any other fidelity flows couple the ranks, and it cannot.
  bool can_stand_in_for_all() const { return fidelity() == Fidelity::Analytic; }
  // Requires can_stand_in_for_all() (else throws std::logic_error). Afterwards only rank 0 calls run(), and
  // bytes_sent() still counts every rank's bytes.
  virtual void stand_in_for_all() = 0;
  // This collective was made exactly as `sibling` was (kind, algorithm, fidelity, platform, options), under
  // another name: from now on the two share their timed plans by message size, so that the buckets of a
  // step (hundreds of collectives of a few sizes) time each size once. Ignored where `sibling` differs.
  virtual void share_plans_with(Collective& sibling) = 0;
};

// Throws CollectiveError for an algorithm that does not implement `kind` or cannot serve the platform's
// ranks (see can_serve, registry.hpp: a hierarchical allreduce on nodes of different sizes), and for options
// out of range. Names its mailboxes after `name`, which must be unique in the
// simulation. Call it after the platform is built; its runs happen inside actors.
std::unique_ptr<Collective> make_collective(CollectiveKind kind, Algorithm algorithm, Fidelity fidelity,
                                            const Platform& platform, const std::string& name,
                                            const CollectiveOptions& options = {});

// Auto's choice: stepwise while the stepwise fidelity simulates at most kAutoMaxFlows transfers per call
// (≈3 µs of wall time each: ≤ 0.5 s per collective, e.g. a ring allreduce up to N = 274), else aggregated
// while that needs at most kAutoMaxFlows flows (N up to ~150 000 for a ring), else analytic. With
// `calls_per_step` calls in a step (CollectiveOptions::calls_per_step), the budget is for all of them.
// `stepwise_cap` (CollectiveOptions::auto_stepwise_cap), when not 0, lowers the stepwise budget per call.
inline constexpr uint64_t kAutoMaxFlows = 150'000;
Fidelity resolve_fidelity(Fidelity requested, uint64_t stepwise_flows, uint64_t aggregated_flows,
                          uint64_t calls_per_step = 1, uint64_t stepwise_cap = 0);

// What a stepwise transfer costs in wall time, in FLOPs of the CPU backend's numerics, measured with the
// quickstart on the 2-core development machine as the difference between stepwise and aggregated runs
// (docs/workloads.md, "The simulator's overhead"): 1.6e5 at 64 workers (2.1 µs a transfer against 77 GFLOP/s
// of gradients), 1.8e5 at 8 (4.3 µs against 42 GFLOP/s on a busier day). The larger.
inline constexpr double kNumericsFlopsPerStepwiseTransfer = 1.8e5;
// The share of the numerics' wall time the stepwise transfers may add: the overhead goal's 10 % less the ~3 %
// a run costs beyond its transfers (the quickstart aggregated: 1.02 to 1.04 times its bare numerics).
inline constexpr double kStepwiseShareOfNumerics = 0.07;
// The stepwise transfers per step a run may simulate whose numerics compute `numerics_flops_per_step` FLOPs
// per step (every worker's gradients): at least 1. Counted in FLOPs, not measured time, so that the choice,
// and hence the simulated times, do not depend on the machine.
uint64_t numerics_stepwise_cap(double numerics_flops_per_step);

}  // namespace dtsim::sim
