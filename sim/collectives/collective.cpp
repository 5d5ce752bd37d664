#include "sim/collectives/collective.hpp"

#include <algorithm>

#include "sim/collectives/auto_collective.hpp"
#include "sim/collectives/executor.hpp"
#include "sim/collectives/registry.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

std::unique_ptr<Collective> make_collective(CollectiveKind kind, Algorithm algorithm, Fidelity fidelity,
                                            const Platform& platform, const std::string& name,
                                            const CollectiveOptions& options) {
  const int ranks = platform.num_workers();
  if (std::optional<CollectiveError> refused = refusal(kind, algorithm, platform, options)) throw *refused;
  if (options.pipeline_chunk_bytes < 1 || options.max_pipeline_chunks < 1)
    throw CollectiveError(CollectiveError::Cause::PipelineChunks, "chunk size and count must be at least 1");
  if ((kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce) &&
      (options.root < 0 || options.root >= ranks))
    throw CollectiveError(CollectiveError::Cause::Root, "root " + std::to_string(options.root) + " is not a rank");

  if (const auto candidates = implementation_of(algorithm).candidates) {
    // Auto: every candidate that can serve the group, at one fidelity (the coarsest any of them resolves to,
    // so that a size's choice never changes how finely the call is simulated).
    const auto build = [&](Fidelity f) {
      std::vector<std::unique_ptr<Collective>> built;
      for (const Algorithm a : candidates(kind))
        if (!refusal(kind, a, platform, options))
          built.push_back(make_collective(kind, a, f, platform, name + "/" + to_string(a), options));
      return built;
    };
    std::vector<std::unique_ptr<Collective>> built = build(fidelity);
    Fidelity coarsest = Fidelity::Stepwise;
    for (const auto& c : built) coarsest = std::max(coarsest, c->fidelity());
    for (const auto& c : built)
      if (c->fidelity() != coarsest) {
        built = build(coarsest);
        break;
      }
    return std::make_unique<AutoCollective>(kind, std::move(built), options,
                                            nccl_topology(platform.workers_of_node, options));
  }
  const auto plan = implementation_of(algorithm).plan;
  PlannedCollective::PlanBuilder builder = [plan, kind, ranks, nodes = platform.workers_of_node,
                                            options](uint64_t bytes) { return plan(kind, ranks, nodes, bytes, options); };
  return std::make_unique<PlannedCollective>(kind, algorithm, fidelity, platform, name, options, std::move(builder));
}

}  // namespace dtsim::sim
