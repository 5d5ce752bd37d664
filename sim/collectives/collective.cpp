#include "sim/collectives/collective.hpp"

#include <numeric>
#include <stdexcept>

#include "sim/collectives/algorithms.hpp"
#include "sim/collectives/executor.hpp"
#include "sim/collectives/plans.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

Plan flat_plan(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const CollectiveOptions& options) {
  Group group;
  group.members.resize(ranks);
  std::iota(group.members.begin(), group.members.end(), 0);
  switch (algorithm) {
    case Algorithm::Ring:
      group.schedule = kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce
                           ? make_chain_schedule(kind, ranks, bytes, options.root, pipeline_chunks(bytes, options))
                           : make_ring_schedule(kind, ranks, bytes);
      break;
    case Algorithm::DoubleBinaryTree: {  // two phases: reduce, then broadcast
      Plan plan;
      const int chunks = pipeline_chunks(bytes - bytes / 2, options);
      for (const bool broadcast_half : {false, true}) {
        Group half{group.members, make_double_binary_tree_schedule(ranks, bytes, chunks, broadcast_half)};
        plan.phases.push_back({{std::move(half)}});
      }
      return plan;
    }
    case Algorithm::HalvingDoubling: group.schedule = make_halving_doubling_schedule(ranks, bytes); break;
    case Algorithm::Hierarchical: throw std::invalid_argument("flat_plan: hierarchical is not flat");
  }
  Plan plan;
  plan.phases.push_back({{std::move(group)}});
  return plan;
}

std::unique_ptr<Collective> make_collective(CollectiveKind kind, Algorithm algorithm, Fidelity fidelity,
                                            const Platform& platform, const std::string& name,
                                            const CollectiveOptions& options) {
  const int ranks = platform.num_workers();
  if (!is_supported(kind, algorithm))
    throw InputError("collective", "collective.algorithm",
                     std::string("'") + to_string(algorithm) + "' does not implement " + to_string(kind),
                     "use ring (the only algorithm for reduce_scatter, all_gather, broadcast and reduce)");
  if (options.pipeline_chunk_bytes < 1 || options.max_pipeline_chunks < 1)
    throw InputError("collective", "collective.pipeline_chunk", "chunk size and count must be at least 1");
  if ((kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce) &&
      (options.root < 0 || options.root >= ranks))
    throw InputError("collective", "collective.root", "root " + std::to_string(options.root) + " is not a rank");

  PlannedCollective::PlanBuilder builder;
  if (algorithm == Algorithm::Hierarchical) {
    const std::vector<std::vector<int>> nodes = platform.workers_of_node;
    try {
      hierarchical_plan(nodes, 1, options);  // reject unequal nodes here, where the user can be told
    } catch (const std::invalid_argument& e) {
      throw InputError("collective", "collective.algorithm", e.what(), "use ring, tree or halving-doubling");
    }
    builder = [nodes, options](uint64_t bytes) { return hierarchical_plan(nodes, bytes, options); };
  } else {
    builder = [kind, algorithm, ranks, options](uint64_t bytes) {
      return flat_plan(kind, algorithm, ranks, bytes, options);
    };
  }
  return std::make_unique<PlannedCollective>(kind, algorithm, fidelity, platform, name, options, std::move(builder));
}

}  // namespace dtsim::sim
