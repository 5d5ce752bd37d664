// How each collective algorithm is carried out: its plan builder, the groups of ranks it cannot serve and its
// α-β closed form, one entry per Algorithm. Names, implemented kinds and the keys an algorithm reads are the
// config layer's (sim/config/collective_algorithms.hpp); everything that depends on which algorithm runs
// (make_collective, flat_plan, closed_form_seconds, can_serve) dispatches through these two registries.
//
// Adding an algorithm: its descriptor in the config layer, one file here that defines its
// …_implementation(), and one line in algorithm_implementations() (registry.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/collectives/collective_error.hpp"
#include "sim/collectives/schedule.hpp"
#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

struct Platform;

// The ranks of each node, ascending (Platform::workers_of_node).
using NodeRanks = std::vector<std::vector<int>>;

struct AlgorithmImplementation {
  Algorithm algorithm;
  // The plan of one call of `kind` over `bytes` bytes among ranks 0..ranks−1, sitting in `nodes` (flat
  // algorithms ignore the nodes; they may be empty then).
  Plan (*plan)(CollectiveKind kind, int ranks, const NodeRanks& nodes, uint64_t bytes, const CollectiveOptions& options);
  // Why it cannot serve ranks sitting in `nodes` with these options ("" when it can); nullptr when it
  // serves any group.
  std::string (*misfit)(const NodeRanks& nodes, const CollectiveOptions& options);
  // The α-β time of a kind it implements over `ranks` ≥ 2 ranks (closed_form.hpp); nullptr when it has no
  // closed form of one link (hierarchical: hierarchical_closed_form_seconds).
  double (*closed_form)(CollectiveKind kind, int ranks, uint64_t bytes, const AlphaBeta& link,
                        const CollectiveOptions& options);
  // A chooser (auto) has no plan of its own: for each call size it runs whichever of these algorithms
  // predicts the least time (auto_collective.hpp). nullptr for an algorithm with a plan.
  std::vector<Algorithm> (*candidates)(CollectiveKind kind) = nullptr;
};

const std::vector<AlgorithmImplementation>& algorithm_implementations();
const AlgorithmImplementation& implementation_of(Algorithm algorithm);  // std::logic_error for one not registered

// Why `algorithm` cannot run `kind` on `group` (cause Algorithm, with a reason and a hint naming the
// algorithms that can), or nullopt when it can.
std::optional<CollectiveError> refusal(CollectiveKind kind, Algorithm algorithm, const Platform& group,
                                       const CollectiveOptions& options = {});
// Whether make_collective accepts the algorithm for this kind and group (as far as the algorithm goes; the
// options are checked separately).
bool can_serve(CollectiveKind kind, Algorithm algorithm, const Platform& group);

// How many channels the ring runs over ranks sitting in `nodes`: options.channels, or by default one per port
// of a node into the network when there are several nodes (NCCL finds a ring per NIC; a GPU's bonded NICs are
// one port, which one ring fills), the most any node has, else one.
int ring_channels(const NodeRanks& nodes, const CollectiveOptions& options);

// Each algorithm's file defines its entry.
AlgorithmImplementation ring_implementation();
AlgorithmImplementation tree_implementation();  // NCCL's tree, or on single-GPU nodes the double binary tree
AlgorithmImplementation double_binary_tree_implementation();
AlgorithmImplementation halving_doubling_implementation();
AlgorithmImplementation hierarchical_implementation();
AlgorithmImplementation direct_implementation();
AlgorithmImplementation auto_implementation();  // NCCL's choice among ring and tree (auto_collective.cpp)

}  // namespace dtsim::sim
