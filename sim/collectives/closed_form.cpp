#include "sim/collectives/closed_form.hpp"

#include <stdexcept>
#include <string>

namespace dtsim::sim {

double closed_form_seconds(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const AlphaBeta& link,
                           const CollectiveOptions& options) {
  if (!is_supported(kind, algorithm) || algorithm == Algorithm::Hierarchical)
    throw std::invalid_argument(std::string("no flat closed form for ") + to_string(algorithm) + " " + to_string(kind));
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  const double s = static_cast<double>(bytes);
  const double a = link.alpha, b = link.bandwidth;
  switch (kind) {
    case CollectiveKind::Allreduce:
      switch (algorithm) {
        case Algorithm::Ring: return 2.0 * (n - 1) * (a + s / (n * b));
        case Algorithm::DoubleBinaryTree: {
          const int k = pipeline_chunks(bytes - bytes / 2, options);
          return double_binary_tree_rounds(ranks, k) * (a + s / (2.0 * k * b));
        }
        case Algorithm::HalvingDoubling: {
          int p = 1, levels = 0;
          while (p * 2 <= ranks) {
            p *= 2;
            ++levels;
          }
          const double fold = ranks == p ? 0.0 : 2.0 * (a + s / b);
          return 2.0 * levels * a + 2.0 * (p - 1) / p * s / b + fold;
        }
        case Algorithm::Hierarchical: break;
      }
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather: return (n - 1) * (a + s / (n * b));
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce: {
      const double k = pipeline_chunks(bytes, options);
      return (n - 2 + k) * (a + s / (k * b));
    }
  }
  throw std::invalid_argument("unreachable closed form");
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
