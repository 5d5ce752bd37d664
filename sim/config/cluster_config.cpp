#include "sim/config/cluster_config.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/name_table.hpp"
#include "sim/config/cluster_layout.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/topology_registry.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// A topology key's value; the schema has already refused anything but its choices.
Topology topology_of(const Scenario& s, const std::string& key) {
  const std::string text = trim(s.text(key));
  if (const auto topology = parse_topology(text)) return *topology;
  throw std::logic_error(key + " = '" + text + "' passed the schema but names no topology");
}

std::vector<int> to_ints(const std::vector<int64_t>& values) { return {values.begin(), values.end()}; }

// The WAN of two-sites: a fabric profile, with its bandwidth and latency overridable by keys.
FabricSpec make_wan(const Scenario& s) {
  FabricSpec wan;
  const std::string profile = trim(s.text("cluster.wan_profile"));
  if (!profile.empty()) {
    wan = make_fabric_spec(s.with_profile("fabric", profile, "cluster.wan_profile"));
    // A profile's link_latency is one link's, and a route through its fabric crosses two (host, switch, host
    // on a star; for wan-10g site, meeting point, site: 2 × 2.6 ms of fibre). The WAN between the sites is
    // such a route, so its one-way latency is two links' (until 2026-12-06 it was one, half the fibre's).
    wan.link_latency = 2.0 * wan.link_latency;
  }
  // A profile's name describes its own values: one that a key replaces says so ("wan-10g … with 1 Gb/s").
  std::vector<std::string> replaced;
  if (s.quantity("cluster.wan_bandwidth") > 0) {
    wan.bandwidth = s.quantity("cluster.wan_bandwidth");
    replaced.push_back("bandwidth " + trim(s.text("cluster.wan_bandwidth")));
  }
  if (s.quantity("cluster.wan_latency") > 0) {
    wan.link_latency = s.quantity("cluster.wan_latency");
    replaced.push_back("latency " + trim(s.text("cluster.wan_latency")));
  }
  if (!profile.empty() && !replaced.empty())
    wan.name += " with " + models::join_names(replaced, ", ", " and ") + " (cluster.wan_*)";
  if (wan.bandwidth <= 0)
    s.fail_at_set({"cluster.wan_profile", "cluster.wan_bandwidth", "cluster.topology"},
                  "two-sites needs the WAN between the sites",
           "set cluster.wan_profile to a fabric profile (e.g. wan-10g), or cluster.wan_bandwidth and cluster.wan_latency");
  // A WAN without latency would join two sites as if they stood in one room.
  if (wan.link_latency <= 0)
    s.fail_at_set({"cluster.wan_latency", "cluster.wan_bandwidth", "cluster.topology"},
                  "two-sites needs the WAN's one-way latency: cluster.wan_profile gives it, or cluster.wan_latency",
                  "set cluster.wan_latency (e.g. 5ms, about 1,000 km of fibre), or cluster.wan_profile");
  if (wan.name.empty()) wan.name = "WAN";
  return wan;
}

}  // namespace

bool ClusterConfig::multi_gpu_nodes() const {
  if (groups.empty()) return gpus_per_node > 1;
  return std::any_of(groups.begin(), groups.end(),
                     [&](const NodeGroup& g) { return gpus_per_node_of(g) > 1; });
}

std::vector<NodeGroup> parse_node_groups(const std::string& text) {
  std::vector<NodeGroup> groups;
  if (trim(text).empty()) return groups;
  for (const std::string& item : split(text, ';')) {
    if (item.empty()) continue;
    const std::vector<std::string> f = split(item, ':');
    if (f.size() < 3 || f.size() > 4 || f[0].empty() || f[2].empty())
      throw ValueError("group '" + item + "' is not name:nodes:gpu-profile[:gpus_per_node]",
                       "write e.g. a100:4:a100-80gb; v100:4:v100-32gb");
    NodeGroup g;
    g.name = f[0];
    g.gpu_profile = f[2];
    try {
      g.nodes = static_cast<int>(parse_int(f[1]));
      if (f.size() == 4) g.gpus_per_node = static_cast<int>(parse_int(f[3]));
    } catch (const ValueError& e) {
      throw ValueError("group '" + item + "': " + e.what(), "nodes and GPUs per node are whole numbers");
    }
    if (g.nodes < 1 || g.nodes > 65536 || (f.size() == 4 && (g.gpus_per_node < 1 || g.gpus_per_node > 1024)))
      throw ValueError("group '" + item + "' needs at least one node of at least one GPU", "");
    for (const NodeGroup& other : groups)
      if (other.name == g.name) throw ValueError("two groups are named '" + g.name + "'", "give each group its own name");
    groups.push_back(std::move(g));
  }
  return groups;
}

int worker_count(const Scenario& s) { return static_cast<int>(s.integer("cluster.workers")); }

