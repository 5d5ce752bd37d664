#include "sim/config/cluster_config.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/config/ps_config.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/config/cluster_layout.hpp"
#include "sim/config/topology_registry.hpp"

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
  if (!profile.empty()) wan = make_fabric_spec(s.with_profile("fabric", profile, "cluster.wan_profile"));
  if (s.quantity("cluster.wan_bandwidth") > 0) wan.bandwidth = s.quantity("cluster.wan_bandwidth");
  if (s.quantity("cluster.wan_latency") > 0) wan.link_latency = s.quantity("cluster.wan_latency");
  if (wan.bandwidth <= 0)
    s.fail("cluster.wan_profile", "two-sites needs the WAN between the sites",
           "name a fabric profile (e.g. wan-10g) or set cluster.wan_bandwidth and cluster.wan_latency");
  if (wan.name.empty()) wan.name = "WAN";
  return wan;
}

}  // namespace

bool ClusterConfig::multi_gpu_nodes() const {
  if (groups.empty()) return gpus_per_node > 1;
  return std::any_of(groups.begin(), groups.end(),
                     [&](const NodeGroup& g) { return (g.gpus_per_node > 0 ? g.gpus_per_node : gpus_per_node) > 1; });
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
    s.fail("cluster.intra_node_fabric", "nodes hold several GPUs but nothing joins them",
           "name a fabric profile (e.g. nvlink4-nvswitch or pcie5-x16) or a .ini path");
  }

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

  // The shapes, as the platform builder will resolve them, with the server hosts the strategy adds.
  try {
    const auto plan = topology::plan_nodes(c, static_cast<int>(s.integer("cluster.workers")), make_gpu_spec(s),
                                           MathMode::Fp32);
    topology::check_shapes(c, plan,
                           server_hosts(parse_strategy(s.text("training.strategy")), static_cast<int>(s.integer("ps.servers"))));
  } catch (const topology::ShapeError& e) {
    s.fail(e.key(), e.what(), e.hint());
  }
  return c;
}

}  // namespace dtsim::sim
