// run.model_seed, run.data_seed and run.heterogeneity_seed: each defaults to run.seed, each drives its own
// stream only, and each is reported when it has no effect.
#include <gtest/gtest.h>

#include <set>

#include "sim/config/ignored_keys.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

const std::string kProfiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";

RunConfig config_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  return make_run_config(parse_scenario("s.ini", "[cluster]\nworkers = 16\n" + text, sets, kProfiles));
}

std::vector<int> slow_ranks(const RunConfig& c) {
  std::vector<int> ranks;
  for (const SlowWorker& w : c.heterogeneity.stragglers.slow_workers) ranks.push_back(w.worker);
  return ranks;
}

std::vector<std::string> ignored(const std::string& text, const std::vector<std::string>& sets) {
  const Scenario s = parse_scenario("s.ini", "[cluster]\nworkers = 16\n" + text, sets, kProfiles);
  std::vector<std::string> keys;
  for (const IgnoredKey& k : find_ignored_keys(make_run_config(s), s.origins())) keys.push_back(k.key);
  return keys;
}

const std::string kRandomStragglers = "[stragglers]\nslow_fraction = 0.25\n";

TEST(SeedStreams, EachDefaultsToRunSeed) {
  const RunConfig c = config_of("[run]\nseed = 42\n");
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.model_seed(), 42u);
  EXPECT_EQ(c.data_seed(), 42u);
  EXPECT_EQ(c.heterogeneity_seed(), 42u);
  const RunConfig d = config_of("[run]\nseed = 42\ndata_seed = 7\n");
  EXPECT_EQ(d.model_seed(), 42u);
  EXPECT_EQ(d.data_seed(), 7u);
  EXPECT_EQ(d.heterogeneity_seed(), 42u);
}

TEST(SeedStreams, TheDataAndModelSeedsLeaveTheSlowWorkersAlone) {
  const std::vector<int> reference = slow_ranks(config_of(kRandomStragglers + "[run]\nseed = 3\n"));
  ASSERT_EQ(reference.size(), 4u);
  for (const char* other : {"data_seed", "model_seed"})
    for (int v = 1; v <= 6; ++v)
      EXPECT_EQ(slow_ranks(config_of(kRandomStragglers, {"run.seed=3", std::string("run.") + other + "=" + std::to_string(v)})),
                reference)
          << other << " = " << v;
  // The heterogeneity seed chooses them: run.seed = 3 with heterogeneity_seed = v picks what run.seed = v picks.
  std::set<std::vector<int>> sets;
  for (int v = 1; v <= 6; ++v) {
    const std::vector<int> chosen = slow_ranks(config_of(kRandomStragglers, {"run.seed=3", "run.heterogeneity_seed=" + std::to_string(v)}));
    EXPECT_EQ(chosen, slow_ranks(config_of(kRandomStragglers, {"run.seed=" + std::to_string(v)}))) << v;
    sets.insert(chosen);
  }
  EXPECT_GT(sets.size(), 1u) << "six seeds, one choice of 4 workers out of 16";
}

TEST(SeedStreams, ASeedWithNothingToDrawIsReported) {
  EXPECT_EQ(ignored("", {"run.heterogeneity_seed=2"}), std::vector<std::string>{"run.heterogeneity_seed"});
  EXPECT_TRUE(ignored(kRandomStragglers, {"run.heterogeneity_seed=2"}).empty());
  EXPECT_TRUE(ignored("[stragglers]\nlognormal_sigma = 0.2\n", {"run.heterogeneity_seed=2"}).empty());
  EXPECT_TRUE(ignored("", {"run.data_seed=2", "run.model_seed=3"}).empty());
  // A timing-only run of a workload has no weights and no data.
  const std::vector<std::string> timing =
      ignored("[workload]\nname = resnet50\n", {"run.data_seed=2", "run.model_seed=3", "run.heterogeneity_seed=4"});
  EXPECT_EQ(timing, (std::vector<std::string>{"run.model_seed", "run.data_seed", "run.heterogeneity_seed"}));
}

TEST(SeedStreams, AreWholeNumbersInRange) {
  EXPECT_THROW(config_of("", {"run.data_seed=-1"}), InputError);
  EXPECT_THROW(config_of("", {"run.model_seed=x"}), InputError);
}

}  // namespace
}  // namespace dtsim::sim
