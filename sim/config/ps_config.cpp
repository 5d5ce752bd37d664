#include "sim/config/ps_config.hpp"

#include <algorithm>

#include "sim/config/run_config.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

PsConfig make_ps_config(const Scenario& s) {
  PsConfig c;
  c.servers = static_cast<int>(s.integer("ps.servers"));
  c.staleness_bound = static_cast<int>(s.integer("ps.staleness_bound"));
  c.gradients_per_update = static_cast<int>(s.integer("ps.gradients_per_update"));
  c.staleness_lr = models::parse_staleness_rule(s.text("ps.staleness_lr"));  // a choice key: always valid
  c.staleness_exponent = s.real("ps.staleness_exponent");
  c.staleness_threshold = s.real("ps.staleness_threshold");
  if (!reads_section(parse_strategy(s.text("training.strategy")), "ps")) return c;

  // The bound's proof counts one update per gradient; with softsync a gradient can wait in a shard's buffer
  // for gradients that the bound itself holds back.
  if (c.bounded() && c.gradients_per_update > 1)
    s.fail("ps.staleness_bound", "bounded staleness cannot be combined with ps.gradients_per_update > 1",
           "use one of them: set ps.staleness_bound = -1 or ps.gradients_per_update = 1");
  // The server tells a worker that is cut off by its host's failure; a link that fails under a live worker
  // would need timeouts on both sides, which this server does not model.
  const auto events = parse_fault_events(s.text("faults.events"), static_cast<int>(s.integer("cluster.workers")));
  if (std::any_of(events.begin(), events.end(), [](const FaultEvent& e) { return e.target == FaultTarget::Link; }))
    s.fail("faults.events", "async-ps survives worker and node failures, not link failures",
           "fail the worker ('worker N down at …') instead of its link");
  return c;
}

int server_hosts(const RunConfig& config) { return server_hosts(config.strategy, config.ps.servers); }

}  // namespace dtsim::sim
