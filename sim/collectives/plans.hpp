// Plans: which groups run which schedule, phase by phase.
#pragma once

#include <memory>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace dtsim::sim {

// One phase, one group of all `ranks` ranks running `schedule`.
Plan single_group_plan(int ranks, std::shared_ptr<const Schedule> schedule);

// The plan of a flat algorithm (one group of all `ranks` ranks; not Hierarchical), from its registry entry.
// Throws std::invalid_argument for an algorithm that is not flat or does not implement `kind`.
Plan flat_plan(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const CollectiveOptions& options);

// Hierarchical allreduce over `nodes` (the ranks of each node, ascending; all nodes the same size g):
//   1. ring reduce-scatter inside every node: local rank j ends with chunk (j+1) mod g of the node's sum;
//   2. options.inter_node allreduce of that chunk among the ranks with local index j of every node
//      (g groups of G ranks at once);
//   3. ring all-gather inside every node.
// Throws std::invalid_argument when the nodes differ in size.
Plan hierarchical_plan(const std::vector<std::vector<int>>& nodes, uint64_t bytes, const CollectiveOptions& options);

}  // namespace dtsim::sim
