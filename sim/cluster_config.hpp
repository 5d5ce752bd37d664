// The shape of the simulated cluster: topology, nodes and their GPUs, groups of nodes.
#pragma once

namespace dtsim::sim {

class Scenario;

struct ClusterConfig {};

ClusterConfig make_cluster_config(const Scenario& scenario);

}  // namespace dtsim::sim
