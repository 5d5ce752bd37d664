#include <map>
#include <stdexcept>
#include <string>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/closed_form.hpp"
#include "sim/collectives/plans.hpp"

namespace dtsim::sim {

Plan hierarchical_plan(const std::vector<std::vector<int>>& nodes, uint64_t bytes, const CollectiveOptions& options) {
  if (nodes.empty()) throw std::invalid_argument("hierarchical allreduce: the platform has no nodes");
  const int g = static_cast<int>(nodes.front().size());
  for (const auto& node : nodes)
    if (static_cast<int>(node.size()) != g)
      throw std::invalid_argument("hierarchical allreduce needs the same number of ranks on every node (found " +
                                  std::to_string(g) + " and " + std::to_string(node.size()) + ")");
  if (options.inter_node == Algorithm::Hierarchical)
    throw std::invalid_argument("the inter-node algorithm of the hierarchical allreduce cannot be hierarchical");
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

}  // namespace dtsim::sim
