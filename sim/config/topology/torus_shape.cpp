// Torus shape: the dimensions must hold every node (and server) exactly.
#include "sim/config/topology_registry.hpp"

namespace dtsim::sim {
namespace topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

}  // namespace

void check_torus(const std::vector<int>& dims, int endpoints) {
  if (dims.empty())
    throw ShapeError("cluster.torus_dims", "topology torus needs its dimensions",
                     "e.g. torus_dims = 4,4 for 16 nodes or 4,4,4 for 64");
  long long product = 1;
  std::string shape;
  for (const int d : dims) {
    product *= d;
    shape += (shape.empty() ? "" : "×") + str(d);
  }
  if (product != endpoints)
    throw ShapeError("cluster.torus_dims",
                     "a " + shape + " torus has " + str(product) + " positions but there are " + str(endpoints) +
                         " nodes to place",
                     "make the dimensions multiply to " + str(endpoints));
}
}  // namespace topology

TopologyDescriptor describe_torus() {
  TopologyDescriptor d{Topology::Torus, "torus", {"cluster.torus_dims"}};
  d.one_port_per_node = true;
  d.plan = [](const ClusterConfig& c, const std::vector<topology::NodePlan>&,
              const topology::FabricMembers& members) {
    topology::check_torus(c.torus_dims, static_cast<int>(members.nodes.size()) + members.servers);
  };
  return d;
}

}  // namespace dtsim::sim
