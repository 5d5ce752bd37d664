// The cost of NCCL's protocols (LL, LL128, Simple): a latency per collective call, a least latency per hop
// by what the hop crosses, and the share of a link's bandwidth the payload gets. The numbers are NCCL's own
// tuning model (NVIDIA/nccl, src/graph/tuning.cc, release 2.28: baseLatencies, hwLatencies and the
// bandwidth refinements of ncclTopoTuneModel), which NCCL uses to pick an algorithm and a protocol for each
// call; dtsim charges them inside the simulation:
//   - call latency: every rank waits this long when a collective starts;
//   - hop latency: a step's transfer takes max(route latency, hop latency) + wire bytes / bandwidth, the
//     route latency being the fabric's (the protocol's figure is the least a hop costs, with the GPU
//     polling, flag handling and proxy thread; a longer wire, e.g. a WAN, still adds its own);
//   - bandwidth fraction: a step of s payload bytes puts s / fraction bytes on the wire (LL sends a flag with
//     every 4 bytes of data), so the protocol's overhead also loads the links other traffic shares.
// Not charged: NCCL's per-channel bandwidth caps (llMaxBw, perChMax*Bw), the tree's size-dependent correction
// factors and the ring's "plateau" latency factor describe NCCL's prediction rather than the wire; NCCL's tuner
// (nccl_tuning.hpp) uses them to choose. The constants themselves are in nccl_constants.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/config/collective_types.hpp"

namespace dtsim::sim {

struct ProtocolCosts {
  double call_latency = 0.0;                   // seconds, once per call
  double hop_latency[3] = {0.0, 0.0, 0.0};     // seconds, least per step, indexed by HopClass
  double bandwidth_fraction = 1.0;             // payload bytes per wire byte

  double hop(HopClass c) const { return hop_latency[static_cast<int>(c)]; }
};

// Where the collective runs, as far as the protocol model cares.
struct HopContext {
  bool crosses_network = false;  // some hop is a Network hop (NCCL: more than one node)
  bool one_gpu_per_node = false;  // NCCL's ppn = 1: the network hop costs the tree's latency
};

// The costs of `protocol` (not Auto) for `algorithm` running `kind`. The double binary tree takes NCCL's
// tree constants, every other algorithm (ring, chain, halving-doubling, hierarchical) the ring's. None costs
// nothing and keeps the full bandwidth.
ProtocolCosts protocol_costs(Protocol protocol, Algorithm algorithm, CollectiveKind kind, const HopContext& where);

// The protocols Auto chooses among for `kind`, in NCCL's order: LL, LL128 (only where no hop crosses PCIe: NCCL
// enables LL128 only on NVLink-connected GPUs), Simple. All-to-all is NCCL's point-to-point sends, which run
// LL or Simple and never LL128 (src/enqueue.cc, addP2pToPlan: LL up to NCCL_P2P_LL_THRESHOLD per channel).
std::vector<Protocol> auto_protocol_candidates(CollectiveKind kind, bool any_pcie_hop);

// The bytes a step of `payload` bytes puts on the wire with this bandwidth fraction.
uint64_t wire_bytes(uint64_t payload, double bandwidth_fraction);

}  // namespace dtsim::sim
