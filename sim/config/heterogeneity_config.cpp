#include "sim/config/heterogeneity_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "models/random.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

template <class Parse>
auto parse_at_key(const Scenario& s, const std::string& key, Parse&& parse) {
  try {
    return parse(s.text(key));
  } catch (const ValueError& e) {
    s.fail(key, e.what(), e.hint());
  }
}

StragglerConfig make_straggler_config(const Scenario& s, int workers, uint64_t seed) {
  StragglerConfig c;
  const double factor = s.real("stragglers.slow_factor");
  c.slow_workers = parse_at_key(s, "stragglers.slow_workers",
                                [&](const std::string& t) { return parse_slow_workers(t, factor, workers); });
  const double fraction = s.real("stragglers.slow_fraction");
  if (fraction > 0) {
    if (!c.slow_workers.empty())
      s.fail("stragglers.slow_fraction", "both slow_workers and slow_fraction choose the slow workers",
             "set only one of them");
    const int count = static_cast<int>(std::lround(fraction * workers));
    if (count == 0) {
      char least[32];
      std::snprintf(least, sizeof least, "%.3g", 0.5 / workers);
      s.fail("stragglers.slow_fraction",
             "a fraction of " + s.text("stragglers.slow_fraction") + " of " + std::to_string(workers) +
                 " workers rounds to no worker",
             std::string("raise it to at least ") + least + ", or list the workers in slow_workers");
    }
    for (const int w : choose_slow_workers(workers, count, seed)) c.slow_workers.push_back({w, factor});
    c.chosen_at_random = true;
  }
  c.step_probability = s.real("stragglers.step_probability");
  c.step_slowdown = s.real("stragglers.step_slowdown");
  c.lognormal_sigma = s.real("stragglers.lognormal_sigma");
  return c;
}

}  // namespace

const models::NameTable<FaultTarget>& fault_target_table() {
  static const models::NameTable<FaultTarget> table{
      {FaultTarget::Worker, "worker"}, {FaultTarget::Node, "node"}, {FaultTarget::Link, "link"}};
  return table;
}

const char* to_string(FaultTarget target) { return fault_target_table().name(target); }

std::vector<int> choose_slow_workers(int workers, int count, uint64_t seed) {
  std::vector<int> ranks(static_cast<size_t>(workers));
  std::iota(ranks.begin(), ranks.end(), 0);
  models::Rng(seed, "slow-workers").shuffle(ranks);
  ranks.resize(static_cast<size_t>(std::clamp(count, 0, workers)));
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

HeterogeneityConfig make_heterogeneity_config(const Scenario& s, int workers, uint64_t seed) {
  HeterogeneityConfig c;
  c.stragglers = make_straggler_config(s, workers, seed);
  c.background.link_profiles =
      parse_at_key(s, "background.link_profile", [&](const std::string& t) { return parse_link_profiles(t, workers); });
  c.background.flows =
      parse_at_key(s, "background.flows", [&](const std::string& t) { return parse_background_flows(t, workers); });
  c.faults.events =
      parse_at_key(s, "faults.events", [&](const std::string& t) { return parse_fault_events(t, workers); });

  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: what makes workers unequal — slow nodes, random slowdowns, background traffic, failures.
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
      real("stragglers.step_slowdown", "2", between(1, 1e6), "How many times longer a slowed step's compute takes"),
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