ClusterConfig make_cluster_config(const Scenario& s) {
  ClusterConfig c;
  c.topology = topology_of(s, "cluster.topology");
  c.gpus_per_node = static_cast<int>(s.integer("cluster.gpus_per_node"));
  c.nics_per_node = static_cast<int>(s.integer("cluster.nics_per_node"));
  c.rail_optimized = s.boolean("cluster.rail_optimized");
  try {
    c.groups = parse_node_groups(s.text("cluster.groups"));
  } catch (const ValueError& e) {
    s.fail("cluster.groups", e.what(), e.hint());
  }
  for (NodeGroup& g : c.groups) g.gpu = make_gpu_spec(s.with_profile("gpu", g.gpu_profile, "cluster.groups"));

  const std::string intra = trim(s.text("cluster.intra_node_fabric"));
  if (!intra.empty()) {
    c.intra_node_fabric = make_fabric_spec(s.with_profile("fabric", intra, "cluster.intra_node_fabric"));
    c.has_intra_node_fabric = true;
  } else if (c.multi_gpu_nodes()) {
    s.fail_at_set({"cluster.intra_node_fabric", "cluster.gpus_per_node", "cluster.groups"},
                  "nodes hold several GPUs but nothing joins them (cluster.intra_node_fabric is empty)",
                  "set cluster.intra_node_fabric to a fabric profile (e.g. nvlink4-nvswitch or pcie5-x16) or a .ini path");
  }

  const std::string pcie = trim(s.text("cluster.pcie_switch"));
  if (!pcie.empty()) {
    c.pcie_switch = make_fabric_spec(s.with_profile("fabric", pcie, "cluster.pcie_switch"));
    c.has_pcie_switch = true;
  }
  c.gpus_per_pcie_switch = static_cast<int>(s.integer("cluster.gpus_per_pcie_switch"));

  c.fat_tree.levels = static_cast<int>(s.integer("cluster.fat_tree_levels"));
  c.fat_tree.leaf_ports = static_cast<int>(s.integer("cluster.leaf_ports"));
  c.fat_tree.leaves_per_pod = static_cast<int>(s.integer("cluster.leaves_per_pod"));
  c.fat_tree.oversubscription = s.real("cluster.oversubscription");
  c.torus_dims = to_ints(s.int_list("cluster.torus_dims"));
  DragonflySettings& d = c.dragonfly;
  d.groups = static_cast<int>(s.integer("cluster.dragonfly_groups"));
  d.chassis_per_group = static_cast<int>(s.integer("cluster.dragonfly_chassis"));
  d.routers_per_chassis = static_cast<int>(s.integer("cluster.dragonfly_routers"));
  d.nodes_per_router = static_cast<int>(s.integer("cluster.dragonfly_nodes_per_router"));
  const std::vector<int> links = to_ints(s.int_list("cluster.dragonfly_links"));
  if (links.size() != 3)
    s.fail("cluster.dragonfly_links", "expected three counts: between groups, chassis and routers", "e.g. 1,1,1");
  d.global_links = links[0];
  d.chassis_links = links[1];
  d.router_links = links[2];
  c.site_topology = topology_of(s, "cluster.site_topology");
  c.site_nodes = to_ints(s.int_list("cluster.site_nodes"));
  if (topology_descriptor(c.topology).sites) c.wan = make_wan(s);

  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: the cluster's shape.
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
              "NICs per node, a divisor or a multiple of its GPUs: GPU i of a node with G GPUs uses NIC i / (G / "
              "nics_per_node) when they share NICs; with m × G NICs each GPU owns m of them, modelled as one bonded "
              "port of m × the fabric bandwidth"),
      text("cluster.pcie_switch", "",
           "PCIe switch between a node's GPUs and its NICs: a fabric profile name or .ini path (e.g. pcie4-x16), "
           "resolved like fabric.profile; the network traffic of the GPUs behind one switch shares one link of its "
           "bandwidth and latency 2 x link_latency + switch_latency (GPU to switch to NIC); empty = none",
           true),
      integer("cluster.gpus_per_pcie_switch", "0", between(0, 1024),
              "GPUs whose network traffic shares one PCIe switch link of cluster.pcie_switch (consecutive GPUs of a "
              "node with their NICs); 0 = the GPUs that use one NIC (one GPU where GPUs own several NICs); a node "
              "with fewer GPUs has one link; must divide the GPUs of a node and be a multiple of the GPUs per NIC"),
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
           "two-sites: the WAN link between the sites, a fabric profile name or .ini path (bandwidth; one-way "
           "latency = 2 x link_latency, a route through the profile's fabric; switch_latency = each border router; "
           "efficiency)",
           true),
      quantity("cluster.wan_bandwidth", Dimension::Bandwidth, "0Gbps", at_least(0),
               "two-sites: WAN bandwidth per direction; 0 = from wan_profile"),
      quantity("cluster.wan_latency", Dimension::Time, "0s", at_least(0),
               "two-sites: one-way WAN latency; 0 = from wan_profile (without a profile it must be set)"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
