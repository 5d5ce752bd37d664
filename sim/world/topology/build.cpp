#include "sim/world/topology/build.hpp"

#include <algorithm>

namespace dtsim::sim::topology {
namespace {

std::string str(long long v) { return std::to_string(v); }

std::string plural(long long count, const std::string& noun) { return str(count) + " " + noun + (count == 1 ? "" : "s"); }

// Whether a fabric joining the GPUs of a node carries their traffic to each other only: NVLink, which a
// GPU's network traffic does not cross (GPUDirect RDMA goes GPU, PCIe, NIC). PCIe as the node's fabric is
// also the GPU's way to its NIC.
bool carries_only_gpu_traffic(const FabricSpec& intra) { return intra.protocol == FabricProtocol::Nvlink; }

}  // namespace

PlatformBuild::PlatformBuild(const PlatformSpec& spec, int servers)
    : spec_(spec), servers_(servers), calibration_(std::make_shared<LinkCalibration>(spec.fabric)) {
  nodes_ = plan_nodes(cluster(), spec.workers, spec.gpu, spec.math);
  check_shapes(cluster(), nodes_, servers);
  ports_are_zones_ = std::any_of(nodes_.begin(), nodes_.end(),
                                 [](const NodePlan& n) { return n.gpus > 1 || n.ports() > 1 || n.pcie_gpus > 0; });
  parts_.resize(nodes_.size());
  platform_.workers.assign(static_cast<size_t>(spec.workers), nullptr);
  platform_.worker_links.assign(static_cast<size_t>(spec.workers), nullptr);
  platform_.servers.assign(static_cast<size_t>(servers), nullptr);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::vector<int> ranks;
    for (int g = 0; g < nodes_[i].gpus; ++g) {
      ranks.push_back(nodes_[i].first_rank + g);
      platform_.node_of_worker.push_back(static_cast<int>(i));
    }
    platform_.workers_of_node.push_back(std::move(ranks));
  }
}

FabricMembers PlatformBuild::everyone() const {
  FabricMembers m;
  for (size_t i = 0; i < nodes_.size(); ++i) m.nodes.push_back(static_cast<int>(i));
  m.servers = servers_;
  return m;
}

void PlatformBuild::own(const sg4::SplitDuplexLink* link) {
  own_links_.insert(link->get_link_up());
  own_links_.insert(link->get_link_down());
}

Attachment PlatformBuild::wrap_host(sg4::NetZone* parent, const std::string& zone_name, const std::string& host_name,
                                    double speed, sg4::Host** host) {
  sg4::NetZone* zone = sg4::create_star_zone(zone_name);
  zone->set_parent(parent);
  NetPoint* gateway = zone->create_router(zone_name + ".nic");
  zone->add_route(gateway, nullptr, nullptr, nullptr, {}, true);
  *host = zone->create_host(host_name, speed);
  zone->add_route((*host)->get_netpoint(), nullptr, nullptr, nullptr, {}, true);
  zone->seal();
  return {zone->get_netpoint(), gateway};
}

Attachment PlatformBuild::attach(sg4::NetZone* parent, const Port& port, const std::string& site) {
  switch (port.kind) {
    case Port::Kind::Idle:
      return {parent->create_router(parent->get_name() + ".idle" + str(idle_ports_++)), nullptr};
    case Port::Kind::Server: {
      const std::string name = "server" + str(port.index);
      const double speed = spec_.gpu.sustained(spec_.math);
      sg4::Host*& host = platform_.servers[static_cast<size_t>(port.index)];
      if (ports_are_zones_) return wrap_host(parent, name + ".node", name, speed, &host);
      host = parent->create_host(name, speed);
      return {host->get_netpoint(), nullptr};
    }
    case Port::Kind::Border: {
      // Where a site meets the WAN. A host that runs nothing rather than a router, because SimGrid 3.32's
      // fat-tree zone does not route to routers.
      const std::string name = site + ".border";
      sg4::Host* host = nullptr;
      Attachment a;
      if (ports_are_zones_) {
        a = wrap_host(parent, name + ".node", name, 1.0, &host);
      } else {
        host = parent->create_host(name, 1.0);
        a = {host->get_netpoint(), nullptr};
      }
      borders_.emplace_back(site, host);
      return a;
    }
    case Port::Kind::Nic: break;
  }
  if (ports_are_zones_) return attach_nic(parent, port.index, port.nic);
  const NodePlan& node = nodes_[static_cast<size_t>(port.index)];
  sg4::Host* host = parent->create_host("worker" + str(node.first_rank), node.gpu_speed);
  platform_.workers[static_cast<size_t>(node.first_rank)] = host;
  return {host->get_netpoint(), nullptr};
}

