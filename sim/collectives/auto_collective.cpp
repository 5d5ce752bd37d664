#include "sim/collectives/auto_collective.hpp"

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

AutoCollective::AutoCollective(CollectiveKind kind, std::vector<std::unique_ptr<Collective>> candidates)
    : kind_(kind), candidates_(std::move(candidates)) {
  if (candidates_.empty()) throw std::invalid_argument("AutoCollective needs a candidate");
}

const Collective& AutoCollective::chosen(uint64_t bytes) const {
  auto it = choice_.find(bytes);
  if (it == choice_.end()) {
    size_t best = 0;
    for (size_t c = 1; c < candidates_.size(); ++c)
      if (candidates_[c]->predicted_seconds(bytes) < candidates_[best]->predicted_seconds(bytes)) best = c;
    it = choice_.emplace(bytes, best).first;
  }
  return *candidates_[it->second];
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
  std::string line = "auto (the least predicted time per size among";
  for (size_t c = 0; c < candidates_.size(); ++c)
    line += std::string(c == 0 ? " " : c + 1 == candidates_.size() ? " and " : ", ") + to_string(candidates_[c]->algorithm());
  line += ")";
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
