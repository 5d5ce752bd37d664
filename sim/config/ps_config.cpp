#include "sim/config/ps_config.hpp"

#include "models/staleness.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/key_builders.hpp"
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
  return c;
}

int server_hosts(const RunConfig& config) { return server_hosts(config.strategy, config.ps.servers); }

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: the asynchronous parameter server.
using namespace key_builders;

void add_ps_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      integer("ps.servers", "1", between(1, 1024),
              "Parameter-server shards, each on its own dedicated host after the worker nodes; the model's "
              "tensors are split over them in contiguous ranges of whole tensors, balanced by size"),
      integer("ps.staleness_bound", "-1", between(-1, 1e9),
              "Bounded staleness s: a shard holds a worker's pull (blocking it) while serving it could let a "
              "gradient be applied more than s updates after its pull; -1 = unbounded (plain asynchronous)"),
      integer("ps.gradients_per_update", "1", between(1, 1e6),
              "n-softsync (Zhang et al. 2016): a shard applies the average of this many gradients as one update; "
              "1 = every gradient is an update"),
      choice("ps.staleness_lr", "none", models::staleness_rule_names(),
             "Staleness-aware learning rate for a gradient of staleness s: none; inverse = lr/s (s >= 1); "
             "polynomial = lr (1+s)^-a; hinge = lr for s <= b, else lr / (a (s-b) + 1)"),
      real("ps.staleness_exponent", "0.5", positive(100), "a of the polynomial (exponent) and hinge (slope) rules"),
      real("ps.staleness_threshold", "4", at_least(0), "b of the hinge rule: staleness that keeps the full rate"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