Attachment PlatformBuild::attach_nic(sg4::NetZone* parent, int node_index, int port) {
  const NodePlan& node = nodes_[static_cast<size_t>(node_index)];
  const std::string node_name = "node" + str(node_index);
  const std::string zone_name = node.ports() == 1 ? node_name : node_name + ".slice" + str(port);
  const FabricSpec& intra = cluster().intra_node_fabric;
  // A star zone sends every route of a GPU through its one port link, which is right where that port is
  // the GPU's PCIe link (its network traffic crosses it too) but not for NVLink: a GPU reaches its NIC over
  // PCIe, so its network traffic leaves the NVLink port free for the other GPUs. Such slices are full
  // zones, each pair's route written out.
  const bool port_off_nic_route = node.gpus > 1 && carries_only_gpu_traffic(intra);
  sg4::NetZone* zone = port_off_nic_route ? sg4::create_full_zone(zone_name) : sg4::create_star_zone(zone_name);
  zone->set_parent(parent);
  NetPoint* gateway = zone->create_router(node_name + ".nic" + str(port));
  // Traffic between the slice's GPUs and its NIC crosses the slice's PCIe switch, if there is one: the
  // switch's link is on the NIC's own route in the slice, so routes between GPUs (to each other, to the
  // node's switch) do not take it. UP is towards the network.
  sg4::SplitDuplexLink* pcie = pcie_switch_of(parent, node_index, port);
  NetPoint* switch_port = nullptr;  // where routes from the node's other slices come in (add_intra_node_routes)
  if (node.ports() > 1) {
    NodeParts& parts = parts_[static_cast<size_t>(node_index)];
    switch_port = zone->create_router(zone_name + ".switch");
    parts.slices.resize(static_cast<size_t>(node.ports()), nullptr);
    parts.switch_ports.resize(static_cast<size_t>(node.ports()), nullptr);
    parts.slices[static_cast<size_t>(port)] = zone;
    parts.switch_ports[static_cast<size_t>(port)] = switch_port;
  }
  std::vector<sg4::Host*> hosts;
  std::vector<int> ranks;
  std::vector<sg4::SplitDuplexLink*> ports;  // each GPU's port into the node's switch
  for (int g = port * node.gpus_per_port(); g < (port + 1) * node.gpus_per_port(); ++g) {
    const int rank = node.first_rank + g;
    const std::string name = "worker" + str(rank);
    sg4::Host* host = zone->create_host(name, node.gpu_speed);
    platform_.workers[static_cast<size_t>(rank)] = host;
    hosts.push_back(host);
    ranks.push_back(rank);
    if (node.gpus == 1) {  // nothing inside the node: its NIC port (or its own PCIe switch) is the first link
      if (pcie) platform_.worker_links[static_cast<size_t>(rank)] = pcie;
      continue;
    }
    // The GPU's port into the node's switch, on every route to another GPU of the node (port, switch,
    // port). Half the switch latency on each port, as on the fabric. Created in the fabric zone, not the
    // slice's: SimGrid checks every new link's name against every zone's links, and that check is 4.6×
    // faster when thousands of slice zones hold none (4096 GPUs on rails: 1.3 s instead of 6 s). A link
    // serves routes of any zone.
    sg4::SplitDuplexLink* link = parent->create_split_duplex_link(name + ".port", intra.bandwidth);
    link->set_latency(intra.link_latency + intra.switch_latency / 2.0);
    own(link);
    calibration_->add(link, intra);
    ports.push_back(link);
  }
  using Dir = sg4::LinkInRoute::Direction;
  if (!port_off_nic_route) {
    std::vector<sg4::LinkInRoute> nic_route;
    if (pcie) nic_route.emplace_back(pcie, Dir::DOWN);
    zone->add_route(gateway, nullptr, nullptr, nullptr, nic_route, true);
    if (switch_port) zone->add_route(switch_port, nullptr, nullptr, nullptr, {}, true);
    for (size_t i = 0; i < hosts.size(); ++i) {
      std::vector<sg4::LinkInRoute> own_route;
      if (!ports.empty()) {  // the port is also the worker's way to the network (its own link)
        own_route.emplace_back(ports[i], Dir::UP);
        platform_.worker_links[static_cast<size_t>(ranks[i])] = ports[i];
      }
      zone->add_route(hosts[i]->get_netpoint(), nullptr, nullptr, nullptr, own_route, true);
    }
    zone->seal();
    return {zone->get_netpoint(), gateway};
  }
  // GPU to NIC: the PCIe switch's link, or, without one, a link of the GPU's own at the NIC port's
  // bandwidth (a full zone takes no empty route). Only that GPU's network flows cross it, a subset of its
  // NIC's, so it limits none of them beyond the NIC. (A fat pipe shared by the slice's GPUs would not do:
  // SimGrid weighs a flow's share of any link by its route latency, and a fat pipe as narrow as the NIC
  // would then hold back flows of long routes that share it with short ones.)
  for (size_t i = 0; i < hosts.size(); ++i) {
    NetPoint* gpu = hosts[i]->get_netpoint();
    sg4::SplitDuplexLink* to_nic = pcie;
    if (!to_nic) {
      to_nic = parent->create_split_duplex_link(hosts[i]->get_name() + ".to-nic",
                                                port_bandwidth({Port::Kind::Nic, node_index, port}));
      to_nic->set_latency(0.0);
      own(to_nic);
    }
    // The worker's own link (faults.events' `link N`, background.link_profile) is its way to the network.
    platform_.worker_links[static_cast<size_t>(ranks[i])] = to_nic;
    zone->add_route(gpu, gateway, nullptr, nullptr, {{to_nic, Dir::UP}}, true);
    if (switch_port) zone->add_route(gpu, switch_port, nullptr, nullptr, {{ports[i], Dir::UP}}, true);
    for (size_t j = i + 1; j < hosts.size(); ++j)
      zone->add_route(gpu, hosts[j]->get_netpoint(), nullptr, nullptr, {{ports[i], Dir::UP}, {ports[j], Dir::DOWN}},
                      true);
  }
  zone->seal();
  return {zone->get_netpoint(), gateway};
}

