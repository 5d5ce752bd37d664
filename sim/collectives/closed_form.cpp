#include "sim/collectives/closed_form.hpp"

#include <stdexcept>
#include <string>

#include "sim/collectives/registry.hpp"
#include "sim/config/collective_algorithms.hpp"

namespace dtsim::sim {

double closed_form_seconds(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const AlphaBeta& link,
                           const CollectiveOptions& options) {
  const auto closed_form = implementation_of(algorithm).closed_form;
  if (!algorithm_descriptor(algorithm).implements(kind) || !closed_form)
    throw std::invalid_argument(std::string("no flat closed form for ") + to_string(algorithm) + " " + to_string(kind));
  if (ranks <= 1) return 0.0;
  return closed_form(kind, ranks, bytes, link, options);
}

double hierarchical_closed_form_seconds(int gpus_per_node, int nodes, uint64_t bytes, const AlphaBeta& intra,
                                        const AlphaBeta& inter, const CollectiveOptions& options) {
  const double intra_phase = closed_form_seconds(CollectiveKind::ReduceScatter, Algorithm::Ring, gpus_per_node, bytes, intra);
  // Local rank j carries chunk j+1 of the reduce-scatter; with g dividing S they are all S/g.
  const uint64_t piece = gpus_per_node > 0 ? bytes / static_cast<uint64_t>(gpus_per_node) : bytes;
  const double inter_phase =
      closed_form_seconds(CollectiveKind::Allreduce, options.inter_node, nodes, piece, inter, options);
  return 2.0 * intra_phase + inter_phase;
}

}  // namespace dtsim::sim
