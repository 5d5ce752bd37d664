#include "sim/config/collective_config.hpp"

#include <cmath>

#include "sim/config/choice.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

HopClass hop_class_of(FabricProtocol protocol) {
  switch (protocol) {
    case FabricProtocol::Nvlink: return HopClass::NVLink;
    case FabricProtocol::Pcie: return HopClass::PCIe;
    case FabricProtocol::Rdma:
    case FabricProtocol::Tcp:
    case FabricProtocol::Wan: return HopClass::Network;
  }
  return HopClass::Network;
}

CollectiveOptions CollectiveConfig::options(const FabricSpec& fabric, const ClusterConfig& layout, double least,
                                            double greatest) const {
  CollectiveOptions o;
  o.pipeline_chunk_bytes = pipeline_chunk_bytes;
  o.max_pipeline_chunks = max_pipeline_chunks;
  o.inter_node = inter_node;
  o.bandwidth_efficiency = fabric.efficiency;
  o.protocol = protocol;
  o.channels = channels;
  o.nics_per_node = layout.nics_per_node;
  o.inter_node_hops = hop_class_of(fabric.protocol);
  o.intra_node_hops = layout.has_intra_node_fabric ? hop_class_of(layout.intra_node_fabric.protocol) : o.inter_node_hops;
  o.tuner = tuner;
  const bool known = least > 0 && greatest > 0;
  o.compute_capability = known ? static_cast<int>(std::lround(least * 10)) : 80;
  o.max_compute_capability = known ? static_cast<int>(std::lround(greatest * 10)) : 80;
  o.nic_bandwidth = fabric.bandwidth * fabric.efficiency;
  o.intra_node_bandwidth =
      layout.has_intra_node_fabric ? layout.intra_node_fabric.bandwidth * layout.intra_node_fabric.efficiency : 0.0;
  return o;
}

CollectiveConfig make_collective_config(const Scenario& scenario) {
  CollectiveConfig c;
  // The key table restricts these to valid names, so the parses cannot fail.
  parse_algorithm(scenario.text("collective.algorithm"), c.algorithm);
  parse_fidelity(scenario.text("collective.fidelity"), c.fidelity);
  parse_algorithm(scenario.text("collective.inter_node"), c.inter_node);
  c.pipeline_chunk_bytes = static_cast<uint64_t>(scenario.quantity("collective.pipeline_chunk"));
  c.max_pipeline_chunks = static_cast<int>(scenario.integer("collective.pipeline_chunks_max"));
  c.protocol = choice_value(protocol_table(), scenario, "collective.protocol");
  c.channels = static_cast<int>(scenario.integer("collective.channels"));
  c.tuner = choice_value(collective_tuner_table(), scenario, "collective.tuner");
  return c;
}

const char* collective_key_of(CollectiveRefusal refusal) {
  switch (refusal) {
    case CollectiveRefusal::Algorithm: return "collective.algorithm";
    case CollectiveRefusal::PipelineChunks: return "collective.pipeline_chunk";
    case CollectiveRefusal::Root: return "collective.root";
  }
  return "collective";
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: collectives.
using namespace key_builders;

void add_collective_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- collective -------------------------------------------------------------------------------------
      choice("collective.algorithm", to_string(Algorithm::Ring), algorithm_names(),
             "Allreduce algorithm: ring = reduce-scatter then all-gather around a ring, 2(N-1) steps (across multi-NIC "
             "nodes NCCL's channel rings, one per NIC); tree = NCCL's tree, pipelined (a chain inside each node and a "
             "double binary tree between nodes, a pair per channel; over all ranks when every node holds one GPU); "
             "halving-doubling = "
             "Rabenseifner (recursive halving then doubling); hierarchical = reduce-scatter inside each node, "
             "collective.inter_node between nodes, all-gather inside; direct = all-to-all's (dtsim collective only); auto = "
             "NCCL's choice for each message size (collective.tuner says how): ring or tree for an allreduce, ring "
             "for the other collectives, direct for all-to-all"),
      choice("collective.fidelity", to_string(Fidelity::Auto), fidelity_names(),
             "How collectives are simulated: stepwise = every step a simulated transfer (exact contention); aggregated "
             "= one flow per rank and peer plus latency sleeps (still shares links); analytic = no flows, the time "
             "without other traffic (rings hop by hop; channel rings, tree, halving-doubling and the chain: their "
             "steps replayed on a model of the links); auto = stepwise up to 150000 transfers per collective (in a run "
             "with numerics, without [background] or [faults]: also no more transfers a step than 7 % of the "
             "numerics' FLOPs / 180000), then aggregated, then analytic"),
      quantity("collective.pipeline_chunk", Dimension::Bytes, "512KiB", between(1, 1e15),
               "Chunk size of pipelined collectives (each tree of the double binary tree pipelines its half of the "
               "message, the broadcast/reduce chain the whole message) in ceil(bytes/chunk) chunks"),
      integer("collective.pipeline_chunks_max", "128", between(1, 4096),
              "Most chunks a pipelined collective cuts a message into (chunks grow beyond pipeline_chunk then)"),
      choice("collective.inter_node", to_string(Algorithm::Ring), inter_node_algorithm_names(),
             "Allreduce the hierarchical algorithm runs between nodes, among the ranks with the same local index"),
      integer("collective.channels", "0", between(0, 64),
              "Rings and NCCL's tree across nodes: how many NCCL channels, each a ring (or a pair of trees) "
              "entering and leaving every node through its own NIC (channel c through NIC c mod "
              "cluster.nics_per_node); 0 = one per NIC of a node on several nodes (one per GPU where each GPU owns "
              "several NICs, bonded into one port), one on a single node"),
      choice("collective.protocol", to_string(Protocol::None), protocol_table().names(),
             "NCCL protocol model: ll, ll128 or simple add NCCL's latency per call and per hop (NVLink, PCIe or "
             "network) and its payload share of the bandwidth (ll 0.5, ll128 0.92); auto picks one for each message "
             "size (collective.tuner says how); none = the fabric's latency and bandwidth only"),
      choice("collective.tuner", to_string(CollectiveTuner::Nccl), collective_tuner_table().names(),
             "Who makes the choices of collective.algorithm = auto and collective.protocol = auto: nccl = NCCL's "
             "tuning model (its latencies, bandwidth caps and corrections, on the channels NCCL's topology search "
             "would find from the profiles' bandwidths and gpu.compute_capability), so the run uses what NCCL "
             "would; fastest = the variant dtsim predicts fastest on the simulated platform. Ring and NCCL's tree "
             "only: for the other algorithms and all-to-all both pick the fastest"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
