// FluidReplay: a replay network (schedule.hpp's ReplayNetwork) that moves transfers over the platform's links
// as SimGrid's CM02 model would, without actors: the aggregated and analytic fidelities time plans with it.
#pragma once

#include <simgrid/s4u.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "sim/collectives/schedule.hpp"

namespace dtsim::sim {

// A route between two ranks' hosts: its links, its latency and its bandwidth factor (the calibration's).
struct ReplayRoute {
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0.0;
  double factor = 1.0;
};

using ReplayRouteOf = std::function<const ReplayRoute&(int from, int to)>;
// How long after a transfer's delivery its receiver has the data: what the protocol's hop latency has beyond
// the route's (PlannedCollective::hop_extra).
using ReceiveWaitOf = std::function<double(int from, int to)>;

// A transfer of b payload bytes puts wire_bytes(b, bandwidth_fraction) on its route; `tcp_gamma` is SimGrid's
// network/TCP-gamma (a flow's share ≤ tcp_gamma / (2 · route latency)).
std::unique_ptr<ReplayNetwork> make_fluid_replay(ReplayRouteOf route_of, ReceiveWaitOf receive_wait,
                                                 double bandwidth_fraction, double tcp_gamma);

}  // namespace dtsim::sim
