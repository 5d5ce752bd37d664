// Federated rounds through the simulator, against closed forms on a star. The objective is a quadratic with
// 250,000 parameters (1 MB per vector at fp32), so transfers and local steps take visible time:
//   every client computes at 1 GFLOP/s: a local step (2·m FLOPs) takes 0.5 ms; so does the server's
//   aggregation of one vector (2·m FLOPs);
//   links carry 1 GB/s with 1 µs latency: a route client → switch → server has α = 2 µs, and k transfers of
//   S bytes at once through the server's port take α + k·S/B.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpu/cpu_ops.hpp"
#include "models/objective.hpp"
#include "sim/app/run.hpp"
#include "sim/strategies/federated/federated_secagg.hpp"
#include "tests/sim/federated_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr size_t kDim = 250000;
constexpr double kVector = 4.0 * kDim;  // bytes
constexpr double kBandwidth = 1e9;
constexpr double kAlpha = 2e-6;
constexpr double kStep = 2.0 * kDim / 1e9;  // one local step, or one aggregated vector on the server

double transfer(int concurrent, double bytes) { return kAlpha + concurrent * bytes / kBandwidth; }

RunInputs star_run(int clients, const FlConfig& fl, const HeterogeneityConfig& heterogeneity = {}) {
  RunInputs in = testing::federated_star_run("fl-rounds", clients, kBandwidth, fl);
  in.config.heterogeneity = heterogeneity;
  return in;
}

struct Outcome {
  double sim_time = 0;
  nlohmann::json details;
  std::vector<float> params;
};

Outcome train(int clients, const FlConfig& fl, const HeterogeneityConfig& heterogeneity = {}) {
  const std::string text = dtsim::testing::run_in_child([&] {
    const RunInputs in = star_run(clients, fl, heterogeneity);
    gpu::CpuOps<float> ops;
    std::vector<std::vector<float>> targets;
    for (int i = 0; i < clients; ++i) targets.emplace_back(kDim, static_cast<float>(i));
    models::QuadraticObjective objective(ops, targets, std::vector<float>(kDim, 0.0f),
                                         std::vector<double>(clients, 1.0));
    MetricsLog metrics;
    const RunResult r = run_training_with(in, metrics, ops, objective);
    nlohmann::json j;
    j["sim_time"] = r.simulated_time_s;
    j["details"] = r.strategy_details;
    j["x0"] = r.final_params.at(0);
    return j.dump();
  });
  const nlohmann::json j = nlohmann::json::parse(text);
  return {j["sim_time"].get<double>(), j["details"], {j["x0"].get<float>()}};
}

FlConfig every_client(models::FlAlgorithm algorithm, int clients, int64_t steps, int64_t rounds) {
  FlConfig fl;
  fl.algorithm = algorithm;
  fl.rounds = rounds;
  fl.clients_per_round = clients;
  fl.local_steps = steps;
  return fl;
}

StragglerConfig slow(std::vector<int> workers, double factor) {
  StragglerConfig s;
  for (const int w : workers) s.slow_workers.push_back({w, factor});
  return s;
}

TEST(FederatedRounds, ScaffoldSendsTwiceTheBytesAndTheNetworkSeesIt) {
  const int k = 4, steps = 3, rounds = 2;
  const Outcome avg = train(k, every_client(models::FlAlgorithm::FedAvg, k, steps, rounds));
  const Outcome scaffold = train(k, every_client(models::FlAlgorithm::Scaffold, k, steps, rounds));
  EXPECT_EQ(avg.details["bytes"]["up"].get<double>(), rounds * k * kVector);
  EXPECT_EQ(avg.details["bytes"]["down"].get<double>(), rounds * k * kVector);
  EXPECT_EQ(scaffold.details["bytes"]["up"].get<double>(), 2 * rounds * k * kVector);  // Δy and Δc
  EXPECT_EQ(scaffold.details["bytes"]["down"].get<double>(), 2 * rounds * k * kVector);  // x and c

  // All k uploads share the server's port: α + k·S/B, and twice the bytes for SCAFFOLD.
  EXPECT_NEAR(avg.details["time_s"]["upload_mean"].get<double>(), transfer(k, kVector), 1e-9);
  EXPECT_NEAR(scaffold.details["time_s"]["upload_mean"].get<double>(), transfer(k, 2 * kVector), 1e-9);
  EXPECT_NEAR(scaffold.details["time_s"]["download_mean"].get<double>(), transfer(k, 2 * kVector), 1e-9);
  for (const auto& [o, vectors] : {std::pair<const Outcome&, int>{avg, 1}, {scaffold, 2}}) {
    const double round = 2 * transfer(k, vectors * kVector) + steps * kStep + vectors * k * kStep;
    EXPECT_NEAR(o.sim_time, rounds * round, 1e-9 * o.sim_time) << vectors;
  }
}

