#include "sim/collectives/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "sim/collectives/nccl_constants.hpp"
#include "sim/config/cluster_layout.hpp"

namespace dtsim::sim {
namespace {

// Column of NCCL's tables by scale: one node, two, more.
int scale_index(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

// NCCL's log2i: ⌊log2 x⌋, −1 for 0.
int log2_down(uint64_t x) {
  int l = -1;
  while (x > 0) {
    x >>= 1;
    ++l;
  }
  return l;
}

// The ring's steps per call (ncclTuningGetNsteps) and how many of them cross the network.
int ring_steps(CollectiveKind kind, int ranks) {
  if (kind == CollectiveKind::Allreduce) return 2 * (ranks - 1);
  if (kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllGather) return ranks - 1;
  return ranks;
}

double hop_latency(const nccl::AlgorithmLatencies& k, HopClass hop, int p) {
  return hop == HopClass::NVLink ? k.nvlink[p] : hop == HopClass::PCIe ? k.pcie[p] : k.network[p];
}

struct Speeds {
  const double* begin;
  const double* end;
};

Speeds speeds_for(int generation, bool across_nodes) {
  if (generation >= 3)
    return across_nodes ? Speeds{std::begin(nccl::kSm100SpeedsInter), std::end(nccl::kSm100SpeedsInter)}
                        : Speeds{std::begin(nccl::kSm100SpeedsIntra), std::end(nccl::kSm100SpeedsIntra)};
  if (generation == 2)
    return across_nodes ? Speeds{std::begin(nccl::kSm90SpeedsInter), std::end(nccl::kSm90SpeedsInter)}
                        : Speeds{std::begin(nccl::kSm90SpeedsIntra), std::end(nccl::kSm90SpeedsIntra)};
  return across_nodes ? Speeds{std::begin(nccl::kSpeedsInter), std::end(nccl::kSpeedsInter)}
                      : Speeds{std::begin(nccl::kSpeedsIntra), std::end(nccl::kSpeedsIntra)};
}

// How many channels of `speed` GB/s fit: on one node within each GPU's link; across nodes, as many per NIC
// port as its bandwidth holds, and within each GPU's link (every channel passes through every GPU).
int channels_at(const NcclTopology& t, double speed) {
  constexpr double kSlack = 1e-9;
  const auto fit = [&](double capacity) { return static_cast<int>(std::floor(capacity / speed + kSlack)); };
  int n = nccl::kMaxSearchChannels;
  if (t.gpus_per_node > 1 && t.gpu_bandwidth > 0.0) n = std::min(n, fit(t.gpu_bandwidth));
  if (t.nodes > 1) n = std::min(n, t.ports_per_node * fit(t.port_bandwidth));
  return std::max(n, 0);
}

}  // namespace

int NcclTopology::generation() const {
  return compute_capability >= 100 ? 3 : compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0;
}

bool NcclTopology::ll128_enabled() const {
  // NCCL enables LL128 on NVLink-connected GPUs of compute capability 7.0 and up only, and across generations
  // only from Hopper on (isLL128Enabled: minCompCap == maxCompCap || minCompCap >= 90).
  if (compute_capability < 70) return false;
  if (compute_capability != max_compute_capability && compute_capability < 90) return false;
  if (gpus_per_node > 1 && intra == HopClass::PCIe) return false;
  return !(nodes > 1 && pcie_between_nodes);
}

NcclTopology nccl_topology(const std::vector<std::vector<int>>& nodes, const CollectiveOptions& options) {
  NcclTopology t;
  t.ranks = 0;
  t.nodes = 0;
  for (const auto& node : nodes) {
    if (node.empty()) continue;
    t.ranks += static_cast<int>(node.size());
    t.nodes += 1;
    t.gpus_per_node = std::max(t.gpus_per_node, static_cast<int>(node.size()));
  }
  t.ranks = std::max(t.ranks, 1);
  t.nodes = std::max(t.nodes, 1);
  t.intra = options.intra_node_hops == HopClass::NVLink ? HopClass::NVLink : HopClass::PCIe;
  t.pcie_between_nodes = options.inter_node_hops == HopClass::PCIe;
  t.compute_capability = options.compute_capability;
  t.max_compute_capability = std::max(options.max_compute_capability, options.compute_capability);
  const int nics = std::max(options.nics_per_node, 1);
  t.ports_per_node = topology::nic_ports(t.gpus_per_node, nics);
  t.port_bandwidth = options.nic_bandwidth / 1e9 * (static_cast<double>(nics) / t.ports_per_node);
  // Without a fabric of their own, a node's GPUs reach each other through the network.
  t.gpu_bandwidth = (options.intra_node_bandwidth > 0.0 ? options.intra_node_bandwidth : options.nic_bandwidth) / 1e9;
  return t;
}

NcclGraph nccl_graph(const NcclTopology& t) {
  const bool across = t.nodes > 1;
  const double capacity = across ? (t.gpus_per_node > 1 ? std::min(t.port_bandwidth, t.gpu_bandwidth) : t.port_bandwidth)
                                 : t.gpu_bandwidth;
  const Speeds speeds = speeds_for(t.generation(), across);
  // The search starts at the fastest speed a channel can take and tries slower ones while they are above
  // 0.49 of the first that gave channels, keeping the most bandwidth (channels × speed), the faster on a tie.
  NcclGraph best{0, 0.0};
  double first_found = 0.0;
  for (const double* s = speeds.begin; s != speeds.end; ++s) {
    if (*s > capacity) continue;
    if (first_found > 0.0 && *s < 0.49 * first_found) break;
    const int n = channels_at(t, *s);
    if (n < 1) continue;
    if (first_found == 0.0) first_found = *s;
    if (n * *s > best.channels * best.bandwidth) best = {n, *s};
  }
  if (best.channels == 0) best = {1, std::max(capacity, 1e-3)};  // slower than any speed NCCL tries
  // ncclTopoDupChannels: fast channels are doubled at half the speed each, except on Hopper and later when
  // more than 4 channels run below 50 GB/s.
  const bool keep = best.bandwidth < 25.0 || (t.compute_capability > 80 && best.bandwidth < 50.0 && best.channels > 4);
  if (!keep) {
    const int doubled = std::min(2 * best.channels, nccl::kMaxSearchChannels);
    best.bandwidth /= static_cast<double>((doubled + best.channels - 1) / best.channels);
    best.channels = doubled;
  }
  return best;
}

std::optional<NcclEstimate> nccl_estimate(CollectiveKind kind, Algorithm algorithm, Protocol protocol, uint64_t bytes,
                                          const NcclTopology& topology) {
  const NcclTopology& t = topology;
  if (!nccl_tunes(kind, algorithm) || topology.ranks < 2) return std::nullopt;  // one rank exchanges nothing
  if (protocol != Protocol::LL && protocol != Protocol::LL128 && protocol != Protocol::Simple) return std::nullopt;
  if (protocol == Protocol::LL128 && !t.ll128_enabled()) return std::nullopt;
  const int p = nccl::protocol_column(protocol);
  const int gen = t.generation();
  const int scale = scale_index(t.nodes);
  const double ll_max = nccl::kLlMaxBw[t.nodes == 1 ? gen : 0][scale];  // several nodes: an Intel host's row
  const NcclGraph graph = nccl_graph(t);
  const double channels = graph.channels;
  double bus = graph.bandwidth * channels;

  NcclEstimate e;
  e.algorithm = algorithm;
  e.protocol = protocol;
  const bool tree = algorithm == Algorithm::DoubleBinaryTree;
  const nccl::AlgorithmLatencies& k = tree ? nccl::kTree : nccl::kRing;
  const HopClass intra_hop = t.intra;
  const double intra_lat = hop_latency(k, intra_hop, p);
  e.latency_us = k.base[p];
  if (tree) {
    bus = std::min(bus * 0.92, channels * nccl::kPerChannelTreeBw[gen][scale]);
    if (protocol == Protocol::LL) bus = std::min(bus / 3.8, ll_max);
    if (protocol == Protocol::LL128)
      bus = std::min(bus * (t.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * nccl::kPerChannelTreeLl128Bw[gen][scale]);
    // A plain tree (NCCL_TOPO_PATTERN_TREE, not the balanced one) gets 0.85 of the bandwidth. The search builds
    // one with one GPU per node, and across nodes of Hopper GPUs and later (NCCL's printed predictions for
    // 3 × 8 H100 carry the factor, its table for one 8 × H200 node does not: nccl_tuning_test.cpp).
    if (t.gpus_per_node == 1 || (t.nodes > 1 && t.compute_capability >= 90)) bus *= 0.85;
    e.bandwidth = bus * 0.5;
    const double inter_lat = t.nodes == 1 ? intra_lat : nccl::kTree.network[p];
    e.latency_us += 2.0 * ((t.ranks / t.nodes - 1) * intra_lat + log2_down(static_cast<uint64_t>(t.nodes)) * inter_lat);
    const int log_size = log2_down(bytes >> 6);
    if (log_size >= 0 && log_size < 24) e.bandwidth *= nccl::kTreeCorrection[p][log_size];
  } else {
    if (protocol == Protocol::LL) bus = std::min(ll_max, bus * 0.5);
    if (protocol == Protocol::LL128) bus = std::min(bus * 0.92, channels * nccl::kPerChannelRingLl128Bw[gen][scale]);
    const int steps = ring_steps(kind, t.ranks);
    e.bandwidth = bus * t.ranks / steps;
    if (kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce) {
      const HopClass level = t.nodes == 1 ? intra_hop : HopClass::Network;
      // One ring order for every channel on one node (NCCL's sameChannels): the chain pays one hop; otherwise
      // every step's, Simple at the tree's chunk latency.
      if (t.nodes == 1) e.latency_us += hop_latency(k, level, p);
      else e.latency_us += steps * hop_latency(protocol == Protocol::Simple ? nccl::kTree : k, level, p);
    } else {
      double inter_lat = t.nodes == 1 ? intra_lat
                         : t.gpus_per_node == 1 ? nccl::kTree.network[p]  // nothing hides the network hop
                                                : k.network[p];
      double step_lat = intra_lat;
      if (t.nodes > 1) step_lat = std::max(step_lat, protocol == Protocol::Simple ? 3.0 * nccl::kNetOverheadUs
                                                                                   : nccl::kNetOverheadUs);
      const int inter_steps = t.nodes == 1 ? 0 : kind == CollectiveKind::Allreduce ? 2 * (t.nodes - 1) : t.nodes - 1;
      e.latency_us += (steps - inter_steps) * step_lat + inter_steps * inter_lat;
      const bool plateau = protocol == Protocol::Simple && t.nodes > 1 && kind == CollectiveKind::Allreduce &&
                           bytes / (static_cast<uint64_t>(graph.channels) * static_cast<uint64_t>(t.ranks)) >= 64;
      if (plateau) e.latency_us *= t.compute_capability < 80 ? nccl::kRingPlateauBeforeAmpere : nccl::kRingPlateau;
    }
  }
  e.time_us = e.latency_us + static_cast<double>(bytes) / (1000.0 * e.bandwidth);
  return e;
}

std::optional<NcclEstimate> nccl_choice(CollectiveKind kind, uint64_t bytes, const NcclTopology& topology,
                                        const std::vector<Algorithm>& algorithms,
                                        const std::vector<Protocol>& protocols) {
  std::optional<NcclEstimate> best;
  for (const Algorithm a : {Algorithm::DoubleBinaryTree, Algorithm::Ring}) {
    if (std::find(algorithms.begin(), algorithms.end(), a) == algorithms.end()) continue;
    for (const Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      if (std::find(protocols.begin(), protocols.end(), p) == protocols.end()) continue;
      const std::optional<NcclEstimate> e = nccl_estimate(kind, a, p, bytes, topology);
      if (e && (!best || e->time_us < best->time_us)) best = e;
    }
  }
  return best;
}

std::string describe_topology(const NcclTopology& t) {
  static const char* const kGenerations[] = {"Volta", "Ampere", "Hopper", "Blackwell"};
  const auto name = [](int cc) {
    return std::string(cc < 70 ? "pre-Volta" : kGenerations[cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0]);
  };
  std::string generation = name(t.compute_capability);
  if (name(t.max_compute_capability) != generation) generation += " to " + name(t.max_compute_capability);
  if (generation != kGenerations[t.generation()])  // NCCL reads the least GPU's row
    generation += std::string(" (") + kGenerations[t.generation()] + "'s tables)";
  const NcclGraph g = nccl_graph(t);
  char buf[200];
  std::snprintf(buf, sizeof buf, "%d node%s of %d GPU%s, %s, %d channel%s of %.4g GB/s", t.nodes,
                t.nodes == 1 ? "" : "s", t.gpus_per_node, t.gpus_per_node == 1 ? "" : "s", generation.c_str(),
                g.channels, g.channels == 1 ? "" : "s", g.bandwidth);
  return buf;
}

}  // namespace dtsim::sim
