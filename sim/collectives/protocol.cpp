#include "sim/collectives/protocol.hpp"

#include "sim/collectives/nccl_constants.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dtsim::sim {
namespace {

constexpr double kMicro = 1e-6;

}  // namespace

ProtocolCosts protocol_costs(Protocol protocol, Algorithm algorithm, CollectiveKind kind, const HopContext& where) {
  ProtocolCosts c;
  if (protocol == Protocol::None) return c;
  const int p = nccl::protocol_column(protocol);
  const bool tree = algorithm == Algorithm::DoubleBinaryTree;
  const nccl::AlgorithmLatencies& k = tree ? nccl::kTree : nccl::kRing;

  c.call_latency = k.base[p] * kMicro;
  double nvlink = k.nvlink[p], pcie = k.pcie[p];
  // With one GPU per node NCCL charges the network hop the tree's latency: nothing hides it.
  double network = where.one_gpu_per_node ? nccl::kTree.network[p] : k.network[p];
  if (!tree && where.crosses_network) {
    const double overhead = protocol == Protocol::Simple ? 3.0 * nccl::kNetOverheadUs : nccl::kNetOverheadUs;
    nvlink = std::max(nvlink, overhead);
    pcie = std::max(pcie, overhead);
    network = std::max(network, overhead);
  }
  c.hop_latency[static_cast<int>(HopClass::NVLink)] = nvlink * kMicro;
  c.hop_latency[static_cast<int>(HopClass::PCIe)] = pcie * kMicro;
  c.hop_latency[static_cast<int>(HopClass::Network)] = network * kMicro;

  // The payload's share of the bandwidth: LL carries 4 bytes of data per 8-byte store, LL128 120 of 128 bytes
  // (NCCL models it as 0.92). NCCL's tree gets 0.92 of the link in every protocol, then LL a further 1/3.8 and
  // LL128 7/9 inside one node or 120/128 across nodes.
  if (tree && kind == CollectiveKind::Allreduce) {
    c.bandwidth_fraction = 0.92;
    if (protocol == Protocol::LL) c.bandwidth_fraction *= 1.0 / 3.8;
    if (protocol == Protocol::LL128) c.bandwidth_fraction *= where.crosses_network ? 120.0 / 128.0 : 7.0 / 9.0;
  } else {
    c.bandwidth_fraction = protocol == Protocol::LL ? 0.5 : protocol == Protocol::LL128 ? 0.92 : 1.0;
  }
  return c;
}

std::vector<Protocol> auto_protocol_candidates(CollectiveKind kind, bool any_pcie_hop) {
  if (any_pcie_hop || kind == CollectiveKind::AllToAll) return {Protocol::LL, Protocol::Simple};
  return {Protocol::LL, Protocol::LL128, Protocol::Simple};
}

}  // namespace dtsim::sim

namespace dtsim::sim {

uint64_t wire_bytes(uint64_t payload, double bandwidth_fraction) {
  if (bandwidth_fraction >= 1.0) return payload;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(payload) / bandwidth_fraction));
}

}  // namespace dtsim::sim
