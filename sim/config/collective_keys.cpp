// Scenario keys: collectives.
#include "sim/config/collective_algorithms.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_collective_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- collective -------------------------------------------------------------------------------------
      choice("collective.algorithm", to_string(Algorithm::Ring), algorithm_names(),
             "Allreduce algorithm: ring = reduce-scatter then all-gather around a ring, 2(N-1) steps; tree = NCCL-style "
             "double binary tree, pipelined; halving-doubling = Rabenseifner (recursive halving then doubling); "
             "hierarchical = reduce-scatter inside each node, collective.inter_node between nodes, all-gather inside"),
      choice("collective.fidelity", to_string(Fidelity::Auto), fidelity_names(),
             "How collectives are simulated: stepwise = every step a simulated transfer (exact contention); aggregated "
             "= one flow per rank and peer plus latency sleeps (~300x cheaper, still shares links); analytic = the "
             "alpha-beta closed form, no flows; auto = stepwise up to 150000 transfers per collective, then aggregated, "
             "then analytic"),
      quantity("collective.pipeline_chunk", Dimension::Bytes, "512KiB", between(1, 1e15),
               "Chunk size of pipelined collectives (each tree of the double binary tree pipelines its half of the "
               "message, the broadcast/reduce chain the whole message) in ceil(bytes/chunk) chunks"),
      integer("collective.pipeline_chunks_max", "128", between(1, 4096),
              "Most chunks a pipelined collective cuts a message into (chunks grow beyond pipeline_chunk then)"),
      choice("collective.inter_node", to_string(Algorithm::Ring), inter_node_algorithm_names(),
             "Allreduce the hierarchical algorithm runs between nodes, among the ranks with the same local index"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
