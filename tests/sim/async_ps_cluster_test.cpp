// The asynchronous parameter server on a cluster: a slow node costs it less throughput than it costs
// synchronous training; same scenario and seed give byte-identical outputs; a worker that fails mid-run is
// tolerated (with or without coming back, and under a staleness bound); keys and their bad combinations;
// how the model is split over shards.
#include <gtest/gtest.h>

#include "sim/config/run_config.hpp"
#include "sim/app/outputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/strategies/ps/ps_partition.hpp"
#include "tests/sim/async_ps_support.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using ps_testing::Outcome;
using testing::config_error_of;
using testing::contains;

double samples_per_second(const Outcome& o, const RunInputs& in) {
  return static_cast<double>(o.steps) * in.config.global_batch() / o.sim_time;
}

TEST(AsyncParameterServer, ASlowNodeCostsItLessThroughputThanSynchronousTraining) {
  RunInputs in = ps_testing::mlp_run(4, 12);
  in.config.fabric = {"HDR-like", 25e9, 0.6e-6, 130e-9, 0.96};
  RunInputs slow = in;
  slow.config.heterogeneity.stragglers.slow_workers = {{2, 0.5}};
  RunInputs sync = in, sync_slow = slow;
  sync.config.strategy = sync_slow.config.strategy = Strategy::Sync;

  const Outcome ps_nominal = ps_testing::run(in), ps_slowed = ps_testing::run(slow);
  const Outcome sync_nominal = ps_testing::run(sync), sync_slowed = ps_testing::run(sync_slow);
  const double ps_kept = samples_per_second(ps_slowed, slow) / samples_per_second(ps_nominal, in);
  const double sync_kept = samples_per_second(sync_slowed, sync_slow) / samples_per_second(sync_nominal, sync);

  // Synchronous: every step waits for the half-speed worker, so each step takes one more nominal compute
  // time (the allreduce is unchanged): the run is longer by exactly the nominal compute time.
  const double compute = sync_nominal.times[0].compute;
  EXPECT_NEAR(sync_slowed.sim_time - sync_nominal.sim_time, compute, 1e-6 * sync_slowed.sim_time);
  EXPECT_LT(sync_kept, 0.55);
  // Asynchronous: the other three keep their pace; the cluster computes at about 3.5 of 4 workers' rate.
  EXPECT_GT(ps_kept, 0.75);
  EXPECT_GT(ps_kept, sync_kept + 0.2);
  EXPECT_EQ(ps_slowed.steps, 12);
}

TEST(AsyncParameterServer, SameScenarioAndSeedGiveByteIdenticalOutputs) {
  RunInputs in = ps_testing::mlp_run(4, 10);
  in.config.ps.servers = 2;
  in.config.heterogeneity.stragglers.step_probability = 0.3;
  in.config.heterogeneity.stragglers.step_slowdown = 3.0;
  in.config.heterogeneity.stragglers.lognormal_sigma = 0.2;
  const Outcome a = ps_testing::run(in), b = ps_testing::run(in);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.details.dump(), b.details.dump());
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.sim_time, b.sim_time);
  EXPECT_GT(a.details["mean_staleness"].get<double>(), 0.0);

  // A different seed draws different slowdowns: another order of events.
  in.config.seed = 8;
  in.config.heterogeneity.stragglers = StragglerConfig{{}, 0.3, 3.0, 0.2};
  const Outcome c = ps_testing::run(in);
  EXPECT_NE(a.rows, c.rows);
}

// ---- failures --------------------------------------------------------------------------------------------

constexpr int kWorkers = 4, kRounds = 16, kPlanned = kWorkers * kRounds;

RunInputs fault_run(double down_at, double up_at, int bound = -1) {
  RunInputs in = ps_testing::mlp_run(kWorkers, kRounds);
  in.config.ps.staleness_bound = bound;
  in.config.heterogeneity.faults.events = {{FaultTarget::Worker, 1, down_at, up_at}};
  return in;
}

double nominal_time() {
  static const double t = ps_testing::run(ps_testing::mlp_run(kWorkers, kRounds)).sim_time;
  return t;
}

