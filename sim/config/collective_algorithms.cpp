#include "sim/config/collective_algorithms.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim::sim {
namespace {

const char* const kPipelineChunk = "collective.pipeline_chunk";
const char* const kPipelineChunksMax = "collective.pipeline_chunks_max";
const char* const kInterNode = "collective.inter_node";
const char* const kChannels = "collective.channels";

using K = CollectiveKind;

}  // namespace

const std::vector<AlgorithmDescriptor>& algorithm_registry() {
  static const std::vector<AlgorithmDescriptor> registry = {
      // Allreduce, reduce-scatter and all-gather around the ring (NCCL's channel rings across multi-NIC nodes);
      // broadcast and reduce as a pipelined chain.
      {Algorithm::Ring, "ring", {K::Allreduce, K::ReduceScatter, K::AllGather, K::Broadcast, K::Reduce}, true,
       {kChannels}, {kPipelineChunk, kPipelineChunksMax}, true},
      {Algorithm::DoubleBinaryTree, "tree", {K::Allreduce}, true, {kPipelineChunk, kPipelineChunksMax, kChannels}, {},
       true},
      {Algorithm::HalvingDoubling, "halving-doubling", {K::Allreduce}, true, {}},
      {Algorithm::Hierarchical, "hierarchical", {K::Allreduce}, false, {kInterNode}},
      // All-to-all: every rank's blocks to every other at once, as NCCL's grouped sends and receives.
      {Algorithm::Direct, "direct", {K::AllToAll}, true, {}},
      // NCCL's choice per call size: ring or tree for an allreduce, as NCCL's tuner picks them (or the faster
      // prediction, collective.tuner = fastest), the ring for the other kinds, direct for all-to-all. It reads
      // what its candidates read.
      {Algorithm::Auto, "auto", {K::Allreduce, K::ReduceScatter, K::AllGather, K::Broadcast, K::Reduce, K::AllToAll},
       false, {kPipelineChunk, kPipelineChunksMax, kChannels}, {kPipelineChunk, kPipelineChunksMax}},
  };
  return registry;
}

bool nccl_tunes(CollectiveKind kind, Algorithm algorithm) {
  const AlgorithmDescriptor& d = algorithm_descriptor(algorithm);
  return d.nccl_tuned && d.implements(kind);
}

bool nccl_tuner_applies(CollectiveKind kind, Algorithm configured) {
  if (configured != Algorithm::Auto) return nccl_tunes(kind, configured);
  const std::vector<Algorithm> able = algorithms_implementing(kind);
  return std::any_of(able.begin(), able.end(), [&](Algorithm a) { return nccl_tunes(kind, a); });
}

const AlgorithmDescriptor& algorithm_descriptor(Algorithm algorithm) {
  for (const AlgorithmDescriptor& d : algorithm_registry())
    if (d.algorithm == algorithm) return d;
  throw std::logic_error("algorithm_descriptor: an Algorithm value without a descriptor");
}

const models::NameTable<Algorithm>& algorithm_table() {
  static const models::NameTable<Algorithm> table = [] {
    std::vector<models::NameTable<Algorithm>::Entry> entries;
    for (const AlgorithmDescriptor& d : algorithm_registry()) entries.push_back({d.algorithm, d.name});
    return models::NameTable<Algorithm>(std::move(entries));
  }();
  return table;
}

bool AlgorithmDescriptor::implements(CollectiveKind kind) const {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::vector<Algorithm> algorithms_implementing(CollectiveKind kind) {
  std::vector<Algorithm> out;
  for (const AlgorithmDescriptor& d : algorithm_registry())
    if (d.implements(kind)) out.push_back(d.algorithm);
  return out;
}

std::vector<std::string> inter_node_algorithm_names() {
  std::vector<std::string> out;
  for (const AlgorithmDescriptor& d : algorithm_registry())
    if (d.flat && d.implements(CollectiveKind::Allreduce)) out.emplace_back(d.name);
  return out;
}

std::vector<std::string> collective_keys_read(Algorithm algorithm, Algorithm inter_node,
                                              const std::vector<CollectiveKind>& kinds) {
  const auto is_chain = [](CollectiveKind k) { return k == CollectiveKind::Broadcast || k == CollectiveKind::Reduce; };
  const bool chains = std::any_of(kinds.begin(), kinds.end(), is_chain);
  // An algorithm's own keys are read by its other collectives; broadcast and reduce (a chain) read its chain keys
  // only (collective.channels shapes the rings, not the chain).
  const bool others = !std::all_of(kinds.begin(), kinds.end(), is_chain);
  std::vector<std::string> keys;
  const auto add = [&](const AlgorithmDescriptor& d) {
    std::vector<std::string> read;
    if (others) read = d.keys;
    if (chains) read.insert(read.end(), d.chain_keys.begin(), d.chain_keys.end());
    for (const std::string& key : read)
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  };
  const AlgorithmDescriptor& d = algorithm_descriptor(algorithm);
  add(d);
  if (!d.flat) add(algorithm_descriptor(inter_node));
  return keys;
}

Algorithm training_algorithm(CollectiveKind kind, Algorithm configured) {
  return kind == CollectiveKind::Allreduce ? configured : Algorithm::Ring;
}

const std::vector<CollectiveKind>& training_collective_kinds() {
  static const std::vector<CollectiveKind> kinds = {K::Allreduce, K::AllGather, K::ReduceScatter};
  return kinds;
}

}  // namespace dtsim::sim
