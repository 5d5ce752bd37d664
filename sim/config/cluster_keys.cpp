// Scenario keys: the cluster's shape.
#include "sim/config/schema.hpp"
#include "sim/config/topology_registry.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_cluster_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- cluster --------------------------------------------------------------------------------------
      integer("cluster.workers", "8", between(1, 65536), "Number of simulated workers (one GPU each)"),
      choice("cluster.topology", to_string(Topology::Star), topology_names(),
             "Network between the nodes: star = one non-blocking switch; fat-tree = leaf and spine switches "
             "(fat_tree_levels, leaf_ports, oversubscription); torus = nodes linked to their neighbours "
             "(torus_dims); dragonfly = groups of routers (dragonfly_*); two-sites = two datacenters joined by a "
             "WAN link (site_topology, site_nodes, wan_*)"),
      // ---- nodes ----------------------------------------------------------------------------------------
      integer("cluster.gpus_per_node", "1", between(1, 1024),
              "GPUs (workers) per node; a node's GPUs are consecutive ranks and talk over intra_node_fabric"),
      text("cluster.intra_node_fabric", "",
           "Fabric joining the GPUs of a node (NVLink/NVSwitch, PCIe): a fabric profile name or .ini path, "
           "resolved like fabric.profile; needed when a node holds several GPUs",
           true),
      integer("cluster.nics_per_node", "1", between(1, 64),
              "Network ports per node; GPU i of a node with G GPUs uses NIC i / (G / nics_per_node)"),
      boolean("cluster.rail_optimized", "false",
              "Fat-tree: NIC j of every node hangs off the leaf switches of rail j (otherwise a node's NICs share "
              "a leaf)"),
      text("cluster.groups", "",
           "Node groups with their own GPUs: 'name:nodes:gpu-profile[:gpus_per_node]; …', e.g. "
           "'a100:4:a100-80gb; v100:4:v100-32gb'; ranks follow the groups in order; each group's GPU comes "
           "from its profile alone (the [gpu] overrides do not apply); empty = every node has the [gpu] GPU",
           true),
      // ---- fat-tree -------------------------------------------------------------------------------------
      integer("cluster.fat_tree_levels", "2", between(2, 3),
              "Fat-tree switch levels: 2 = leaves and spines, 3 = leaves, pod aggregation and core"),
      integer("cluster.leaf_ports", "0", between(0, 4096),
              "Fat-tree: NIC ports below each leaf switch (nodes per leaf with one NIC each); 0 = the power of two "
              "nearest the square root (2 levels) or cube root (3 levels) of the ports"),
      integer("cluster.leaves_per_pod", "0", between(0, 4096),
              "3-level fat-tree: leaf switches per pod; 0 = a power of two near the square root of the leaves"),
      real("cluster.oversubscription", "1", between(1, 1024),
           "Fat-tree: down:up port ratio of every leaf switch (2 = 2:1, half as many uplinks as ports); 1 = "
           "non-blocking; leaf_ports / oversubscription must be whole"),
      // ---- torus ----------------------------------------------------------------------------------------
      int_list("cluster.torus_dims", "", between(1, 4096),
               "Torus: nodes along each dimension, e.g. 4,4 or 4,4,4; they multiply to the nodes (plus servers)"),
      // ---- dragonfly ------------------------------------------------------------------------------------
      integer("cluster.dragonfly_groups", "0", between(0, 4096),
              "Dragonfly: groups; at most dragonfly_routers (SimGrid 3.32 crashes beyond)"),
      integer("cluster.dragonfly_chassis", "1", between(1, 4096),
              "Dragonfly: chassis per group; only 1 (SimGrid 3.32 misroutes between the chassis of a group)"),
      integer("cluster.dragonfly_routers", "0", between(0, 4096), "Dragonfly: routers (blades) per chassis"),
      integer("cluster.dragonfly_nodes_per_router", "0", between(0, 4096),
              "Dragonfly: nodes per router; 0 = the nodes divided by the routers"),
      int_list("cluster.dragonfly_links", "1,1,1", between(1, 64),
               "Dragonfly: parallel links between two groups, two chassis of a group, two routers of a chassis"),
      // ---- two sites ------------------------------------------------------------------------------------
      choice("cluster.site_topology", to_string(Topology::Star), site_topology_names(),
             "two-sites: the network inside each site (a fat-tree takes the fat-tree keys)"),
      int_list("cluster.site_nodes", "", between(1, 65536),
               "two-sites: nodes in the first and second site, e.g. 4,4; empty = half each (the first site takes "
               "the odd one); servers sit in the first site"),
      text("cluster.wan_profile", "",
           "two-sites: the WAN link between the sites, a fabric profile name or .ini path (bandwidth, "
           "link_latency = one-way WAN latency, switch_latency = each border router, efficiency)",
           true),
      quantity("cluster.wan_bandwidth", Dimension::Bandwidth, "0Gbps", at_least(0),
               "two-sites: WAN bandwidth per direction; 0 = from wan_profile"),
      quantity("cluster.wan_latency", Dimension::Time, "0s", at_least(0),
               "two-sites: one-way WAN latency; 0 = from wan_profile"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
