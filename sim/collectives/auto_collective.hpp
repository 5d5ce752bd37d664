// collective.algorithm = auto: NCCL's choice of algorithm, made for each call size. NCCL's tuner predicts
// the time of every algorithm and protocol it may run for the call (a latency plus bytes over a bandwidth)
// and runs the fastest; dtsim does the same with its own predictions (Collective::predicted_seconds, the
// protocol model included), among the algorithms NCCL has for the collective: ring or tree for an allreduce,
// the ring for reduce-scatter, all-gather, broadcast and reduce, and direct sends for all-to-all.
//
// Every rank makes the same choice (it depends on the size only), so the candidates' schedules never mix.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace dtsim::sim {

class AutoCollective final : public Collective {
 public:
  // `candidates` run the same kind over the same ranks at the same fidelity.
  AutoCollective(CollectiveKind kind, std::vector<std::unique_ptr<Collective>> candidates);

  void run(int rank, uint64_t bytes) override { chosen(bytes).run(rank, bytes); }
  uint64_t bytes_sent() const override;
  uint64_t bytes_per_call(uint64_t bytes) const override { return chosen(bytes).bytes_per_call(bytes); }
  double predicted_seconds(uint64_t bytes) const override { return chosen(bytes).predicted_seconds(bytes); }
  CollectiveKind kind() const override { return kind_; }
  Algorithm algorithm() const override { return Algorithm::Auto; }
  Fidelity fidelity() const override { return candidates_.front()->fidelity(); }
  int ranks() const override { return candidates_.front()->ranks(); }
  std::string describe() const override;
  std::string variant(uint64_t bytes) const override { return chosen(bytes).variant(bytes); }
  void abandon() override;
  void stand_in_for_all() override;
  void share_plans_with(Collective& sibling) override;

  // The candidate that runs a call of `bytes`: the least predicted time, the first on a tie.
  const Collective& chosen(uint64_t bytes) const;

 private:
  Collective& chosen(uint64_t bytes);

  CollectiveKind kind_;
  std::vector<std::unique_ptr<Collective>> candidates_;
  mutable std::map<uint64_t, size_t> choice_;  // by size, once predicted
};

// The algorithms auto picks among for `kind`, in the order ties go.
std::vector<Algorithm> auto_candidates(CollectiveKind kind);

}  // namespace dtsim::sim
