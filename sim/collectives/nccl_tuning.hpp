// NCCL's tuner: how NCCL chooses the algorithm and the protocol of each call. NCCL predicts every
// (algorithm, protocol) pair it may run with a latency plus bytes over a bandwidth, both from its tuning model
// (src/graph/tuning.cc) and the channels its topology search found, and runs the least. dtsim makes the same
// prediction from the same constants (nccl_constants.hpp), so that collective.algorithm = auto and
// collective.protocol = auto run what NCCL would run (collective.tuner = nccl); the time is then simulated,
// not taken from this prediction.
//
// What NCCL's search reads from the machine, dtsim reads from the cluster's profiles: the achievable bandwidth
// of a GPU's intra-node link and of a node's NIC ports (bandwidth × efficiency: 369 GB/s for NVLink 4, where
// NCCL counts 18 links × 20.6 = 371). The search itself is reduced to its outcome (nccl_graph): the per-channel
// speed from NCCL's speed arrays and the channel count that together carry the most, then NCCL's duplication
// of fast channels. Assumed where dtsim has no value: an Intel x86 host (the LL cap across nodes, the proxy's
// overhead), no extra network latency in the graph, and one ring order for every channel on one node.
//
// NCCL's other algorithms (CollNet, NVLS, PAT) and its symmetric kernels are not modelled: the choice is NCCL's
// with NCCL_ALGO=Ring,Tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/collective_algorithms.hpp"
#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

// What NCCL's tuning model reads about the ranks of a communicator.
struct NcclTopology {
  int ranks = 2;
  int nodes = 1;
  int gpus_per_node = 1;     // the most any node holds (NCCL's maxLocalRanks)
  int ports_per_node = 1;    // NIC ports of a node (bonded NICs are one port)
  HopClass intra = HopClass::NVLink;  // what joins the GPUs of a node: NVLink, else PCIe
  bool pcie_between_nodes = false;    // the nodes are joined by PCIe (LL128 is off)
  int compute_capability = 80;        // ×10, the least of the GPUs': 90 for Hopper
  int max_compute_capability = 80;    // the greatest
  double gpu_bandwidth = 0.0;   // GB/s, a GPU's achievable intra-node bandwidth (0: none, one GPU per node)
  double port_bandwidth = 0.0;  // GB/s, a NIC port's achievable bandwidth (unused on one node)

  int generation() const;  // 0 Volta (and older), 1 Ampere, 2 Hopper, 3 Blackwell: the row of NCCL's tables
  bool ll128_enabled() const;
};

// The topology NCCL would see for ranks sitting in `nodes` (NodeRanks of the platform) under `options`.
NcclTopology nccl_topology(const std::vector<std::vector<int>>& nodes, const CollectiveOptions& options);

// The outcome of NCCL's topology search for rings and trees: `channels` channels of `bandwidth` GB/s each.
struct NcclGraph {
  int channels = 1;
  double bandwidth = 0.0;
};
NcclGraph nccl_graph(const NcclTopology& topology);

// NCCL's prediction for one (algorithm, protocol) pair: Ring or DoubleBinaryTree (NCCL's tree), LL, LL128 or
// Simple.
struct NcclEstimate {
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  double latency_us = 0.0;    // with the ring's plateau factor where it applies
  double bandwidth = 0.0;     // GB/s of algorithm bandwidth, with the tree's correction for this size
  double time_us = 0.0;       // latency + bytes / bandwidth
};
// nullopt where NCCL does not run the pair: the tree for anything but an allreduce, LL128 where it is off, a
// single rank.
std::optional<NcclEstimate> nccl_estimate(CollectiveKind kind, Algorithm algorithm, Protocol protocol,
                                          uint64_t bytes, const NcclTopology& topology);

// Which algorithms NCCL's tuner predicts is the algorithm registry's (nccl_tunes, collective_algorithms.hpp).

// NCCL's choice among `algorithms` × `protocols` for a call of `bytes`: the least predicted time, a tie going
// to the pair NCCL tries first (the tree before the ring, then LL, LL128, Simple). nullopt when NCCL runs none
// of the pairs.
std::optional<NcclEstimate> nccl_choice(CollectiveKind kind, uint64_t bytes, const NcclTopology& topology,
                                        const std::vector<Algorithm>& algorithms,
                                        const std::vector<Protocol>& protocols);

// What the tuner sees, for people: "2 nodes of 8 GPUs, Hopper, 8 channels of 45 GB/s".
std::string describe_topology(const NcclTopology& topology);

}  // namespace dtsim::sim