// The link of the PCIe switch that `port` of the node hangs off (created with the switch's first slice), or
// nullptr without PCIe switches. Crossing it is GPU → switch → NIC: two PCIe links and the switch.
sg4::SplitDuplexLink* PlatformBuild::pcie_switch_of(sg4::NetZone* parent, int node_index, int port) {
  const NodePlan& node = nodes_[static_cast<size_t>(node_index)];
  if (node.pcie_gpus == 0) return nullptr;
  std::vector<sg4::SplitDuplexLink*>& links = parts_[static_cast<size_t>(node_index)].pcie;
  links.resize(static_cast<size_t>(node.pcie_switches()), nullptr);
  const int index = port * node.gpus_per_port() / node.pcie_gpus;  // the switch of the port's first GPU
  sg4::SplitDuplexLink*& link = links[static_cast<size_t>(index)];
  if (!link) {
    const FabricSpec& pcie = cluster().pcie_switch;
    link = parent->create_split_duplex_link("node" + str(node_index) + ".pcie" + str(index), pcie.bandwidth);
    link->set_latency(2.0 * pcie.link_latency + pcie.switch_latency);
    own(link);
    calibration_->add(link, pcie);
  }
  return link;
}

double PlatformBuild::port_bandwidth(const Port& port) const {
  if (port.kind != Port::Kind::Nic) return fabric().bandwidth;
  return fabric().bandwidth * nodes_[static_cast<size_t>(port.index)].port_width();
}

void PlatformBuild::add_intra_node_routes(sg4::NetZone* fabric_zone, const std::vector<int>& nodes) {
  const FabricSpec& intra = cluster().intra_node_fabric;
  for (const int index : nodes) {
    const NodePlan& node = nodes_[static_cast<size_t>(index)];
    if (node.ports() < 2) continue;
    NodeParts& parts = parts_[static_cast<size_t>(index)];
    // SimGrid wants a link on a bypass route: the node's switch, as a fat pipe that limits no flow beyond
    // its ports (a non-blocking NVSwitch or PCIe switch) and adds no latency (the ports carry it).
    parts.crossbar = fabric_zone->create_link("node" + str(index) + ".switch", intra.bandwidth);
    parts.crossbar->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    parts.crossbar->set_latency(0.0);
    parts.crossbar->seal();
    own(parts.crossbar);
    calibration_->add(parts.crossbar, intra);
    for (int a = 0; a < node.ports(); ++a)
      for (int b = 0; b < node.ports(); ++b)
        if (a != b)
          fabric_zone->add_bypass_route(parts.slices[static_cast<size_t>(a)]->get_netpoint(),
                                        parts.slices[static_cast<size_t>(b)]->get_netpoint(),
                                        parts.switch_ports[static_cast<size_t>(a)],
                                        parts.switch_ports[static_cast<size_t>(b)], {sg4::LinkInRoute(parts.crossbar)});
  }
}