TEST(FederatedRounds, OvercommitKeepsTheFirstKToReport) {
  // 6 clients for K = 3 (over-commit 100 %): clients 3-5 compute at a quarter speed, so 0-2 report first.
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 3, 10, 3);
  fl.overcommit = 1.0;
  HeterogeneityConfig h;
  h.stragglers = slow({3, 4, 5}, 0.25);
  const Outcome o = train(6, fl, h);
  EXPECT_EQ(o.details["selected"]["total"].get<int>(), 18);
  EXPECT_EQ(o.details["aggregated"]["total"].get<int>(), 9);
  EXPECT_EQ(o.details["dropped"]["overcommit"].get<int>(), 9);
  EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({3, 3, 3, 0, 0, 0}));
  // The round ends with the third upload; the slow clients are cut off mid-computation.
  const double round = transfer(6, kVector) + 10 * kStep + transfer(3, kVector) + 3 * kStep;
  EXPECT_NEAR(o.sim_time, 3 * round, 1e-9 * o.sim_time);
  EXPECT_GT(o.details["local_steps"]["discarded"].get<int>(), 0);
}

TEST(FederatedRounds, DeadlineDropsTheLateClient) {
  // Client 3 computes at a quarter speed: its 10 steps take 20 ms; the others are done by 13 ms.
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 3);
  fl.deadline = 0.015;
  fl.straggler_policy = StragglerPolicy::Drop;
  HeterogeneityConfig h;
  h.stragglers = slow({3}, 0.25);
  const Outcome o = train(4, fl, h);
  EXPECT_EQ(o.details["dropped"]["deadline"].get<int>(), 3);
  EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({3, 3, 3, 0}));
  EXPECT_EQ(o.details["local_steps"]["aggregated"].get<int>(), 3 * 3 * 10);
  // The server waits for the deadline, then aggregates three updates.
  EXPECT_NEAR(o.sim_time, 3 * (0.015 + 3 * kStep), 1e-9 * o.sim_time);
}

TEST(FederatedRounds, DeadlineKeepsPartialWork) {
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 3);
  fl.deadline = 0.015;
  fl.straggler_policy = StragglerPolicy::Partial;
  HeterogeneityConfig h;
  h.stragglers = slow({3}, 0.25);
  const Outcome o = train(4, fl, h);
  // The slow client starts computing when the download ends (α + 4 MB / 1 GB/s) and finishes a step every
  // 2 ms: 5 steps by the deadline; the sixth, in progress, does not count. It then uploads alone.
  const double download = transfer(4, kVector);
  const int slow_steps = static_cast<int>((0.015 - download) / (4 * kStep));
  ASSERT_EQ(slow_steps, 5);
  EXPECT_EQ(o.details["aggregated"]["partial"].get<int>(), 3);
  EXPECT_EQ(o.details["aggregated"]["full"].get<int>(), 9);
  EXPECT_EQ(o.details["local_steps"]["aggregated"].get<int>(), 3 * (3 * 10 + slow_steps));
  EXPECT_NEAR(o.sim_time, 3 * (0.015 + transfer(1, kVector) + 4 * kStep), 1e-9 * o.sim_time);
}

