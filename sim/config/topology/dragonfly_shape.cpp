// Dragonfly shape: groups × chassis × routers × nodes per router, restricted to what SimGrid 3.32 routes
// correctly.
#include "sim/config/topology_registry.hpp"

namespace dtsim::sim {
namespace topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

}  // namespace

std::string DragonflyGeometry::describe() const {
  return "dragonfly, " + str(groups) + " groups × " + str(chassis) + " chassis × " + str(routers) + " routers × " +
         str(nodes_per_router) + " nodes (links per group pair " + str(global_links) + ", per chassis pair " +
         str(chassis_links) + ", per router pair " + str(router_links) + ")";
}

DragonflyGeometry plan_dragonfly(const DragonflySettings& s, int endpoints) {
  if (s.groups < 1)
    throw ShapeError("cluster.dragonfly_groups", "topology dragonfly needs its number of groups", "e.g. 4");
  if (s.routers_per_chassis < 1)
    throw ShapeError("cluster.dragonfly_routers", "topology dragonfly needs its routers per chassis", "e.g. 4");
  if (s.groups > s.routers_per_chassis)
    throw ShapeError("cluster.dragonfly_groups",
                     str(s.groups) + " groups but " + str(s.routers_per_chassis) +
                         " routers per chassis: SimGrid 3.32 wires the link to group j at router j of a chassis and "
                         "crashes when there are more groups than routers",
                     "use at most " + str(s.routers_per_chassis) + " groups, or more routers per chassis");
  if (s.chassis_per_group > 1)
    throw ShapeError("cluster.dragonfly_chassis",
                     "SimGrid 3.32's dragonfly routing drops the hop between chassis inside a group when a route starts "
                     "outside chassis 0 (about 1 route in 10 is wrong with 2 chassis)",
                     "use one chassis per group (all routers of a group linked to each other)");
  DragonflyGeometry g{s.groups, s.chassis_per_group, s.routers_per_chassis, s.nodes_per_router,
                      s.global_links, s.chassis_links, s.router_links};
  const long long routers = static_cast<long long>(g.groups) * g.chassis * g.routers;
  if (g.nodes_per_router == 0) {
    if (endpoints % routers != 0)
      throw ShapeError("cluster.dragonfly_routers",
                       str(endpoints) + " nodes do not spread evenly over " + str(g.groups) + " × " + str(g.chassis) +
                           " × " + str(g.routers) + " = " + str(routers) + " routers",
                       "choose groups, chassis and routers whose product divides " + str(endpoints));
    g.nodes_per_router = static_cast<int>(endpoints / routers);
  } else if (routers * g.nodes_per_router != endpoints) {
    throw ShapeError("cluster.dragonfly_nodes_per_router",
                     str(routers) + " routers × " + str(g.nodes_per_router) + " nodes = " +
                         str(routers * g.nodes_per_router) + " positions but there are " + str(endpoints) + " nodes",
                     "set it to 0 to divide the nodes over the routers");
  }
  return g;
}
}  // namespace topology

TopologyDescriptor describe_dragonfly() {
  TopologyDescriptor d{Topology::Dragonfly,
                       "dragonfly",
                       {"cluster.dragonfly_groups", "cluster.dragonfly_chassis", "cluster.dragonfly_routers",
                        "cluster.dragonfly_nodes_per_router", "cluster.dragonfly_links"}};
  d.one_port_per_node = true;
  d.plan = [](const ClusterConfig& c, const std::vector<topology::NodePlan>&,
              const topology::FabricMembers& members) {
    topology::plan_dragonfly(c.dragonfly, static_cast<int>(members.nodes.size()) + members.servers);
  };
  return d;
}

}  // namespace dtsim::sim