TEST(AsyncParameterServerFaults, AWorkerThatFailsAndComesBackIsTolerated) {
  const double t = nominal_time(), down = 0.3 * t, up = 0.6 * t;
  const Outcome o = ps_testing::run(fault_run(down, up));
  const nlohmann::json& f = o.details["faults"];
  EXPECT_EQ(o.details["gradients_applied"], kPlanned) << "lost work is done again";
  EXPECT_EQ(f["restarts"], 1);
  EXPECT_NEAR(f["time_away_s"].get<double>(), up - down, 1e-12);
  EXPECT_NEAR(o.worker(1)["time_away_s"].get<double>(), up - down, 1e-12);
  EXPECT_GE(f["gradients_lost"].get<int>() + f["pulls_lost"].get<int>(), 1) << "it had work in flight";
  EXPECT_EQ(f["never_applied"], 0);
  EXPECT_LT(o.worker(1)["gradients_applied"].get<int>(), o.worker(0)["gradients_applied"].get<int>());
  EXPECT_GT(o.sim_time, t) << "the cluster ran with three workers for a while";
  ASSERT_FALSE(o.rows.empty());
  EXPECT_EQ(o.rows.back().substr(0, o.rows.back().find(',')), std::to_string(kPlanned));
}

TEST(AsyncParameterServerFaults, AWorkerThatNeverComesBackIsTolerated) {
  const double t = nominal_time();
  const Outcome o = ps_testing::run(fault_run(0.3 * t, kNever));
  EXPECT_EQ(o.details["gradients_applied"], kPlanned) << "the others did its share";
  EXPECT_EQ(o.details["faults"]["restarts"], 0);
  EXPECT_NEAR(o.worker(1)["time_away_s"].get<double>(), o.sim_time - 0.3 * t, 1e-12);
}

TEST(AsyncParameterServerFaults, AFailureUnderAStalenessBoundDoesNotDeadlock) {
  const double t = nominal_time();
  // Worker 1, four times slower, is computing most of the time: its outstanding computation would hold
  // everyone's pulls for good if its failure did not drop it.
  RunInputs in = fault_run(0.3 * t, kNever, 1);
  in.config.heterogeneity.stragglers.slow_workers = {{1, 0.25}};
  const Outcome o = ps_testing::run(in);
  EXPECT_EQ(o.details["gradients_applied"], kPlanned);
  EXPECT_LE(o.details["max_staleness"].get<int>(), 1);
  EXPECT_GE(o.details["faults"]["computations_dropped_at_shards"].get<int>(), 1);
}

TEST(AsyncParameterServerFaults, FailureAtTimeZeroAndReturn) {
  const double t = nominal_time();
  const Outcome o = ps_testing::run(fault_run(0.0, 0.5 * t));
  EXPECT_EQ(o.details["gradients_applied"], kPlanned);
  EXPECT_EQ(o.details["faults"]["restarts"], 1);
}

// ---- keys ------------------------------------------------------------------------------------------------

TEST(AsyncParameterServerKeys, AreReadIntoTheConfiguration) {
  const RunConfig c = make_run_config(parse_scenario(
      "test.ini",
      "[training]\nstrategy = async-ps\n[ps]\nservers = 2\nstaleness_bound = 3\nstaleness_lr = hinge\n"
      "staleness_exponent = 2\nstaleness_threshold = 1.5\n[faults]\nevents = worker 1 down at 1s up at 2s\n",
      {}, testing::kProfiles));
  EXPECT_EQ(c.ps.servers, 2);
  EXPECT_EQ(c.ps.staleness_bound, 3);
  EXPECT_EQ(c.ps.gradients_per_update, 1);
  EXPECT_EQ(c.ps.staleness_lr, models::StalenessRule::Hinge);
  EXPECT_EQ(c.ps.staleness_exponent, 2.0);
  EXPECT_EQ(c.ps.staleness_threshold, 1.5);
  EXPECT_EQ(server_hosts(c), 2);
  EXPECT_EQ(server_hosts(make_run_config(parse_scenario("test.ini", "[ps]\nservers = 2\n", {}, testing::kProfiles))),
            0)
      << "synchronous data parallelism gets no server hosts";
  EXPECT_EQ(server_hosts(Strategy::Federated, 4), 1) << "federated learning gets one aggregator";
}

