// Links that concurrent analytic collectives share. An analytic call moves no flows, so SimGrid cannot share the
// links between two calls that run at once (ZeRO-3's weight gathers and gradient reduce-scatters); this does it
// for them: while k calls over the same ranks are in their link-bound part, each advances at 1/k of the rate it
// would have alone, which is what max-min sharing gives k equal flows on one bottleneck (processor sharing).
//
// Called from inside actors. The simulation runs one actor at a time, so the bookkeeping between two simcalls
// needs no lock. Nobody is woken: a call sleeps until the next departure the present sharing predicts (a call's
// end is the only event that speeds the others up, and it can be foreseen); a call that arrives meanwhile only
// makes the others wake early, recompute and sleep again.
#pragma once

#include <simgrid/s4u.hpp>

#include <list>
#include <map>
#include <memory>
#include <vector>

namespace dtsim::sim {

class SharedLinks {
 public:
  // Blocks the calling actor until `seconds` of the links' time (what the call would take alone) have been
  // served, sharing them equally with every other call on the same `ranks` in progress meanwhile.
  void serve(const std::vector<simgrid::s4u::Host*>& ranks, double seconds);

 private:
  struct Job {
    double remaining = 0;  // seconds of the links' time still to serve, at the full rate
    double done = 0;       // below this, what remains is rounding: the job has been served
    bool served(double now) const;
  };
  struct Channel {
    std::list<std::shared_ptr<Job>> jobs;
    double last_event = 0;  // simulated time up to which every job's remaining time is charged
    // Charges the time since the last event to every job still being served, at 1/k each.
    void advance();
    size_t sharing(double now) const;  // jobs still being served
  };
  std::map<std::vector<simgrid::s4u::Host*>, Channel> channels_;
};

}  // namespace dtsim::sim
