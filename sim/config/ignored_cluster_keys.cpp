// The rules of ignored_keys.cpp about the cluster and its collectives: which algorithm, tuner, topology and node
// keys a run's collectives read, and what one worker, one node or node groups leave without effect.
#include <algorithm>

#include "models/compression/registry.hpp"
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/ignored_keys_rules.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/topology_registry.hpp"

namespace dtsim::sim::ignored_key_rules {

// ZeRO (synchronous training, sync.zero_stage >= 1) reduce-scatters the gradients and all-gathers the weights,
// both as rings (strategies/sync/sync_dp.cpp): no allreduce is left for the algorithm keys to choose.
bool zero_leaves_no_allreduce(const RunConfig& c) { return c.strategy == Strategy::Sync && c.sync.zero_stage >= 1; }

// collective.inter_node and the pipelining keys: read by the algorithms whose descriptor lists them
// (config/collective_algorithms.cpp), for the collectives training calls (`dtsim collective` passes its own).
std::string collective_settings(const std::string& key, const RunConfig& c,
                                const std::vector<CollectiveKind>& kinds) {
  std::vector<std::string> readers;
  bool chain_only = false;  // read by some algorithm, but only for broadcast and reduce
  for (const AlgorithmDescriptor& d : algorithm_registry()) {
    if (contains(d.keys, key)) readers.push_back(d.name);
    chain_only = chain_only || contains(d.chain_keys, key);
  }
  // Under ZeRO the run's collectives are reduce-scatters and all-gathers, whatever collective.algorithm says.
  const Algorithm algorithm = zero_leaves_no_allreduce(c)
                                  ? training_algorithm(CollectiveKind::ReduceScatter, c.collectives.algorithm)
                                  : c.collectives.algorithm;
  if (readers.empty() && !chain_only) return "";
  if (contains(collective_keys_read(algorithm, c.collectives.inter_node, kinds), key)) return "";
  if (contains(algorithm_descriptor(algorithm).keys, key))  // read, but not by the chain broadcast and reduce run as
    return std::string("has no effect on broadcast and reduce, which collective.algorithm = ") + to_string(algorithm) +
           " runs as a pipelined chain (it shapes the other collectives)";
  std::string why = std::string("has no effect with collective.algorithm = ") + to_string(algorithm);
  if (contains(algorithm_descriptor(algorithm).chain_keys, key))
    why += ", which reads it for broadcast and reduce only";
  return why + (readers.empty() ? "" : " (it applies to " + models::join_names(readers) + ")");
}

// collective.tuner, and the compute capability NCCL's tuner reads, act where auto chooses for the ring or NCCL's
// tree: collective.algorithm = auto for an allreduce (ring or tree), collective.protocol = auto for those two
// (nccl_tuner_applies, collective_algorithms.hpp). `training`: the kinds are a training run's, whose all-gathers
// and reduce-scatters (ZeRO's, a gathering compressor's) run as rings whatever collective.algorithm says.
std::string tuner_settings(const std::string& key, const RunConfig& c, const std::vector<CollectiveKind>& kinds,
                           bool training) {
  if (key != "collective.tuner" && key != "gpu.compute_capability") return "";
  const CollectiveConfig& k = c.collectives;
  const bool collectives = strategy_descriptor(c.strategy).synchronous_group && c.workers > 1;
  if (key == "gpu.compute_capability" && !collectives)
    return c.workers > 1 ? std::string("has no effect with training.strategy = ") + to_string(c.strategy) +
                               " (only NCCL's tuner for collectives reads it)"
                         : "has no effect: one worker calls no collective (cluster.workers = 1)";
  if (key == "gpu.compute_capability" && k.tuner != CollectiveTuner::Nccl)
    return std::string("has no effect with collective.tuner = ") + to_string(k.tuner) +
           " (only NCCL's tuner reads it)";
  // A training run's all-gathers and reduce-scatters come from ZeRO and from compressors that gather.
  const bool gathers = c.sync.zero_stage > 0 || c.compression.settings.kind != models::CompressorKind::None;
  for (const CollectiveKind kind : kinds) {
    if (training && kind == CollectiveKind::Allreduce && zero_leaves_no_allreduce(c)) continue;
    if (training && kind != CollectiveKind::Allreduce && !gathers) continue;
    const Algorithm a = training ? training_algorithm(kind, k.algorithm) : k.algorithm;
    if (a == Algorithm::Auto && kind == CollectiveKind::Allreduce) return "";  // ring or tree
    if (k.protocol == Protocol::Auto && nccl_tuner_applies(kind, a)) return "";
  }
  if (k.algorithm != Algorithm::Auto && k.protocol != Protocol::Auto)
    return "has no effect: neither collective.algorithm nor collective.protocol is auto, so nothing is chosen";
  return "has no effect: auto chooses nothing for the ring or NCCL's tree here (NCCL's tuner chooses for those "
         "two only)";
}

// Under ZeRO the algorithm keys choose nothing (zero_leaves_no_allreduce).
std::string zero_collective_settings(const std::string& key, const RunConfig& c) {
  if (!zero_leaves_no_allreduce(c)) return "";
  if (key != "collective.algorithm" && key != "collective.inter_node" && key != "collective.pipeline_chunk" &&
      key != "collective.pipeline_chunks_max")
    return "";
  return "has no effect with sync.zero_stage = " + std::to_string(c.sync.zero_stage) +
         ": ZeRO's reduce-scatters and all-gathers run as rings, and no allreduce is left to choose an algorithm for";
}

// ZeRO shards the model state over the data-parallel workers: one worker holds it all, as without ZeRO, and
// has nobody to gather from (zero_sharding_without_effect, ignored_keys.hpp; `dtsim workload --zero` says the
// same of --gpus 1).
std::string single_worker_zero(const std::string& key, const RunConfig& c) {
  if (key != "sync.zero_stage" || c.strategy != Strategy::Sync) return "";
  const std::string why = zero_sharding_without_effect(c.sync.zero_stage, c.workers);
  return why.empty() ? "" : why + " (cluster.workers = 1)";
}

// Only ZeRO stage 3 gathers weights before their use, and only across several workers.
std::string zero3_prefetch_settings(const std::string& key, const RunConfig& c) {
  if (key != "sync.prefetch_units") return "";
  if (c.strategy != Strategy::Sync || c.sync.zero_stage != 3)
    return "has no effect without sync.zero_stage = 3 under training.strategy = sync: only stage 3 gathers weights "
           "before their use";
  if (c.workers == 1) return "has no effect: one worker holds every weight and gathers none (cluster.workers = 1)";
  return "";
}

// One worker of sync or local SGD has nobody to exchange with: no collective runs.
std::string single_worker_collectives(const std::string& key, const RunConfig& c) {
  if (section_of(key) != "collective" || c.workers != 1) return "";
  if (c.strategy != Strategy::Sync && c.strategy != Strategy::Local) return "";
  return "has no effect: one worker calls no collective (cluster.workers = 1)";
}

// [gpu] under cluster.groups: the groups describe every node, each group's GPU from its own profile alone.
std::string grouped_gpu_settings(const std::string& key, const RunConfig& c) {
  if (c.layout.groups.empty()) return "";
  // cluster.gpus_per_node is a group's GPUs per node only where the group gives none of its own.
  if (key == "cluster.gpus_per_node" &&
      std::all_of(c.layout.groups.begin(), c.layout.groups.end(), [](const NodeGroup& g) { return g.gpus_per_node > 0; }))
    return "has no effect: every cluster.groups group gives its own GPUs per node";
  if (section_of(key) != "gpu") return "";
  return "has no effect: every node belongs to a cluster.groups group, whose GPU comes from that group's profile "
         "alone";
}

// collective.algorithm = hierarchical when no node holds two GPUs: there is no intra-node level, so it is its
// inter-node allreduce over all ranks.
std::string hierarchical_without_nodes(const std::string& key, const RunConfig& c) {
  if (key != "collective.algorithm" || c.collectives.algorithm != Algorithm::Hierarchical) return "";
  if (c.layout.multi_gpu_nodes()) return "";
  return std::string("has no effect: every node holds one GPU, so the hierarchical allreduce is its inter-node ") +
         to_string(c.collectives.inter_node) + " over all ranks (set cluster.gpus_per_node for multi-GPU nodes)";
}

// cluster.intra_node_fabric when no node holds two GPUs: a lone GPU's traffic all leaves through its NIC
// (topology/build.cpp builds no port or switch inside such a node).
std::string intra_node_fabric_without_nodes(const std::string& key, const RunConfig& c) {
  if (key != "cluster.intra_node_fabric" || c.layout.multi_gpu_nodes()) return "";
  return "has no effect: every node holds one GPU, so no traffic stays inside a node (set cluster.gpus_per_node "
         "for multi-GPU nodes)";
}

// cluster.gpus_per_pcie_switch without a PCIe switch; cluster.pcie_switch when nothing reaches a NIC (one node
// and no server host).
std::string pcie_switch_settings(const std::string& key, const RunConfig& c) {
  if (key == "cluster.gpus_per_pcie_switch" && !c.layout.has_pcie_switch)
    return "has no effect: cluster.pcie_switch is empty (no PCIe switch between GPUs and NICs)";
  if (key != "cluster.pcie_switch" || !c.layout.has_pcie_switch) return "";
  if (node_count(c) <= 1 && server_hosts(c.strategy, c.ps.servers) == 0)
    return "has no effect: every worker is in one node and there is no server, so no traffic reaches a NIC";
  return "";
}

// The network between nodes when there is one node and no server: its NICs and the fabric's own values carry
// nothing (its price is still billed, and its name labels). collective.channels is not among them: NCCL's tree
// inside one node runs a chain per channel.
std::string network_in_one_node(const std::string& key, const RunConfig& c) {
  const bool fabric_value = section_of(key) == "fabric" && key.rfind("fabric.price_", 0) != 0 && key != "fabric.name";
  if (!fabric_value && key != "cluster.nics_per_node") return "";
  if (node_count(c) > 1 || server_hosts(c.strategy, c.ps.servers) > 0) return "";
  return "has no effect: every worker is in one node and there is no server, so no traffic crosses the network "
         "between nodes";
}

}  // namespace dtsim::sim::ignored_key_rules
