// Federated runs end to end from a scenario: the same scenario and seed give byte-identical metrics.csv and
// summary details, and the clients the simulator trains are exactly the ones the seeded plan selects.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "gpu/cpu_ops.hpp"
#include "models/objective.hpp"
#include "sim/app/run.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/strategies/federated/federated_plan.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

// The FedProx Synthetic scenario, shortened, with every source of randomness and every round-control rule on:
// sampling, protocol stragglers with partial work, availability draws, over-commit and a deadline.
std::string run_scenario(uint64_t seed) {
  return dtsim::testing::run_in_child([seed] {
    const std::vector<std::string> sets = {
        "fl.rounds=6",           "fl.algorithm=scaffold",   "fl.straggler_fraction=0.5",
        "fl.straggler_policy=partial", "fl.availability=0.8", "fl.overcommit=0.3",
        "fl.deadline=150us",     "fl.sampling=weighted",    "fl.local_epochs=2",
        "run.seed=" + std::to_string(seed)};
    const Scenario s = load_scenario(std::string(DTSIM_SOURCE_DIR) + "/scenarios/fedprox_synthetic.ini", sets,
                                      std::string(DTSIM_SOURCE_DIR) + "/network_profiles");
    const RunInputs in = prepare_run(s);
    const fs::path dir = fs::temp_directory_path() / ("dtsim-fl-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string csv;
    {
      MetricsLog metrics((dir / "metrics.csv").string());
      const RunResult r = run_training(in, metrics);
      std::ifstream f(dir / "metrics.csv");
      std::stringstream text;
      text << f.rdbuf();
      csv = text.str() + "\n---\n" + r.strategy_details.dump();
    }
    fs::remove_all(dir);
    return csv;
  });
}

TEST(FederatedOutputs, SameScenarioAndSeedGiveByteIdenticalOutputs) {
  const std::string a = run_scenario(5), b = run_scenario(5), other = run_scenario(6);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
  // The run did what the settings ask for: stragglers kept partial work, some clients were dropped.
  const nlohmann::json d = nlohmann::json::parse(a.substr(a.find("\n---\n") + 5));
  EXPECT_EQ(d["rounds"].get<int>(), 6);
  EXPECT_GT(d["aggregated"]["partial"].get<int>(), 0);
  EXPECT_GT(d["dropped"]["total"].get<int>(), 0);
  EXPECT_LT(d["available_mean"].get<double>(), 30.0);
}

TEST(FederatedOutputs, TheSimulatorTrainsTheClientsThePlanSelects) {
  const int clients = 8, rounds = 60;
  FlConfig fl;
  fl.rounds = rounds;
  fl.clients_per_round = 3;
  fl.weighted_sampling = true;
  fl.local_steps = 2;
  std::vector<double> weights(clients);
  std::iota(weights.begin(), weights.end(), 1.0);

  const std::string text = dtsim::testing::run_in_child([&] {
    RunInputs in;
    RunConfig& c = in.config;
    c.seed = 13;
    c.workers = clients;
    c.gpu = {"test-gpu", 1e12, 1e12, 1e12, 40e9, 1.0};
    c.fabric = {"test-fabric", 1e9, 1e-6, 0.0, 1.0};
    c.strategy = Strategy::Federated;
    c.lr = 0.1;
    c.momentum = 0.0;
    c.fl = fl;
    in.length = {1, rounds};
    gpu::CpuOps<float> ops;
    std::vector<std::vector<float>> targets;
    for (int i = 0; i < clients; ++i) targets.push_back({static_cast<float>(i)});
    models::QuadraticObjective objective(ops, targets, {0.0f}, weights);
    MetricsLog metrics;
    return run_training_with(in, metrics, ops, objective).strategy_details.dump();
  });
  const nlohmann::json d = nlohmann::json::parse(text);

  std::vector<int> nodes(clients);
  std::iota(nodes.begin(), nodes.end(), 0);
  const FaultSchedule faults(FaultConfig{}, nodes);
  const RoundPlanner planner(fl, 13, weights, 32, faults);
  std::vector<int64_t> expected(clients, 0);
  for (int r = 0; r < rounds; ++r)
    for (const ClientAssignment& a : planner.plan(r, 0.0).selected) ++expected[a.client];
  EXPECT_EQ(d["participation"]["selected"], nlohmann::json(expected));
  EXPECT_EQ(d["participation"]["aggregated"], nlohmann::json(expected));
  EXPECT_EQ(d["local_steps"]["aggregated"].get<int>(), rounds * 3 * 2);
}

}  // namespace
}  // namespace dtsim::sim