sg4::Host* PlatformBuild::host_behind(const Port& port) const {
  switch (port.kind) {
    case Port::Kind::Idle: return nullptr;
    case Port::Kind::Server: return platform_.servers[static_cast<size_t>(port.index)];
    case Port::Kind::Border: return nullptr;  // see border_of
    case Port::Kind::Nic: break;
  }
  const NodePlan& node = nodes_[static_cast<size_t>(port.index)];
  return platform_.workers[static_cast<size_t>(node.first_rank + port.nic * node.gpus_per_port())];
}

sg4::Host* PlatformBuild::border_of(const std::string& site) const {
  for (const auto& [name, host] : borders_)
    if (name == site) return host;
  return nullptr;
}

std::string PlatformBuild::describe_nodes() const {
  std::string text;
  const auto gpus_text = [](int gpus, const std::string& name) { return plural(gpus, "GPU") + " " + name; };
  if (cluster().groups.empty()) {
    text = str(static_cast<long long>(nodes_.size())) + " × " + plural(nodes_.front().gpus, "GPU");
  } else {
    for (size_t g = 0; g < cluster().groups.size(); ++g) {
      const NodeGroup& group = cluster().groups[g];
      const auto first = std::find_if(nodes_.begin(), nodes_.end(), [&](const NodePlan& n) { return n.group == int(g); });
      text += (text.empty() ? "" : " + ") + group.name + ": " + str(group.nodes) + " × " +
              gpus_text(first->gpus, group.gpu.name);
    }
  }
  if (ports_are_zones_ && cluster().has_intra_node_fabric) text += ", joined by " + cluster().intra_node_fabric.name;
  if (cluster().nics_per_node > 1) {
    text += ", " + str(cluster().nics_per_node) + " NICs per node";
    const auto bonded = [](const NodePlan& n) { return n.port_width() > 1; };
    if (std::all_of(nodes_.begin(), nodes_.end(), bonded))
      text += " (" + str(nodes_.front().port_width()) + " bonded per GPU)";
    else if (std::any_of(nodes_.begin(), nodes_.end(), bonded))
      text += " (bonded per GPU where a node has fewer GPUs than NICs)";
    if (cluster().rail_optimized) text += " on rails";
  }
  if (cluster().has_pcie_switch) {
    const auto widest = std::max_element(nodes_.begin(), nodes_.end(),
                                         [](const NodePlan& a, const NodePlan& b) { return a.pcie_gpus < b.pcie_gpus; });
    const bool uniform = std::all_of(nodes_.begin(), nodes_.end(),
                                     [&](const NodePlan& n) { return n.pcie_gpus == widest->pcie_gpus; });
    text += ", GPUs reach their NICs over one " + cluster().pcie_switch.name + " link per " + (uniform ? "" : "up to ") +
            (widest->pcie_gpus == 1 ? std::string("GPU") : plural(widest->pcie_gpus, "GPU"));
  }
  if (servers_ > 0) text += ", " + plural(servers_, "server");
  return text;
}

Platform PlatformBuild::finish(const std::vector<Fabric>& fabrics, const std::string& topology_description) {
  for (const Fabric& fabric : fabrics) {
    if (!fabric.zone_made_ports) continue;
    std::vector<sg4::Host*> hosts;
    std::vector<const Port*> ports;
    for (const Port& port : fabric.ports) {
      sg4::Host* host = port.kind == Port::Kind::Border ? border_of(fabric.zone->get_name()) : host_behind(port);
      if (!host) continue;
      hosts.push_back(host);
      ports.push_back(&port);
    }
    const std::vector<PortLinks> links = find_ports(hosts, own_links_);
    if (fabric.set_port_latency) set_port_latencies(links, port_latency());
    // In a fabric of bonded links, a server or a border has one NIC.
    if (fabric.link_width > 1)
      for (size_t i = 0; i < ports.size(); ++i)
        if (ports[i]->kind != Port::Kind::Nic)
          for (sg4::Link* link : {links[i].up, links[i].down})
            if (link) link->set_bandwidth(port_bandwidth(*ports[i]));
    // A worker that is a bare host starts its routes on the port the zone made for it.
    for (size_t i = 0; i < ports.size(); ++i)
      if (ports[i]->kind == Port::Kind::Nic && !ports_are_zones_)
        platform_.worker_links[static_cast<size_t>(nodes_[static_cast<size_t>(ports[i]->index)].first_rank)] = links[i].up;
  }
  platform_.description = topology_description + ", " + describe_nodes();
  platform_.calibration = calibration_;
  return std::move(platform_);
}

}  // namespace dtsim::sim::topology
