#include "sim/config/heterogeneity_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "models/random.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

// Training strategies that react to failures: synchronous DP (timeouts, elastic membership or restarts),
// the parameter server (a lost worker is tolerated) and federated learning (a lost client is a straggler of
// its round); a scenario that combines [faults] with local SGD is refused up front rather than aborting.

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
  }
  c.step_probability = s.real("stragglers.step_probability");
  c.step_slowdown = s.real("stragglers.step_slowdown");
  c.lognormal_sigma = s.real("stragglers.lognormal_sigma");
  return c;
}

}  // namespace

const char* to_string(FaultTarget target) {
  switch (target) {
    case FaultTarget::Worker:
      return "worker";
    case FaultTarget::Node:
      return "node";
    case FaultTarget::Link:
      return "link";
  }
  return "?";
}

std::vector<int> choose_slow_workers(int workers, int count, uint64_t seed) {
  std::vector<int> ranks(static_cast<size_t>(workers));
  std::iota(ranks.begin(), ranks.end(), 0);
  models::Rng(seed, "slow-workers").shuffle(ranks);
  ranks.resize(static_cast<size_t>(std::clamp(count, 0, workers)));
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

HeterogeneityConfig make_heterogeneity_config(const Scenario& s) {
  const int workers = static_cast<int>(s.integer("cluster.workers"));
  const uint64_t seed = static_cast<uint64_t>(s.integer("run.seed"));
  HeterogeneityConfig c;
  c.stragglers = make_straggler_config(s, workers, seed);
  c.background.link_profiles =
      parse_at_key(s, "background.link_profile", [&](const std::string& t) { return parse_link_profiles(t, workers); });
  c.background.flows =
      parse_at_key(s, "background.flows", [&](const std::string& t) { return parse_background_flows(t, workers); });
  c.faults.events =
      parse_at_key(s, "faults.events", [&](const std::string& t) { return parse_fault_events(t, workers); });

  const StrategyDescriptor& strategy = strategy_descriptor(parse_strategy(s.text("training.strategy")));
  if (!c.faults.events.empty() && !strategy.survives_faults)
    s.fail("faults.events", std::string("training.strategy '") + strategy.name + "' cannot survive failures yet",
           "it has no timeout, elastic membership or restart; leave [faults] empty with this strategy");
  return c;
}

}  // namespace dtsim::sim
