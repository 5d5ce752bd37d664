// The collective algorithms dtsim knows, one descriptor each: its name (the one place Algorithm's names are
// written), the collectives it implements and the collective.* keys it reads. Everything that depends on the
// algorithm's name or abilities (parse_algorithm, to_string, the keys' choices, which kinds an algorithm may
// run) is derived from this list; how an algorithm's plan is built lives with the collectives
// (sim/collectives/registry.hpp), since configuration code must not depend on SimGrid.
//
// Adding an algorithm: an Algorithm value, one line in algorithm_registry() (collective_algorithms.cpp), and
// its plan builder in sim/collectives (one file and one line in collectives/registry.cpp).
#pragma once

#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

struct AlgorithmDescriptor {
  Algorithm algorithm;
  const char* name;  // as collective.algorithm, collective.inter_node and --algorithm spell it
  std::vector<CollectiveKind> kinds;  // the collectives it implements
  // Whether it runs over one group of ranks, ignoring nodes; only a flat allreduce can be the hierarchical
  // algorithm's inter-node step (collective.inter_node).
  bool flat = true;
  // The collective.* keys that change what it does, full names, beyond collective.algorithm and
  // collective.fidelity (which every algorithm reads). A key not listed has no effect with this algorithm.
  // Hierarchical also reads what its inter-node algorithm reads (collective_keys_read).
  std::vector<std::string> keys;
  // Keys read for broadcast and reduce only (the ring runs them as a pipelined chain); training runs neither.
  std::vector<std::string> chain_keys = {};
  // NCCL has it (the ring, NCCL's tree): NCCL's tuner predicts it and picks its protocol
  // (sim/collectives/nccl_tuning.hpp), which collective.tuner and gpu.compute_capability shape.
  bool nccl_tuned = false;

  bool implements(CollectiveKind kind) const;
};

// In the order of the keys' choices.
const std::vector<AlgorithmDescriptor>& algorithm_registry();
const AlgorithmDescriptor& algorithm_descriptor(Algorithm algorithm);  // std::logic_error for one not registered
const models::NameTable<Algorithm>& algorithm_table();

// The algorithms that implement `kind`, in registry order.
std::vector<Algorithm> algorithms_implementing(CollectiveKind kind);
// The names collective.inter_node accepts: flat algorithms that implement allreduce.
std::vector<std::string> inter_node_algorithm_names();

// The collective.* keys a run of `kinds` with `algorithm` reads (see AlgorithmDescriptor::keys and chain_keys),
// with the inter-node algorithm's keys added when `algorithm` is not flat.
std::vector<std::string> collective_keys_read(Algorithm algorithm, Algorithm inter_node,
                                              const std::vector<CollectiveKind>& kinds);
// Whether NCCL's tuner predicts `algorithm` running `kind` (nccl_tuned, for a kind it implements).
bool nccl_tunes(CollectiveKind kind, Algorithm algorithm);
// Whether NCCL's tuner has a say for `kind` under collective.algorithm = `configured`: it predicts that
// algorithm, or, for auto, one of the algorithms auto may pick.
bool nccl_tuner_applies(CollectiveKind kind, Algorithm configured);

// What a training run's strategies call: allreduce, all-gather and reduce-scatter.
const std::vector<CollectiveKind>& training_collective_kinds();
// The algorithm a training run uses for a collective of `kind`: collective.algorithm for an allreduce, the ring
// (as NCCL runs them) for compression's all-gathers and ZeRO's reduce-scatters and all-gathers.
Algorithm training_algorithm(CollectiveKind kind, Algorithm configured);

}  // namespace dtsim::sim
