#include "sim/collectives/registry.hpp"

#include <numeric>
#include <stdexcept>
#include <utility>

#include "models/name_table.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

const std::vector<AlgorithmImplementation>& algorithm_implementations() {
  static const std::vector<AlgorithmImplementation> registry = {
      ring_implementation(),
      tree_implementation(),
      halving_doubling_implementation(),
      hierarchical_implementation(),
      direct_implementation(),
      auto_implementation(),
  };
  return registry;
}

const AlgorithmImplementation& implementation_of(Algorithm algorithm) {
  for (const AlgorithmImplementation& i : algorithm_implementations())
    if (i.algorithm == algorithm) return i;
  throw std::logic_error(std::string("no implementation of the collective algorithm '") + to_string(algorithm) + "'");
}

namespace {

std::vector<std::string> names_of(const std::vector<Algorithm>& algorithms) {
  std::vector<std::string> names;
  for (const Algorithm a : algorithms) names.emplace_back(to_string(a));
  return names;
}

// The algorithms with a plan of their own that implement `kind` (auto, which picks among them, left out).
std::vector<Algorithm> planned_implementing(CollectiveKind kind) {
  std::vector<Algorithm> able;
  for (const Algorithm a : algorithms_implementing(kind))
    if (!implementation_of(a).candidates) able.push_back(a);
  return able;
}

// "use ring (the only algorithm for reduce_scatter, all_gather, broadcast and reduce)", or, when several
// implement `kind`, "use ring, tree or …".
std::string unsupported_hint(CollectiveKind kind) {
  const std::vector<Algorithm> able = planned_implementing(kind);
  if (able.size() != 1) return "use " + models::join_names(names_of(able));
  std::vector<std::string> kinds_of_one;  // the kinds only that algorithm implements
  for (const CollectiveKind k : collective_kind_table().values())
    if (planned_implementing(k) == able) kinds_of_one.emplace_back(to_string(k));
  return "use " + std::string(to_string(able.front())) + " (the only algorithm for " +
         models::join_names(kinds_of_one, ", ", " and ") + ")";
}

// The algorithms that implement `kind` on any group: what to use instead of one that cannot serve it.
std::string misfit_hint(CollectiveKind kind) {
  std::vector<Algorithm> able;
  for (const Algorithm a : planned_implementing(kind))
    if (!implementation_of(a).misfit) able.push_back(a);
  return "use " + models::join_names(names_of(able));
}

}  // namespace

std::optional<CollectiveError> refusal(CollectiveKind kind, Algorithm algorithm, const Platform& group,
                                       const CollectiveOptions& options) {
  if (!algorithm_descriptor(algorithm).implements(kind))
    return CollectiveError(CollectiveError::Cause::Algorithm,
                           std::string("'") + to_string(algorithm) + "' does not implement " + to_string(kind),
                           unsupported_hint(kind));
  const AlgorithmImplementation& implementation = implementation_of(algorithm);
  if (implementation.candidates) {  // a chooser serves a group when one of its candidates can
    std::optional<CollectiveError> first;
    for (const Algorithm candidate : implementation.candidates(kind)) {
      std::optional<CollectiveError> why = refusal(kind, candidate, group, options);
      if (!why) return std::nullopt;
      if (!first) first = std::move(why);
    }
    return first;
  }
  if (implementation.misfit) {
    const std::string why = implementation.misfit(group.workers_of_node, options);
    if (!why.empty()) return CollectiveError(CollectiveError::Cause::Algorithm, why, misfit_hint(kind));
  }
  return std::nullopt;
}

Plan single_group_plan(int ranks, std::shared_ptr<const Schedule> schedule) {
  Group group;
  group.members.resize(static_cast<size_t>(ranks));
  std::iota(group.members.begin(), group.members.end(), 0);
  group.schedule = std::move(schedule);
  Plan plan;
  plan.phases.push_back({{std::move(group)}});
  return plan;
}

Plan flat_plan(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const CollectiveOptions& options) {
  const AlgorithmDescriptor& descriptor = algorithm_descriptor(algorithm);
  if (!descriptor.flat) throw std::invalid_argument(std::string("flat_plan: ") + descriptor.name + " is not flat");
  if (!descriptor.implements(kind))
    throw std::invalid_argument(std::string("flat_plan: ") + descriptor.name + " does not implement " + to_string(kind));
  return implementation_of(algorithm).plan(kind, ranks, {}, bytes, options);
}

bool can_serve(CollectiveKind kind, Algorithm algorithm, const Platform& group) {
  return !refusal(kind, algorithm, group).has_value();
}

}  // namespace dtsim::sim