TEST(AsyncParameterServerKeys, BadCombinationsAreErrorsAtTheKey) {
  EXPECT_TRUE(contains(config_error_of("[training]\nstrategy = async-ps\n[ps]\nstaleness_bound = 2\n"
                                    "gradients_per_update = 4\n"),
                       "ps.staleness_bound"));
  EXPECT_TRUE(contains(config_error_of("[training]\nstrategy = async-ps\n[faults]\nevents = link 1 down at 1s\n"),
                       "faults.events"));
  EXPECT_EQ(config_error_of("[training]\nstrategy = async-ps\n[faults]\nevents = node 1 down at 1s\n"), "");
  EXPECT_TRUE(contains(config_error_of("[training]\nstrategy = local\n[faults]\nevents = worker 1 down at 1s\n"),
                       "faults.events"))
      << "local SGD cannot survive failures";
  // A torus must have a position for every server host too: 8 workers and 1 shard make 9 nodes.
  EXPECT_EQ(config_error_of("[cluster]\nworkers = 8\ntopology = torus\ntorus_dims = 3,3\n[training]\nstrategy = async-ps\n"),
            "");
  EXPECT_TRUE(contains(config_error_of("[cluster]\nworkers = 8\ntopology = torus\ntorus_dims = 2,4\n"
                                    "[training]\nstrategy = async-ps\n"),
                       "cluster.torus_dims"));
  EXPECT_EQ(config_error_of("[cluster]\nworkers = 8\ntopology = torus\ntorus_dims = 2,4\n"), "");
  // Only async-ps cares about its keys.
  EXPECT_EQ(config_error_of("[ps]\nstaleness_bound = 2\ngradients_per_update = 4\n"), "");
}

TEST(AsyncParameterServerKeys, MoreShardsThanTensorsIsAnErrorAtTheKey) {
  RunInputs in = ps_testing::mlp_run(2, 2);
  in.config.ps.servers = 5;  // the MLP 784-64-10 has 4 tensors
  try {
    ps_testing::run(in);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "ps.servers")) << e.what();
  }
}

TEST(AsyncParameterServerKeys, MeanStalenessIsAtTheTopOfTheSummary) {
  const RunInputs in = ps_testing::mlp_run(2, 2);
  RunResult r;
  r.strategy = "async-ps";  // RunResult carries the name, as summary.json prints it
  r.strategy_details = {{"mean_staleness", 2.5}, {"updates", 4}};
  const nlohmann::json s = make_summary(in, r, 0.0);
  EXPECT_EQ(s["mean_staleness"], 2.5);
  EXPECT_EQ(s["strategy"]["updates"], 4);
  r.strategy_details = nlohmann::json::object();
  EXPECT_FALSE(make_summary(in, r, 0.0).contains("mean_staleness")) << "only strategies that measure it";
}

// ---- how the model is split over shards -------------------------------------------------------------------

std::vector<models::ParamTensor> mlp_tensors() {  // the default MLP 784-256-128-10
  const std::vector<size_t> sizes{784 * 256, 256, 256 * 128, 128, 128 * 10, 10};
  std::vector<models::ParamTensor> t;
  size_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    t.push_back({"t" + std::to_string(i), offset, sizes[i], i % 2 == 1});
    offset += sizes[i];
  }
  return t;
}

TEST(ParameterSplit, ContiguousWholeTensorsWithTheSmallestLargestShard) {
  const auto tensors = mlp_tensors();
  for (int shards = 1; shards <= 6; ++shards) {
    const std::vector<ParameterRange> ranges = split_parameters(tensors, shards);
    ASSERT_EQ(ranges.size(), static_cast<size_t>(shards));
    size_t offset = 0, largest = 0, index = 0;
    for (const ParameterRange& r : ranges) {
      EXPECT_EQ(r.offset, offset) << "shards tile the model in order";
      ASSERT_FALSE(r.tensors.empty());
      size_t inside = 0;
      for (const models::ParamTensor& t : r.tensors) {
        EXPECT_EQ(t.offset, inside) << "tensor offsets are relative to the shard";
        EXPECT_EQ(t.size, tensors[index].size);
        EXPECT_EQ(t.is_bias, tensors[index].is_bias);
        inside += t.size;
        ++index;
      }
      EXPECT_EQ(inside, r.size);
      offset += r.size;
      largest = std::max(largest, r.size);
    }
    EXPECT_EQ(offset, 235146u);
    // The first weight matrix is 85 % of the model: with two or more shards it is a shard of its own.
    EXPECT_EQ(largest, shards == 1 ? 235146u : 200704u) << shards << " shards";
  }
  EXPECT_EQ(split_parameters(tensors, 2)[1].size, 256u + 32768 + 128 + 1280 + 10);
  EXPECT_THROW(split_parameters(tensors, 7), std::invalid_argument);
}

TEST(ParameterSplit, BalancesEqualTensors) {
  std::vector<models::ParamTensor> t;
  for (size_t i = 0; i < 8; ++i) t.push_back({"t", i * 100, 100, false});
  for (const ParameterRange& r : split_parameters(t, 4)) EXPECT_EQ(r.size, 200u);
}

}  // namespace
}  // namespace dtsim::sim
