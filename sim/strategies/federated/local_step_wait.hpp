// How a federated client waits for one local step's execution, shared by federated learning and its
// timing-only twin (sim/strategies/timing/fl_timing.hpp), so that both cut a step at the same instant.
#pragma once

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include <cmath>

namespace dtsim::sim {

// Waits for `exec` until `cutoff` (simulated seconds; infinite: until it ends). Returns false when the cutoff
// came first (the step is cancelled and does not count) or the server cancelled it.
inline bool wait_local_step(const simgrid::s4u::ExecPtr& exec, double cutoff) {
  try {
    if (!std::isfinite(cutoff)) {
      exec->wait();
      return true;
    }
    try {
      exec->wait_until(cutoff);
    } catch (const simgrid::TimeoutException&) {
      exec->cancel();
      return false;
    }
    return true;
  } catch (const simgrid::Exception&) {
    return false;  // cancelled by the server
  }
}

}  // namespace dtsim::sim