TEST(FederatedRounds, SecureAggregationAddsTheDocumentedBytesAndTime) {
  const int k = 4, steps = 2, rounds = 2;
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, k, steps, rounds);
  const Outcome plain = train(k, fl);
  fl.secure_aggregation.enabled = true;
  const Outcome secure = train(k, fl);

  // The formula of federated_secagg.hpp, by hand for n = s = 4 clients, m = 250,000, 32-byte keys, 4-byte ids,
  // 28 bytes of AES-GCM overhead, threshold t = 3, headroom ⌈log2 4⌉ = 2 bits → 1 byte per element.
  const double setup_up = 2 * 32 + 3 * (2 * 32 + 2 * 4 + 28);  // 364
  const double setup_down = 4 * (2 * 32 + 4) + 3 * (2 * 32 + 2 * 4 + 28);  // 572
  const double masked_extra = kDim * 1.0;
  const double survivors_down = 4 * 4, unmask_up = 3 * (32 + 4);
  EXPECT_EQ(secure.details["bytes"]["up"].get<double>() - plain.details["bytes"]["up"].get<double>(),
            rounds * k * (setup_up + masked_extra + unmask_up));
  EXPECT_EQ(secure.details["bytes"]["down"].get<double>() - plain.details["bytes"]["down"].get<double>(),
            rounds * k * (setup_down + survivors_down));
  EXPECT_EQ(secure.details["secure_aggregation"]["bytes_up"].get<double>(),
            rounds * k * (setup_up + masked_extra + unmask_up));

  // Client: 2(n−1) key agreements, 2·n·t field operations, n·m mask elements; server: n·t² field
  // operations, no dropout, s·m mask elements.
  const double client_s = 2 * 3 * 50e-6 + 2 * 4 * 3 * 100e-9 + 4 * kDim / 2.5e8;
  const double server_s = 4 * 9 * 100e-9 + 4 * kDim / 2.5e8;
  EXPECT_NEAR(secure.details["secure_aggregation"]["server_compute_s"].get<double>(), rounds * server_s, 1e-12);
  EXPECT_NEAR(secure.details["secure_aggregation"]["client_compute_s"].get<double>(), rounds * k * client_s, 1e-12);
  // Each phase runs on all four clients at once through the server's port.
  const double extra_per_round = k * setup_down / kBandwidth + transfer(k, setup_up) + client_s +
                                 k * masked_extra / kBandwidth + transfer(k, survivors_down) +
                                 transfer(k, unmask_up) + server_s;
  EXPECT_NEAR(secure.sim_time - plain.sim_time, rounds * extra_per_round, 1e-9 * secure.sim_time);
  // The masks cancel: the model is the same.
  EXPECT_EQ(secure.params, plain.params);
}

TEST(FederatedRounds, AClientFailingMidRoundIsAStraggler) {
  // Without faults a round takes α + 4 ms (download) + 5 ms (10 steps) + α + 4 ms (upload) + 2 ms
  // (aggregation) ≈ 15 ms. Worker 2 fails at 20 ms, during round 1's local steps, and is back at 100 ms.
  for (const StragglerPolicy policy : {StragglerPolicy::Drop, StragglerPolicy::Partial}) {
    FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 3);
    fl.straggler_policy = policy;
    HeterogeneityConfig h;
    h.faults.events = {{FaultTarget::Worker, 2, 0.020, 0.100}};
    const Outcome o = train(4, fl, h);
    EXPECT_EQ(o.details["dropped"]["lost"].get<int>(), 1) << to_string(policy);
    EXPECT_EQ(o.details["faults"]["clients_lost"].get<int>(), 1);
    // Round 1's download ends at 15 ms + α + 4 ms; by 20 ms one 0.5 ms step is done, the second is not.
    EXPECT_EQ(o.details["faults"]["local_steps_lost"].get<int>(), 1);
    // Round 2 starts while worker 2 is down: it is not available, so not selected.
    EXPECT_EQ(o.details["participation"]["selected"], nlohmann::json({3, 3, 2, 3}));
    EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({3, 3, 1, 3}));
  }
}

