// The collectives live in sim/collectives/ (collective.hpp: make_collective). This header keeps the byte
// accounting of the first ring allreduce for code written against it.
#pragma once

#include <cstdint>

#include "sim/collectives/collective.hpp"

namespace dtsim::sim {

struct RingAllreduce {
  // Bytes all ranks together send in one ring allreduce of `bytes`: 2(N−1) steps, each moving every chunk once.
  static uint64_t total_bytes(uint64_t bytes, int ranks) { return 2 * static_cast<uint64_t>(ranks - 1) * bytes; }
  static uint64_t chunk_bytes(uint64_t bytes, int ranks, int c) { return dtsim::sim::chunk_bytes(bytes, ranks, c); }
};

}  // namespace dtsim::sim
