// Scenario keys: what makes workers unequal — slow nodes, random slowdowns, background traffic, failures.
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

using namespace key_builders;

void add_heterogeneity_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- stragglers -------------------------------------------------------------------------------------
      text("stragglers.slow_workers", "",
           "Workers slower for the whole run: ranks and ranges, e.g. '3, 8-11'; an item may carry its own "
           "speed factor, '5:0.25'",
           true),
      real("stragglers.slow_fraction", "0", between(0, 1),
           "Or: this fraction of the workers (rounded to the nearest count) is slow, chosen at random from run.seed"),
      real("stragglers.slow_factor", "0.5", fraction_open_closed(),
           "Speed of a slow worker as a fraction of the GPU's sustained FLOP rate (it becomes the host's speed)"),
      real("stragglers.step_probability", "0", between(0, 1),
           "Chance that a worker's step is slowed down, drawn independently per worker and step from run.seed"),
      real("stragglers.step_slowdown", "2", at_least(1), "How many times longer a slowed step's compute takes"),
      real("stragglers.lognormal_sigma", "0", between(0, 3),
           "Jitter: every step's compute time is multiplied by exp(sigma*Z - sigma^2/2), Z standard normal, "
           "a lognormal factor of mean one (median exp(-sigma^2/2)); 0 = none"),
      // ---- background -------------------------------------------------------------------------------------
      text("background.link_profile", "",
           "Bandwidth of worker links over time as a fraction of nominal, both directions: "
           "'worker3: 0s 100%, 0.5s 50%, 1.5s 100%'; targets: ranks, ranges or 'all'; end an item with "
           "'every 2s' to repeat it; items separated by ';'",
           true),
      text("background.flows", "",
           "Competing traffic between workers, sharing links fairly with training: "
           "'worker0 -> worker3 from 1s to 2s at 5GB/s' ('for 1s' instead of 'to'; no 'at' = no rate cap; "
           "no 'to' = until the end); items separated by ';'",
           true),
      // ---- faults -----------------------------------------------------------------------------------------
      text("faults.events", "",
           "Failures at fixed simulated times: 'worker 3 down at 10s up at 20s; link 5 down at 1s for 2s; "
           "node 1 down at 30s' (link N = worker N's own link; a node takes all its workers down). Work running "
           "on a failed host or link fails at that moment",
           true),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
