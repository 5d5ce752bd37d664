// The simulated cluster: a SimGrid engine configured for dtsim and the hosts and links built from the
// GPU and fabric profiles.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <vector>

#include "sim/config.hpp"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

struct NetworkSettings {
  std::string model = "cm02";
  bool crosstraffic = false;
};

// Creates the process's one SimGrid engine (SimGrid does not support a second one in the same process)
// with dtsim's network model settings and quiet logging.
std::unique_ptr<sg4::Engine> create_engine(const NetworkSettings& settings);

struct Platform {
  std::vector<sg4::Host*> workers;  // rank order
};

// Every worker behind one non-blocking switch: a full-duplex link per worker, so a route is
// worker → switch → worker and its latency is 2·link_latency + switch_latency.
Platform build_star(int workers, double host_speed, const FabricSpec& fabric);

// Scales every flow's bandwidth by the fabric's efficiency (achievable over nominal), through SimGrid's
// per-communication factor callback. Call after the platform is built.
void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric);

// Latency of the route between two hosts, as SimGrid computes it.
double route_latency(sg4::Host* from, sg4::Host* to);

}  // namespace dtsim::sim
