#include "sim/config/collective_config.hpp"

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

CollectiveOptions CollectiveConfig::options(double bandwidth_efficiency) const {
  CollectiveOptions o;
  o.pipeline_chunk_bytes = pipeline_chunk_bytes;
  o.max_pipeline_chunks = max_pipeline_chunks;
  o.inter_node = inter_node;
  o.bandwidth_efficiency = bandwidth_efficiency;
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

}  // namespace dtsim::sim
