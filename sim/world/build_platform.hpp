// Building the simulated cluster from what the configuration says of it (PlatformSpec: topology, nodes,
// GPU, fabric, network model), and the engine settings that go with it.
#pragma once

#include "sim/config/platform_spec.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

// The settings a run's fabrics call for: TCP and WAN fabrics bring their window (the smallest one when
// several are in use); RDMA, NVLink and PCIe flows are not window-limited, so without a TCP fabric the cap
// is lifted (a window of 1e18 bytes is out of reach at any latency).
NetworkSettings network_settings(const PlatformSpec& spec);

// Builds the cluster spec.layout describes (topology, nodes, groups; sim/topology/) and installs the
// per-fabric calibration. The engine must exist and no platform may have been built yet. `servers` extra
// hosts (one port each, at the GPU's speed) take the ports after the worker nodes (in the first site of
// two-sites); a torus or dragonfly must have room for them, else InputError. Workers are hosts
// "worker<rank>", servers "server<i>".
//
// Latency: a route pays link_latency per link and switch_latency per switch it crosses (h·link +
// (h−1)·switch), on every fabric it crosses; a torus hop pays both (each hop enters a router). Bandwidth:
// links have their fabric's nominal bandwidth; each flow is scaled by the efficiency of the fabric that
// limits it (topology/calibration.cpp).
Platform build_platform(sg4::Engine& engine, const PlatformSpec& spec, int servers = 0);

// Every worker behind one non-blocking switch: a full-duplex link per worker, so a route is
// worker → switch → worker and its latency is 2·link_latency + switch_latency.
Platform build_star(int workers, double host_speed, const FabricSpec& fabric, int servers = 0);

// Scales every flow's bandwidth by the fabric's efficiency (achievable over nominal), through SimGrid's
// per-communication factor callback, for a platform of one fabric (build_star). Call after it is built.
void install_fabric_calibration(sg4::Engine& engine, const FabricSpec& fabric);

}  // namespace dtsim::sim
