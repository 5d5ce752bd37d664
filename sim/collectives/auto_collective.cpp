#include "sim/collectives/auto_collective.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/registry.hpp"

namespace dtsim::sim {

std::vector<Algorithm> auto_candidates(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::Allreduce: return {Algorithm::Ring, Algorithm::DoubleBinaryTree};
    case CollectiveKind::AllToAll: return {Algorithm::Direct};
    default: return {Algorithm::Ring};
  }
}

AutoCollective::AutoCollective(CollectiveKind kind, std::vector<std::unique_ptr<Collective>> candidates,
                               const CollectiveOptions& options, const NcclTopology& topology)
    : kind_(kind), candidates_(std::move(candidates)), options_(options), topology_(topology) {
  if (candidates_.empty()) throw std::invalid_argument("AutoCollective needs a candidate");
}

const Collective& AutoCollective::chosen(uint64_t bytes) const {
  auto it = choice_.find(bytes);
  if (it == choice_.end()) {
    const std::optional<size_t> nccl = nccl_chosen(bytes);
    size_t best = nccl.value_or(0);
    if (!nccl)
      for (size_t c = 1; c < candidates_.size(); ++c)
        if (candidates_[c]->predicted_seconds(bytes) < candidates_[best]->predicted_seconds(bytes)) best = c;
    it = choice_.emplace(bytes, best).first;
  }
  return *candidates_[it->second];
}

std::optional<size_t> AutoCollective::nccl_chosen(uint64_t bytes) const {
  if (options_.tuner != CollectiveTuner::Nccl) return std::nullopt;
  std::vector<Algorithm> tuned;
  for (const auto& c : candidates_)
    if (nccl_tunes(kind_, c->algorithm())) tuned.push_back(c->algorithm());
  const std::vector<Protocol> protocols =
      options_.protocol == Protocol::Auto || options_.protocol == Protocol::None
          ? std::vector<Protocol>{Protocol::LL, Protocol::LL128, Protocol::Simple}
          : std::vector<Protocol>{options_.protocol};
  const std::optional<NcclEstimate> e = nccl_choice(kind_, bytes, topology_, tuned, protocols);
  if (!e) return std::nullopt;
  for (size_t c = 0; c < candidates_.size(); ++c)
    if (candidates_[c]->algorithm() == e->algorithm) return c;
  return std::nullopt;
}

Collective& AutoCollective::chosen(uint64_t bytes) {
  return const_cast<Collective&>(static_cast<const AutoCollective&>(*this).chosen(bytes));
}

uint64_t AutoCollective::bytes_sent() const {
  uint64_t sum = 0;
  for (const auto& c : candidates_) sum += c->bytes_sent();
  return sum;
}

std::string AutoCollective::describe() const {
  const bool nccl = options_.tuner == CollectiveTuner::Nccl &&
                    std::any_of(candidates_.begin(), candidates_.end(),
                                [&](const auto& c) { return nccl_tunes(kind_, c->algorithm()); });
  std::string line = nccl ? "auto (NCCL's tuner per size among" : "auto (the least predicted time per size among";
  for (size_t c = 0; c < candidates_.size(); ++c)
    line += std::string(c == 0 ? " " : c + 1 == candidates_.size() ? " and " : ", ") + to_string(candidates_[c]->algorithm());
  line += nccl ? ", seeing " + describe_topology(topology_) + ")" : ")";
  for (const auto& c : candidates_) line += "; " + c->describe();
  return line;
}

void AutoCollective::abandon() {
  for (const auto& c : candidates_) c->abandon();
}

void AutoCollective::stand_in_for_all() {
  for (const auto& c : candidates_) c->stand_in_for_all();  // they share one fidelity
}

void AutoCollective::share_plans_with(Collective& sibling) {
  auto* other = dynamic_cast<AutoCollective*>(&sibling);
  if (other == nullptr || other->candidates_.size() != candidates_.size()) return;
  for (size_t i = 0; i < candidates_.size(); ++i) candidates_[i]->share_plans_with(*other->candidates_[i]);
}

AlgorithmImplementation auto_implementation() {
  AlgorithmImplementation a;
  a.algorithm = Algorithm::Auto;
  a.plan = nullptr;
  a.misfit = nullptr;
  a.closed_form = nullptr;
  a.candidates = auto_candidates;
  return a;
}

}  // namespace dtsim::sim
