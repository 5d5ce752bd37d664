// Star: one non-blocking switch with a port per NIC, server and border; any number of ports fits, so there
// is no shape to plan and no key of its own.
#include "sim/config/topology_registry.hpp"

namespace dtsim::sim {

TopologyDescriptor describe_star() {
  TopologyDescriptor d{Topology::Star, "star", {}};
  d.site = true;
  d.plan = [](const ClusterConfig&, const std::vector<topology::NodePlan>&, const topology::FabricMembers&) {};
  return d;
}

}  // namespace dtsim::sim
