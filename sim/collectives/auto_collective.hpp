// collective.algorithm = auto: NCCL's choice of algorithm, made for each call size, among the algorithms NCCL
// has for the collective: ring or tree for an allreduce, the ring for reduce-scatter, all-gather, broadcast
// and reduce, and direct sends for all-to-all. NCCL's tuner predicts the time of every algorithm and protocol
// it may run for the call and runs the least; with collective.tuner = nccl dtsim makes NCCL's prediction
// (nccl_tuning.hpp), over the protocols collective.protocol allows (all three when it is auto or none: NCCL
// always runs one), and the chosen candidate then picks the same protocol for itself. With
// collective.tuner = fastest it runs the candidate whose simulated prediction (Collective::predicted_seconds,
// the protocol model included) is least.
//
// Every rank makes the same choice (it depends on the size only), so the candidates' schedules never mix.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/collectives/nccl_tuning.hpp"

namespace dtsim::sim {

class AutoCollective final : public Collective {
 public:
  // `candidates` run the same kind over the same ranks at the same fidelity, with `options`; `topology` is what
  // NCCL's tuner reads of those ranks.
  AutoCollective(CollectiveKind kind, std::vector<std::unique_ptr<Collective>> candidates,
                 const CollectiveOptions& options, const NcclTopology& topology);

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
  std::optional<double> nccl_predicted_seconds(uint64_t bytes) const override {
    return chosen(bytes).nccl_predicted_seconds(bytes);
  }
  void abandon() override;
  void stand_in_for_all() override;
  void share_plans_with(Collective& sibling) override;

  // The candidate that runs a call of `bytes`: NCCL's tuner's choice, or the least simulated prediction (the
  // first on a tie) with collective.tuner = fastest or where NCCL's tuner has no say.
  const Collective& chosen(uint64_t bytes) const;

 private:
  Collective& chosen(uint64_t bytes);
  // NCCL's tuner's candidate for `bytes` (collective.tuner = nccl), nullopt where it has no say.
  std::optional<size_t> nccl_chosen(uint64_t bytes) const;

  CollectiveKind kind_;
  std::vector<std::unique_ptr<Collective>> candidates_;
  CollectiveOptions options_;
  NcclTopology topology_;
  mutable std::map<uint64_t, size_t> choice_;  // by size, once predicted
};

// The algorithms auto picks among for `kind`, in the order ties go.
std::vector<Algorithm> auto_candidates(CollectiveKind kind);

}  // namespace dtsim::sim
