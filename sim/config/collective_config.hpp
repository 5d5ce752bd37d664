// How collectives run: algorithm, fidelity and their parameters (the collective.* keys).
#pragma once

#include <cstdint>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

class Scenario;

struct CollectiveConfig {
  Algorithm algorithm = Algorithm::Ring;
  Fidelity fidelity = Fidelity::Auto;
  uint64_t pipeline_chunk_bytes = 512 * 1024;
  int max_pipeline_chunks = 128;
  Algorithm inter_node = Algorithm::Ring;

  // The options make_collective takes; `bandwidth_efficiency` is the fabric's (fabric.efficiency).
  CollectiveOptions options(double bandwidth_efficiency) const;
};

CollectiveConfig make_collective_config(const Scenario& scenario);

// The scenario key that sets the argument make_collective refused (command-line flags set the same keys).
const char* collective_key_of(CollectiveRefusal refusal);

}  // namespace dtsim::sim
