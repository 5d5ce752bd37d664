// The simulated cluster: a SimGrid engine configured for dtsim and the hosts and links built from the
// GPU and fabric profiles.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <vector>

#include "sim/config/run_config.hpp"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

struct NetworkSettings {
  std::string model = "cm02";  // cm02 (max-min, alpha-beta) | ib (SimGrid's InfiniBand model: SMPI + contention penalties)
  bool crosstraffic = false;
  // SimGrid's network/TCP-gamma: each flow is capped at window / (2 · route latency). SimGrid has one value for
  // the whole platform; 4 MiB is its default.
  double tcp_window = 4194304.0;
};

// The settings a run's fabrics call for: TCP and WAN fabrics bring their window (the smallest one when
// several are in use); RDMA, NVLink and PCIe flows are not window-limited, so without a TCP fabric the cap
// is lifted (a window of 1e18 bytes is out of reach at any latency).
NetworkSettings network_settings(const RunConfig& config);

// Creates the process's one SimGrid engine (SimGrid does not support a second one in the same process)
// with dtsim's network model settings and quiet logging.
std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings);

// What strategies and collectives know about the simulated cluster.
struct Platform {
  std::vector<sg4::Host*> workers;              // one per GPU, rank order
  std::vector<int> node_of_worker;              // the server (node) each worker sits in
  std::vector<std::vector<int>> workers_of_node;  // the ranks of each node, ascending
  std::vector<sg4::Link*> worker_links;         // each worker's own first link (its NIC, or NVLink port)
  std::vector<sg4::Host*> servers;              // extra hosts asked for (parameter servers, aggregators)
  std::string description;                      // one line for people, e.g. "star, 8 × 1 GPU"

  int num_workers() const { return static_cast<int>(workers.size()); }
  int num_nodes() const { return static_cast<int>(workers_of_node.size()); }
};

// The platform restricted to `ranks` (ascending): those workers renumbered 0..k−1 in that order, their
// nodes renumbered by first appearance. Collectives run on it when only some workers take part (after a
// failure). Servers and the description are kept.
Platform worker_group(const Platform& platform, const std::vector<int>& ranks);

// Builds the cluster config.layout describes (topology, nodes, groups; sim/topology/) and installs the
// per-fabric calibration. The engine must exist and no platform may have been built yet. `servers` extra
// hosts (one port each, at the GPU's speed) take the ports after the worker nodes (in the first site of
// two-sites); a torus or dragonfly must have room for them, else InputError. Workers are hosts
// "worker<rank>", servers "server<i>".
//
// Latency: a route pays link_latency per link and switch_latency per switch it crosses (h·link +
// (h−1)·switch), on every fabric it crosses; a torus hop pays both (each hop enters a router). Bandwidth:
// links have their fabric's nominal bandwidth; each flow is scaled by the efficiency of the fabric that
// limits it (topology/calibration.cpp).
Platform build_platform(sg4::Engine& engine, const RunConfig& config, int servers = 0);

// Every worker behind one non-blocking switch: a full-duplex link per worker, so a route is
// worker → switch → worker and its latency is 2·link_latency + switch_latency.
Platform build_star(int workers, double host_speed, const FabricSpec& fabric, int servers = 0);

// Scales every flow's bandwidth by the fabric's efficiency (achievable over nominal), through SimGrid's
// per-communication factor callback, for a platform of one fabric (build_star). Call after it is built.
void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric);

// Latency of the route between two hosts, as SimGrid computes it.
double route_latency(sg4::Host* from, sg4::Host* to);

}  // namespace dtsim::sim
