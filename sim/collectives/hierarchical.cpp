#include <map>
#include <stdexcept>
#include <string>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/config/collective_algorithms.hpp"

namespace dtsim::sim {

namespace {

// Why the hierarchical allreduce cannot run over `nodes` with these options, or "".
std::string hierarchical_misfit(const NodeRanks& nodes, const CollectiveOptions& options) {
  if (nodes.empty()) return "hierarchical allreduce: the platform has no nodes";
  const size_t g = nodes.front().size();
  for (const auto& node : nodes)
    if (node.size() != g)
      return "hierarchical allreduce needs the same number of ranks on every node (found " + std::to_string(g) +
             " and " + std::to_string(node.size()) + ")";
  const AlgorithmDescriptor& inter = algorithm_descriptor(options.inter_node);
  if (!inter.flat || !inter.implements(CollectiveKind::Allreduce))
    return std::string("the inter-node algorithm of the hierarchical allreduce cannot be ") + inter.name;
  return "";
}

}  // namespace

Plan hierarchical_plan(const std::vector<std::vector<int>>& nodes, uint64_t bytes, const CollectiveOptions& options) {
  const std::string misfit = hierarchical_misfit(nodes, options);
  if (!misfit.empty()) throw std::invalid_argument(misfit);
  const int g = static_cast<int>(nodes.front().size());
  const int node_count = static_cast<int>(nodes.size());

  Plan plan;
  const auto intra_phase = [&](CollectiveKind kind) {
    const auto schedule = make_ring_schedule(kind, g, bytes, /*ag_offset=*/1);
    Phase phase;
    for (const auto& node : nodes) phase.groups.push_back({node, schedule});
    return phase;
  };
  plan.phases.push_back(intra_phase(CollectiveKind::ReduceScatter));

  // Chunks differ by at most a byte, so the inter-node groups run at most two distinct plans, all of the same
  // number of phases.
  std::map<uint64_t, Plan> by_size;
  std::vector<uint64_t> piece_of(g);
  for (int j = 0; j < g; ++j) {
    piece_of[j] = chunk_bytes(bytes, g, (j + 1) % g);
    if (!by_size.count(piece_of[j]))
      by_size[piece_of[j]] = flat_plan(CollectiveKind::Allreduce, options.inter_node, node_count, piece_of[j], options);
  }
  const size_t inter_phases = by_size.begin()->second.phases.size();
  for (size_t q = 0; q < inter_phases; ++q) {
    Phase across;
    for (int j = 0; j < g; ++j) {
      Group group;
      for (const auto& node : nodes) group.members.push_back(node[j]);
      group.schedule = by_size[piece_of[j]].phases[q].groups.front().schedule;
      across.groups.push_back(std::move(group));
    }
    plan.phases.push_back(std::move(across));
  }
  plan.phases.push_back(intra_phase(CollectiveKind::AllGather));
  return plan;
}

// Its α-β time depends on two levels of links, so it has no closed form of one link
// (hierarchical_closed_form_seconds takes both).
AlgorithmImplementation hierarchical_implementation() {
  AlgorithmImplementation hierarchical;
  hierarchical.algorithm = Algorithm::Hierarchical;
  hierarchical.plan = [](CollectiveKind, int, const NodeRanks& nodes, uint64_t bytes, const CollectiveOptions& options) {
    return hierarchical_plan(nodes, bytes, options);
  };
  hierarchical.misfit = hierarchical_misfit;
  hierarchical.closed_form = nullptr;
  return hierarchical;
}

}  // namespace dtsim::sim
