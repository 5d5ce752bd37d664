// α-β closed forms of every collective: the time on a contention-free fabric where a transfer of s bytes
// takes α + s/B, with S the message size in bytes and N the number of ranks. Each is derived from the
// schedule the stepwise fidelity executes (README, "Collectives"), and the tests hold the simulation to it.
//
//   ring allreduce            2(N−1)·(α + S/(N·B))
//   ring reduce-scatter       (N−1)·(α + S/(N·B))          S = the whole buffer; each rank keeps S/N
//   ring all-gather           (N−1)·(α + S/(N·B))          S = the gathered buffer
//   chain broadcast / reduce  (N−2+k)·(α + S/(k·B))        k = pipeline_chunks(S), N ≥ 2
//   halving-doubling          2·log2(p)·α + 2·(p−1)/p·S/B + [N≠p]·2·(α + S/B)     p = 2^⌊log2 N⌋
//   double binary tree        L(N,k)·(α + S/(2k·B))        k = pipeline_chunks(⌈S/2⌉), L below
//   hierarchical              RS(g) + inter-node allreduce of S/g over the G nodes + AG(g)
//
// pipeline_chunks(x) = ⌈x / options.pipeline_chunk_bytes⌉ clamped to [1, options.max_pipeline_chunks].
// Chunk sizes are exact when the chunk counts divide S; otherwise chunks differ by one byte and the
// simulated time differs from these by at most a few bytes' worth per step.
#pragma once

#include <cstdint>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

// The flat algorithms (everything but Hierarchical). Throws std::invalid_argument for an unsupported pair.
double closed_form_seconds(CollectiveKind kind, Algorithm algorithm, int ranks, uint64_t bytes, const AlphaBeta& link,
                           const CollectiveOptions& options = {});

// Hierarchical allreduce over `nodes` nodes of `gpus_per_node` ranks: intra-node ring reduce-scatter, the
// options.inter_node allreduce of S/g bytes among the ranks with the same local index, intra-node ring
// all-gather. `intra` and `inter` are the α-β parameters of the two levels.
double hierarchical_closed_form_seconds(int gpus_per_node, int nodes, uint64_t bytes, const AlphaBeta& intra,
                                        const AlphaBeta& inter, const CollectiveOptions& options = {});

// L(N, k): the number of transfer rounds on the critical path of the double binary tree with k chunks per
// tree (each round is one chunk of S/(2k) bytes crossing one link). For k ≥ 2 it equals
//   4(k + D − 1) with D = ⌊log2 N⌋, minus 2 when N is a power of two ≥ 4, and 2k when N = 2;
// it is computed exactly from the schedule (O(N·(k + log N)), cached), so small k is covered too.
int double_binary_tree_rounds(int ranks, int chunks);

// ⌊log2 x⌋ for x ≥ 1 (0 for x ≤ 1): the depth of the deepest position of a heap of x elements.
inline int floor_log2(int x) {
  int l = 0;
  for (; x > 1; x /= 2) ++l;
  return l;
}

// Size of chunk c when `bytes` are split into `parts` chunks (sizes differ by at most one byte).
inline uint64_t chunk_bytes(uint64_t bytes, int parts, int c) {
  const uint64_t n = static_cast<uint64_t>(parts);
  return bytes / n + (static_cast<uint64_t>(c) < bytes % n ? 1 : 0);
}

}  // namespace dtsim::sim
