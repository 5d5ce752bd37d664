// The schedules of every algorithm over a group of `members` ranks (positions 0..members−1), for one
// message of `bytes` bytes. One file each: ring.cpp, chain.cpp, halving_doubling.cpp, double_binary_tree.cpp.
#pragma once

#include <memory>

#include "sim/collectives/schedule.hpp"

namespace dtsim::sim {

// Ring allreduce (reduce-scatter then all-gather), ring reduce-scatter or ring all-gather. Chunk c is the
// c-th of `members` near-equal parts of the buffer. Reduce-scatter leaves position r holding the sum of
// chunk (r+1) mod N. All-gather starts with position r holding chunk (r + ag_offset) mod N: 0 for a plain
// all-gather (rank r's input is block r of the output), 1 after a ring reduce-scatter.
std::shared_ptr<const Schedule> make_ring_schedule(CollectiveKind kind, int members, uint64_t bytes, int ag_offset = 0);

// Broadcast from `root` or reduce to `root`, pipelined along the chain root, root+1, …, root+N−1 (mod N):
// the message is cut into k = `chunks` chunks; a broadcast forwards chunk c to the next rank while receiving chunk
// c+1, a reduce runs the same chain towards the root.
std::shared_ptr<const Schedule> make_chain_schedule(CollectiveKind kind, int members, uint64_t bytes, int root, int chunks);

// Rabenseifner's allreduce: reduce-scatter by recursive halving, all-gather by recursive doubling, over
// p = 2^⌊log2 N⌋ ranks; the N−p extra ranks fold in first (rank 2i sends its whole vector to 2i+1 for
// i < N−p) and get the result back at the end.
std::shared_ptr<const Schedule> make_halving_doubling_schedule(int members, uint64_t bytes);

// NCCL-style double binary tree allreduce: two trees, each carrying half of the message in k chunks,
// reduce up then broadcast down. Tree 1 is the heap over positions (children of i: 2i+1, 2i+2); tree 2 is
// the same heap over the positions in reverse order, so the inner ranks of one tree are leaves of the other.
// Made of two schedules run back to back: the reduce half, then the broadcast half.
std::shared_ptr<const Schedule> make_double_binary_tree_schedule(int members, uint64_t bytes, int chunks,
                                                                 bool broadcast_half);

}  // namespace dtsim::sim