TEST(FederatedRounds, AClientWhoseLinkFailsDuringItsUploadIsLost) {
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 2);
  HeterogeneityConfig h;
  // Round 0's uploads run from about 9 ms to 13 ms; link 1 is down from 11 ms to 12 ms.
  h.faults.events = {{FaultTarget::Link, 1, 0.011, 0.012}};
  const Outcome o = train(4, fl, h);
  EXPECT_EQ(o.details["dropped"]["lost"].get<int>(), 1);
  EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({2, 1, 2, 2}));
  EXPECT_EQ(o.details["bytes"]["up"].get<double>(), 7 * kVector);  // the failed upload never completed
}

TEST(FederatedRounds, ASurvivorThatFailsBeforeUnmaskingIsNotNeeded) {
  // Secure aggregation with client 3 at a quarter speed: clients 0-2 have uploaded by about 17 ms, client 3
  // by about 43 ms. Worker 1 fails at 30 ms, after its masked input reached the server: its update counts,
  // and the unmasking exchange goes on without it (any t shares reconstruct a secret).
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 2);
  fl.secure_aggregation.enabled = true;
  HeterogeneityConfig h;
  h.stragglers = slow({3}, 0.25);
  h.faults.events = {{FaultTarget::Worker, 1, 0.030, kNever}};
  const Outcome o = train(4, fl, h);
  EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({2, 1, 2, 2}));
  EXPECT_EQ(o.details["dropped"]["lost"].get<int>(), 0);
  const SecureAggregationCost cost{SecureAggregationConfig{}};
  const SecureAggregationBytes four = cost.bytes(4, 4, kDim, 1), three = cost.bytes(3, 3, kDim, 1);
  // Round 0: four clients, one of which sends no unmasking shares; round 1: three clients.
  EXPECT_EQ(o.details["secure_aggregation"]["bytes_up"].get<double>(),
            4.0 * four.per_client_up() - four.unmask_up + 3.0 * three.per_client_up());
}

TEST(FederatedRounds, ProtocolStragglersUnderDropDownloadAndAreNotWaitedFor) {
  // Half of the four clients straggle each round; FedAvg drops them: they download the model (the network
  // carries it), then the server aggregates the other two without waiting.
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 3);
  fl.straggler_fraction = 0.5;
  const Outcome o = train(4, fl);
  EXPECT_EQ(o.details["dropped"]["straggler"].get<int>(), 6);
  EXPECT_EQ(o.details["aggregated"]["total"].get<int>(), 6);
  EXPECT_EQ(o.details["bytes"]["down"].get<double>(), 3 * 4 * kVector);
  EXPECT_EQ(o.details["bytes"]["up"].get<double>(), 3 * 2 * kVector);
  const double round = transfer(4, kVector) + 10 * kStep + transfer(2, kVector) + 2 * kStep;
  EXPECT_NEAR(o.sim_time, 3 * round, 1e-9 * o.sim_time);
}

TEST(FederatedRounds, AClientWhoseAvailabilityWindowEndsMidRoundIsLost) {
  // Client 0 is online until 10 ms, in round 0's upload (≈ 9-13 ms), and again from 20 ms.
  FlConfig fl = every_client(models::FlAlgorithm::FedAvg, 4, 10, 3);
  fl.availability_trace = parse_availability_trace("0: 0s to 10ms, 20ms to 1s", 4);
  const Outcome o = train(4, fl);
  EXPECT_EQ(o.details["dropped"]["lost"].get<int>(), 1);
  // Round 1 starts at about 12.5 ms, while client 0 is offline; round 2 after 20 ms, when it is back.
  EXPECT_EQ(o.details["participation"]["selected"], nlohmann::json({2, 3, 3, 3}));
  EXPECT_EQ(o.details["participation"]["aggregated"], nlohmann::json({1, 3, 3, 3}));
}

}  // namespace
}  // namespace dtsim::sim
