// Puts a run's heterogeneity into the simulated cluster: slow workers become slower hosts, bandwidth
// profiles and failures become links and hosts changed or switched off and on at exact simulated times,
// background flows become competing transfers.
//
// How it is done in SimGrid 3.32, and why:
// - Slow workers: a constant host speed profile (a fraction of peak). Host profiles may be set after the
//   platform is sealed; link profiles may not (3.32 aborts: "Cannot set a bandwidth profile once the Link is
//   sealed"), and the platform builder seals its zones.
// - Link bandwidth changes and all failures: kernel timers (simgrid::kernel::timer::Timer) that call
//   Link::set_bandwidth, Host/Link::turn_off and turn_on at their date. Timers need no actor and no host, so
//   no failure can take the controller down with it, and they fire before any actor runs at that date.
//   A pending timer keeps SimGrid's clock running after the last actor ended, so the timers are cancelled
//   as soon as no (non-daemon) actor is left, unless an actor registered with restart_when_host_returns is
//   waiting for its host to come back.
// - Background flows: a pair of daemon actors (sender on the source, receiver on the destination) created
//   at the flow's start; a mailbox transfer, because 3.32 ignores Comm::set_rate on host-to-host sendto.
//
// What a failure does (verified in 3.32, see tests/sim/faults_timing_test.cpp):
// - Host down at t: every actor on it is killed at t (a simgrid::ForcefulKillException unwinds its stack;
//   this_actor::on_exit callbacks run with failed = true). It is not a HostFailureException: that one is
//   raised at t in an actor on another host that waits for an execution placed on the failed host
//   (exec_init(flops)->set_host(h)). A peer in a transfer with a killed actor gets a
//   simgrid::NetworkFailureException at t. New actors cannot start on a host that is down.
// - Link down at t: every transfer whose route crosses it fails at t with NetworkFailureException, on both
//   sides.
// - Back up at t2: the host and link work again; an execution or transfer started after t2 takes its usual
//   time. Killed actors stay dead unless marked auto-restart (restart_when_host_returns), in which case
//   SimGrid starts them again from the beginning of their function at t2.
#pragma once

#include <functional>
#include <memory>
#include <simgrid/s4u.hpp>

#include "sim/config/run_config.hpp"
#include "sim/world/faults.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/stragglers.hpp"

namespace dtsim::sim {

class HeterogeneityRuntime {
 public:
  const StragglerModel& stragglers() const;
  const FaultSchedule& faults() const;

  // Calls `listener` at the exact simulated time of each fault transition, right after the host or link was
  // switched. It runs in SimGrid's kernel context: it must not block (no execute, sleep or transfer); it may
  // set flags, create actors or cancel activities. Listeners run in registration order, transitions in
  // FaultSchedule::transitions() order.
  void on_fault(std::function<void(const FaultTransition&)> listener);

  // Marks `actor` (which must run on a worker's host) to be started again from scratch when its host comes
  // back after a failure (SimGrid's auto-restart), and keeps the simulation going while it waits, even if no
  // other actor is alive. The restarted actor has the same name and host but is a new Actor object.
  void restart_when_host_returns(const sg4::ActorPtr& actor);

  // While set, the simulation goes on with no actor alive as long as a failed worker is yet to return: a
  // strategy that found every worker down waits for one (its listener then starts an actor there).
  void wait_for_a_worker(bool waiting);

  struct State;  // shared with the timers and signal handlers that outlive the call to apply_heterogeneity

 private:
  friend HeterogeneityRuntime apply_heterogeneity(sg4::Engine&, const Platform&, const RunConfig&);
  std::shared_ptr<State> state_;
};

// Applies config.heterogeneity to the platform. Call once, right after build_platform and before any actor
// is created or the engine runs. Keep the result until Engine::run() returns. Throws InputError when a fault
// names a node the platform does not have.
[[nodiscard]] HeterogeneityRuntime apply_heterogeneity(sg4::Engine& engine, const Platform& platform,
                                                       const RunConfig& config);

// The links that carry a worker link's traffic: both directions of a split-duplex link, else the link itself.
std::vector<sg4::Link*> link_directions(sg4::Link* link);

}  // namespace dtsim::sim
