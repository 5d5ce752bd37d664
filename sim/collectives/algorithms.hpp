// The schedules of every algorithm over a group of `members` ranks (positions 0..members−1), for one
// message of `bytes` bytes. One file each: ring.cpp, channel_ring.cpp, chain.cpp, halving_doubling.cpp,
// double_binary_tree.cpp, nccl_tree.cpp, direct.cpp.
#pragma once

#include <memory>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace dtsim::sim {

// Ring allreduce (reduce-scatter then all-gather), ring reduce-scatter or ring all-gather. Chunk c is the
// c-th of `members` near-equal parts of the buffer. Reduce-scatter leaves position r holding the sum of
// chunk (r+1) mod N. All-gather starts with position r holding chunk (r + ag_offset) mod N: 0 for a plain
// all-gather (rank r's input is block r of the output), 1 after a ring reduce-scatter.
std::shared_ptr<const Schedule> make_ring_schedule(CollectiveKind kind, int members, uint64_t bytes, int ag_offset = 0);

// NCCL's channel rings over `nodes` (the ranks of each node, ascending, all ranks 0..N−1) with
// `nics_per_node` NICs, GPU i of a node using port i / (GPUs / ports) (topology::nic_ports: the NICs, or one
// bonded port per GPU when each GPU owns several NICs): one order of all ranks per channel. Channel c enters
// and leaves every node through port c mod ports (through port c and c+1 when each port has a single GPU);
// nodes with one port (one GPU, or GPUs that do not divide among the NICs) keep their rank order.
std::vector<std::vector<int>> channel_ring_orders(const std::vector<std::vector<int>>& nodes, int nics_per_node,
                                                  int channels);
// The ring `kind` run by one lane per order, lane c over chunk c of `channels` near-equal parts of the buffer.
std::shared_ptr<const Schedule> make_channel_ring_schedule(CollectiveKind kind, std::vector<std::vector<int>> orders,
                                                           uint64_t bytes);

// Broadcast from `root` or reduce to `root`, pipelined along the chain root, root+1, …, root+N−1 (mod N):
// the message is cut into k = `chunks` chunks; a broadcast forwards chunk c to the next rank while receiving chunk
// c+1, a reduce runs the same chain towards the root.
std::shared_ptr<const Schedule> make_chain_schedule(CollectiveKind kind, int members, uint64_t bytes, int root, int chunks);

// All-to-all: one step in which every member sends block b (S/N bytes, the b-th of N near-equal parts) to
// member b and receives its own block from every other, all N−1 at once (one lane per peer).
std::shared_ptr<const Schedule> make_direct_schedule(int members, uint64_t bytes);

// Rabenseifner's allreduce: reduce-scatter by recursive halving, all-gather by recursive doubling, over
// p = 2^⌊log2 N⌋ ranks; the N−p extra ranks fold in first (rank 2i sends its whole vector to 2i+1 for
// i < N−p) and get the result back at the end.
std::shared_ptr<const Schedule> make_halving_doubling_schedule(int members, uint64_t bytes);

// NCCL-style double binary tree allreduce over single-GPU nodes: two trees, each carrying half of the message
// in k chunks, reduce up then broadcast down. Tree 1 is the heap over positions (children of i: 2i+1, 2i+2);
// tree 2 is the same heap over the positions in reverse order, so the inner ranks of one tree are leaves of
// the other. Made of two schedules run back to back: the reduce half, then the broadcast half.
std::shared_ptr<const Schedule> make_double_binary_tree_schedule(int members, uint64_t bytes, int chunks,
                                                                 bool broadcast_half);

// NCCL's tree allreduce over `nodes` (the ranks of each node, ascending, all ranks 0..N−1): a chain inside
// every node, a double binary tree between the nodes' heads; two trees carrying half of the message each in
// k chunks (nccl_tree.cpp), reduce half then broadcast half. With `channels` C > 1 the message is split into
// C parts, one per channel, each a pair of such trees whose heads are the nodes' (c·g/C)-th GPUs (c = 0..C−1),
// so that each channel leaves a node through another GPU's NIC, as NCCL's tree channels do.
std::shared_ptr<const Schedule> make_nccl_tree_schedule(const std::vector<std::vector<int>>& nodes, uint64_t bytes,
                                                        int chunks, bool broadcast_half, int channels = 1);

}  // namespace dtsim::sim
