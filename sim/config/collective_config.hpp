// How collectives run: algorithm, fidelity and their parameters (the collective.* keys).
#pragma once

#include <cstdint>

#include "sim/config/cluster_config.hpp"
#include "sim/config/collective_types.hpp"
#include "sim/config/hardware_config.hpp"

namespace dtsim::sim {

class Scenario;

struct CollectiveConfig {
  Algorithm algorithm = Algorithm::Ring;
  Fidelity fidelity = Fidelity::Auto;
  uint64_t pipeline_chunk_bytes = 512 * 1024;
  int max_pipeline_chunks = 128;
  Algorithm inter_node = Algorithm::Ring;
  Protocol protocol = Protocol::None;
  int channels = 0;  // 0 = auto
  CollectiveTuner tuner = CollectiveTuner::Nccl;

  // The options make_collective takes on a cluster joined by `fabric`, its nodes' GPUs by `layout`'s
  // intra-node fabric (the protocols' hop classes come from the two fabrics' kinds), its GPUs of compute
  // capabilities `least` to `greatest` (0 = not known, both taken as 8.0).
  CollectiveOptions options(const FabricSpec& fabric, const ClusterConfig& layout, double least,
                            double greatest) const;
};

// What a hop over a fabric of this kind is, for the protocols' latencies: NVLink, PCIe, or the network.
HopClass hop_class_of(FabricProtocol protocol);

CollectiveConfig make_collective_config(const Scenario& scenario);

// The scenario key that sets the argument make_collective refused (command-line flags set the same keys).
const char* collective_key_of(CollectiveRefusal refusal);

}  // namespace dtsim::sim
