// The [stragglers], [background] and [faults] keys: what they resolve to, and one-line InputErrors that name
// the key for every kind of bad input. Also the fault schedule's queries (no simulation needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "sim/config/run_config.hpp"
#include "sim/world/faults.hpp"
#include "sim/config/heterogeneity_parse.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

const std::string kProfiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";

HeterogeneityConfig config_of(const std::string& text) {
  return make_run_config(parse_scenario("h.ini", "[cluster]\nworkers = 8\n" + text, {}, kProfiles)).heterogeneity;
}

// The InputError's message, or "" when there is none.
std::string error_of(const std::string& text) {
  try {
    config_of(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Asserts a one-line error at `key` (the file's line where it was set) that mentions `words`.
void expect_error(const std::string& text, const std::string& key, const std::string& words) {
  const std::string e = error_of(text);
  EXPECT_NE(e.find("h.ini:"), std::string::npos) << text << "\n→ " << e;
  EXPECT_NE(e.find(key + ": "), std::string::npos) << text << "\n→ " << e;
  EXPECT_NE(e.find(words), std::string::npos) << text << "\n→ " << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(HeterogeneityConfig, DefaultsAreANominalCluster) {
  const HeterogeneityConfig h = config_of("");
  EXPECT_TRUE(h.empty());
  EXPECT_FALSE(h.stragglers.has_random_slowdowns());
}

TEST(HeterogeneityConfig, SlowWorkersWithRangesAndOwnFactors) {
  const HeterogeneityConfig h = config_of("[stragglers]\nslow_workers = 3, 5-6, worker 7:0.25\nslow_factor = 0.4\n");
  ASSERT_EQ(h.stragglers.slow_workers.size(), 4u);
  const int ranks[] = {3, 5, 6, 7};
  const double factors[] = {0.4, 0.4, 0.4, 0.25};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(h.stragglers.slow_workers[i].worker, ranks[i]);
    EXPECT_DOUBLE_EQ(h.stragglers.slow_workers[i].speed_factor, factors[i]);
  }
}

TEST(HeterogeneityConfig, SlowFractionIsASeededChoice) {
  const HeterogeneityConfig a = config_of("[stragglers]\nslow_fraction = 0.25\n");
  const HeterogeneityConfig b = config_of("[stragglers]\nslow_fraction = 0.25\n");
  ASSERT_EQ(a.stragglers.slow_workers.size(), 2u);  // round(0.25 × 8)
  EXPECT_EQ(a.stragglers.slow_workers[0].worker, b.stragglers.slow_workers[0].worker);
  EXPECT_EQ(a.stragglers.slow_workers[1].worker, b.stragglers.slow_workers[1].worker);
  EXPECT_LT(a.stragglers.slow_workers[0].worker, a.stragglers.slow_workers[1].worker);
  EXPECT_DOUBLE_EQ(a.stragglers.slow_workers[0].speed_factor, 0.5);
  // Other seeds pick other workers (over a few seeds, not all the same pair), always `count` distinct ranks.
  std::set<std::vector<int>> picks;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<int> w = choose_slow_workers(64, 16, seed);
    EXPECT_EQ(std::set<int>(w.begin(), w.end()).size(), 16u);
    EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
    picks.insert(w);
  }
  EXPECT_GT(picks.size(), 1u);
  EXPECT_EQ(choose_slow_workers(64, 16, 3), choose_slow_workers(64, 16, 3));
}

TEST(HeterogeneityConfig, LinkProfilesFlowsAndFaults) {
  const HeterogeneityConfig h = config_of(
      "[background]\n"
      "link_profile = worker3: 0s 100%, 0.5s 50%, 1500ms 1; 0-1, 5: 1 s 25 % every 2s\n"
      "flows = worker0 -> worker3 from 1s to 2s at 5GB/s; 2 -> 1 for 500ms\n"
      "[training]\nstrategy = sync\n");
  ASSERT_EQ(h.background.link_profiles.size(), 2u);
  const LinkProfile& p = h.background.link_profiles[0];
  EXPECT_EQ(p.workers, std::vector<int>{3});
  ASSERT_EQ(p.points.size(), 3u);
  EXPECT_DOUBLE_EQ(p.points[1].time, 0.5);
  EXPECT_DOUBLE_EQ(p.points[1].fraction, 0.5);
  EXPECT_DOUBLE_EQ(p.points[2].time, 1.5);
  EXPECT_DOUBLE_EQ(p.points[2].fraction, 1.0);
  EXPECT_EQ(p.period, 0.0);
  const LinkProfile& q = h.background.link_profiles[1];
  EXPECT_EQ(q.workers, (std::vector<int>{0, 1, 5}));
  EXPECT_DOUBLE_EQ(q.points[0].fraction, 0.25);
  EXPECT_DOUBLE_EQ(q.period, 2.0);

  ASSERT_EQ(h.background.flows.size(), 2u);
  EXPECT_EQ(h.background.flows[0].from, 0);
  EXPECT_EQ(h.background.flows[0].to, 3);
  EXPECT_DOUBLE_EQ(h.background.flows[0].start, 1.0);
  EXPECT_DOUBLE_EQ(h.background.flows[0].end, 2.0);
  EXPECT_DOUBLE_EQ(h.background.flows[0].rate, 5e9);
  EXPECT_DOUBLE_EQ(h.background.flows[1].start, 0.0);
  EXPECT_DOUBLE_EQ(h.background.flows[1].end, 0.5);
  EXPECT_EQ(h.background.flows[1].rate, 0.0);

  // The parser, checked directly.
  const std::vector<FaultEvent> f =
      parse_fault_events("node 3 down at 10s up at 20s; link5 down at 1s for 2s; worker 2 down at 0s;", 8);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_DOUBLE_EQ(parse_fault_events("worker 1 down at 10 s up at 20 s", 8)[0].up_at, 20.0);
  EXPECT_EQ(f[0].target, FaultTarget::Node);
  EXPECT_EQ(f[0].index, 3);
  EXPECT_DOUBLE_EQ(f[0].down_at, 10.0);
  EXPECT_DOUBLE_EQ(f[0].up_at, 20.0);
  EXPECT_EQ(f[1].target, FaultTarget::Link);
  EXPECT_DOUBLE_EQ(f[1].up_at, 3.0);
  EXPECT_EQ(f[2].target, FaultTarget::Worker);
  EXPECT_EQ(f[2].up_at, kNever);
}

TEST(HeterogeneityConfig, BadStragglerInput) {
  expect_error("[stragglers]\nslow_workers = 3, 8\n", "stragglers.slow_workers", "worker 8 does not exist");
  expect_error("[stragglers]\nslow_workers = 3, 3\n", "stragglers.slow_workers", "listed twice");
  expect_error("[stragglers]\nslow_workers = 5-2\n", "stragglers.slow_workers", "runs backwards");
  expect_error("[stragglers]\nslow_workers = 3:1.5\n", "stragglers.slow_workers", "(0, 1]");
  expect_error("[stragglers]\nslow_workers = three\n", "stragglers.slow_workers", "not a worker index");
  expect_error("[stragglers]\nslow_fraction = 0.05\n", "stragglers.slow_fraction", "rounds to no worker");
  expect_error("[stragglers]\nslow_fraction = 0.5\nslow_workers = 1\n", "stragglers.slow_fraction", "set only one");
  expect_error("[stragglers]\nstep_probability = 1.5\n", "stragglers.step_probability", "out of range");
  expect_error("[stragglers]\nstep_probability = -0.1\n", "stragglers.step_probability", "out of range");
  expect_error("[stragglers]\nstep_slowdown = 0.5\n", "stragglers.step_slowdown", "out of range");
  expect_error("[stragglers]\nlognormal_sigma = -1\n", "stragglers.lognormal_sigma", "out of range");
  expect_error("[stragglers]\nslow_factor = 0\n", "stragglers.slow_factor", "out of range");
}

TEST(HeterogeneityConfig, BadBackgroundInput) {
  const std::string key = "background.link_profile";
  expect_error("[background]\nlink_profile = worker9: 0s 50%\n", key, "worker 9 does not exist");
  expect_error("[background]\nlink_profile = worker3 0s 50%\n", key, "expected '<workers>:");
  expect_error("[background]\nlink_profile = 3: 0s 150%\n", key, "outside (0%, 100%]");
  expect_error("[background]\nlink_profile = 3: 0s 0%\n", key, "is below 0.01% of the link; use [faults]");
  expect_error("[background]\nlink_profile = 3: 0s 1e-300%\n", key, "is below 0.01% of the link");
  expect_error("[background]\nlink_profile = 3: 0s -50%\n", key, "is below 0.01% of the link");
  expect_error("[background]\nlink_profile = 3: 0s 50\n", key, "write 50% for a percentage");
  expect_error("[background]\nflows = 0 -> 3 at 1e-300GB/s\n", "background.flows", "at least 1 B/s");
  expect_error("[background]\nlink_profile = 3: 1s 50%, 0.5s 100%\n", key, "times must increase");
  expect_error("[background]\nlink_profile = 3: 1 50%\n", key, "has no unit");
  expect_error("[background]\nlink_profile = 3: 0s fast\n", key, "not a bandwidth level");
  expect_error("[background]\nlink_profile = 3: 0s 50%, 1s 100% every 1s\n", key, "period must be longer");
  expect_error("[background]\nlink_profile = all: 0s 50%; 3: 1s 20%\n", key, "two profiles");
  const std::string flows = "background.flows";
  expect_error("[background]\nflows = 0 -> 0 from 1s\n", flows, "two different workers");
  expect_error("[background]\nflows = 0 -> 12\n", flows, "worker 12 does not exist");
  expect_error("[background]\nflows = 0 to 3\n", flows, "expected '<worker> -> <worker>");
  expect_error("[background]\nflows = 0 -> 3 from 2s to 1s\n", flows, "ends before it starts");
  expect_error("[background]\nflows = 0 -> 3 at 5GHz\n", flows, "unknown unit");
  expect_error("[background]\nflows = 0 -> 3 to 2s for 1s\n", flows, "not both");
}

TEST(HeterogeneityConfig, BadFaultInput) {
  const std::string key = "faults.events";
  expect_error("[faults]\nevents = worker 9 down at 1s\n", key, "worker 9 does not exist");
  expect_error("[faults]\nevents = gpu 3 down at 1s\n", key, "is not a worker, node or link");
  expect_error("[faults]\nevents = worker 3 down 1s\n", key, "expected 'down at <time>'");
  expect_error("[faults]\nevents = worker 3 up at 1s\n", key, "expected 'down at <time>'");
  expect_error("[faults]\nevents = worker 3 down at soon\n", key, "does not start with a number");
  expect_error("[faults]\nevents = worker 3 down at 10s up at 5s\n", key, "back up before it goes down");
  expect_error("[faults]\nevents = link 3 down at 10s up at 10s\n", key, "back up at the moment it goes down");
  expect_error("[faults]\nevents = link 3 down at 1s for 0s\n", key, "'for 0s' is no time down; give a duration above 0");
  expect_error("[faults]\nevents = worker 3 down at 10s up at 20s; worker 3 down at 15s up at 30s\n", key,
               "overlap in time");
  expect_error("[faults]\nevents = node 1 down at 1s; node 1 down at 5s\n", key, "overlap in time");
  expect_error("[faults]\nevents = worker 1 down at 1s up at 2s for 1s\n", key, "not both");
  // A misspelt keyword is named where it stands, not read as part of an index or a unit.
  expect_error("[faults]\nevents = worker 3 dwn at 10s\n", key, "unexpected 'dwn at 10s' after 'worker 3'");
  expect_error("[faults]\nevents = worker3 dwn at 10s\n", key, "unexpected 'dwn at 10s' after 'worker3'");
  expect_error("[faults]\nevents = worker 3 down at 10s upp at 20s\n", key, "unexpected 'upp at 20s' after 'down at 10s'");
  expect_error("[faults]\nevents = node 1 down at 1s for 2s later\n", key, "unexpected 'later' after 'for 2s'");
  // Well-formed, but local SGD cannot survive a failure.
  expect_error("[training]\nstrategy = local\n[faults]\nevents = worker 3 down at 10s up at 20s\n", key,
               "cannot survive failures");
}

TEST(FaultSchedule, IntervalsTransitionsAndQueries) {
  FaultConfig c;
  c.events = {{FaultTarget::Worker, 1, 10.0, 20.0},
              {FaultTarget::Node, 0, 15.0, 30.0},  // node 0 holds workers 0 and 1
              {FaultTarget::Link, 2, 5.0, kNever}};
  const FaultSchedule s(c, {0, 0, 1, 1});
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.num_workers(), 4);
  // Worker 1: down 10–20 by itself and 15–30 with its node: one merged interval.
  ASSERT_EQ(s.worker_intervals(1).size(), 1u);
  EXPECT_EQ(s.worker_intervals(1)[0].down_at, 10.0);
  EXPECT_EQ(s.worker_intervals(1)[0].up_at, 30.0);
  EXPECT_FALSE(s.worker_down(1, 9.999));
  EXPECT_TRUE(s.worker_down(1, 10.0));  // [down_at, up_at)
  EXPECT_TRUE(s.worker_down(1, 29.999));
  EXPECT_FALSE(s.worker_down(1, 30.0));
  EXPECT_TRUE(s.worker_down(0, 15.0));
  EXPECT_FALSE(s.worker_down(0, 14.0));
  EXPECT_FALSE(s.worker_down(2, 16.0));  // other node
  EXPECT_TRUE(s.link_down(2, 5.0));
  EXPECT_TRUE(s.link_down(2, 1e9));
  EXPECT_FALSE(s.reachable(2, 6.0));
  EXPECT_TRUE(s.reachable(3, 16.0));
  EXPECT_EQ(s.worker_up_at(1, 12.0), 30.0);
  EXPECT_EQ(s.worker_up_at(1, 5.0), 5.0);
  EXPECT_EQ(s.link_up_at(2, 7.0), kNever);
  EXPECT_EQ(s.next_transition_after(0.0), 5.0);
  EXPECT_EQ(s.next_transition_after(15.0), 30.0);
  EXPECT_EQ(s.next_transition_after(30.0), kNever);

  const std::vector<FaultTransition>& t = s.transitions();
  ASSERT_EQ(t.size(), 5u);  // link 2 down; worker 1 down; worker 0 down; workers 0 and 1 up
  EXPECT_TRUE(t[0].link && t[0].worker == 2 && t[0].down && t[0].time == 5.0);
  EXPECT_TRUE(!t[1].link && t[1].worker == 1 && t[1].down && t[1].time == 10.0);
  EXPECT_TRUE(!t[2].link && t[2].worker == 0 && t[2].down && t[2].time == 15.0);
  EXPECT_TRUE(t[3].worker == 0 && !t[3].down && t[3].time == 30.0);
  EXPECT_TRUE(t[4].worker == 1 && !t[4].down && t[4].time == 30.0);
}

TEST(FaultSchedule, UnknownNodeIsAValueError) {
  FaultConfig c;
  c.events = {{FaultTarget::Node, 2, 1.0, 2.0}};
  EXPECT_THROW(FaultSchedule(c, {0, 0, 1, 1}), ValueError);
  EXPECT_NO_THROW(FaultSchedule(c, {0, 1, 2, 3}));
}

}  // namespace
}  // namespace dtsim::sim
