// Gradient compression in federated learning: what uploads and downloads cost against the wire-byte rules of
// models/compression/compression.hpp computed by hand, on the star of federated_rounds_test (1 GB/s links,
// 2 µs per route, clients and server at 1 GFLOP/s, a quadratic of 250,000 values: 1 MB a dense vector); and
// what compression does to the FedAvg fixed point on a small quadratic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "gpu/cpu_ops.hpp"
#include "models/objective.hpp"
#include "sim/app/run.hpp"
#include "tests/sim/federated_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr size_t kDim = 250000;
constexpr double kVector = 4.0 * kDim;  // bytes, dense
constexpr double kBandwidth = 1e9;
constexpr double kAlpha = 2e-6;
constexpr double kStep = 2.0 * kDim / 1e9;  // one local step, or one aggregated vector on the server
// topk with ratio 0.01 of 250,000 values: k = 2500 fp32 values and 2500 indices of ⌈log2 250000⌉ = 18 bits,
// ⌈2500·50/8⌉ = 15625 bytes (64 times fewer).
constexpr double kTopK = 15625;

double transfer(int concurrent, double bytes) { return kAlpha + concurrent * bytes / kBandwidth; }

struct Outcome {
  double sim_time = 0;
  nlohmann::json details;
  std::vector<float> params;
  std::vector<std::string> rows;
};

// Runs in a forked child; `targets` are the clients' optima, `initial` the starting point.
Outcome train(const RunInputs& in, const std::vector<std::vector<float>>& targets, const std::vector<float>& initial) {
  const std::string text = dtsim::testing::run_in_child([&] {
    gpu::CpuOps<float> ops;
    models::QuadraticObjective objective(ops, targets, initial, std::vector<double>(targets.size(), 1.0));
    MetricsLog metrics;
    const RunResult r = run_training_with(in, metrics, ops, objective);
    nlohmann::json j;
    j["sim_time"] = r.simulated_time_s;
    j["details"] = r.strategy_details;
    j["params"] = r.final_params;
    for (const EvalPoint& p : r.points) j["rows"].push_back(MetricsLog::csv_row(p));
    return j.dump();
  });
  const nlohmann::json j = nlohmann::json::parse(text);
  return {j["sim_time"].get<double>(), j["details"], j["params"].get<std::vector<float>>(),
          j["rows"].get<std::vector<std::string>>()};
}

RunInputs star_run(int clients, models::FlAlgorithm algorithm, int64_t steps, int64_t rounds) {
  FlConfig fl;
  fl.algorithm = algorithm;
  fl.rounds = rounds;
  fl.clients_per_round = clients;
  fl.local_steps = steps;
  return testing::federated_star_run("fl-compression", clients, kBandwidth, fl);
}

Outcome train_star(const RunInputs& in) {
  std::vector<std::vector<float>> targets;
  for (int i = 0; i < in.config.workers; ++i) targets.emplace_back(kDim, static_cast<float>(i));
  return train(in, targets, std::vector<float>(kDim, 0.0f));
}

void set_topk(RunConfig& c, double ratio, bool error_feedback) {
  c.compression.settings.kind = models::CompressorKind::TopK;
  c.compression.settings.ratio = ratio;
  c.compression.settings.error_feedback = error_feedback;
}

class CompressedUploads : public ::testing::TestWithParam<models::FlAlgorithm> {};

// Every upload is the encoding of Δ (SCAFFOLD adds its Δc, dense); downloads stay dense. All K uploads share the
// server's port: α + K·S/B.
TEST_P(CompressedUploads, CostTheEncodingsBytes) {
  const int k = 4, steps = 3, rounds = 2;
  const bool scaffold = GetParam() == models::FlAlgorithm::Scaffold;
  const int vectors = scaffold ? 2 : 1;
  RunInputs in = star_run(k, GetParam(), steps, rounds);
  set_topk(in.config, 0.01, true);
  const Outcome o = train_star(in);

  const double up = kTopK + (scaffold ? kVector : 0.0);
  EXPECT_EQ(o.details["bytes"]["up"].get<double>(), rounds * k * up);
  EXPECT_EQ(o.details["bytes"]["down"].get<double>(), rounds * k * vectors * kVector);
  EXPECT_NEAR(o.details["time_s"]["upload_mean"].get<double>(), transfer(k, up), 1e-12);
  const double round = transfer(k, vectors * kVector) + steps * kStep + transfer(k, up) + vectors * k * kStep;
  EXPECT_NEAR(o.sim_time, rounds * round, 1e-9 * o.sim_time);

  // The message is the whole upload: SCAFFOLD's dense Δc counts with the compressed Δ.
  const nlohmann::json& c = o.details["compression"];
  EXPECT_EQ(c["messages"].get<int>(), rounds * k);
  EXPECT_EQ(c["wire_bytes"].get<double>(), rounds * k * up);
  EXPECT_EQ(c["fp32_bytes"].get<double>(), rounds * k * vectors * kVector);
  EXPECT_DOUBLE_EQ(c["compression_ratio"].get<double>(), vectors * kVector / up);
  EXPECT_TRUE(c["downloads"].is_null());
  // metrics.csv: the start has no compression cells; every later row has k uploads' worth.
  // (The last three columns, staleness_mean, staleness_max and nonfinite, are empty: no staleness outside
  // async-ps, and every value is finite.)
  EXPECT_EQ(o.rows.front().substr(o.rows.front().size() - 6), ",,,,,,");
  ASSERT_EQ(o.rows.back().substr(o.rows.back().size() - 3), ",,,") << o.rows.back();
  const std::string last = o.rows.back().substr(0, o.rows.back().size() - 3);
  EXPECT_EQ(last.substr(last.rfind(',', last.rfind(',') - 1)), scaffold ? ",1015625.0,1.9692" : ",15625.0,64.0000")
      << last;
  std::printf("upload per client: dense %.0f B in %.3f ms, topk 1%% %.0f B in %.3f ms (%d clients at once)\n",
              kVector, 1e3 * transfer(k, kVector), kTopK, 1e3 * transfer(k, kTopK), k);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CompressedUploads,
                         ::testing::Values(models::FlAlgorithm::FedAvg, models::FlAlgorithm::Scaffold),
                         [](const auto& info) { return std::string(models::to_string(info.param)); });

// compression.start_epoch counts rounds: round 0 travels dense both ways, rounds 1 and 2 compressed.
TEST(CompressedDownloads, StartAtTheRoundStartEpochNames) {
  const int k = 4, steps = 3, rounds = 3;
  RunInputs in = star_run(k, models::FlAlgorithm::FedAvg, steps, rounds);
  set_topk(in.config, 0.01, true);
  in.config.compression.downloads = true;
  in.config.compression.start_epoch = 1;
  const Outcome o = train_star(in);
  EXPECT_EQ(o.details["bytes"]["down"].get<double>(), k * (kVector + 2 * kTopK));
  EXPECT_EQ(o.details["bytes"]["up"].get<double>(), k * (kVector + 2 * kTopK));
  const nlohmann::json& c = o.details["compression"];
  EXPECT_EQ(c["messages"].get<int>(), rounds * k);  // round 0's uploads count, uncompressed
  EXPECT_EQ(c["downloads"]["broadcasts"].get<int>(), 2);
  EXPECT_EQ(c["downloads"]["wire_bytes"].get<double>(), 2 * kTopK);
  EXPECT_EQ(c["downloads"]["fp32_bytes"].get<double>(), 2 * kVector);
}

// ---- the FedAvg fixed point on a small quadratic ------------------------------------------------------------
// F_i(x) = ½‖x − e_i‖² in 8 dimensions, e_0 = 0 and e_1 = (0.2, 0.4, ..., 1.6), from x = 0.3; full-gradient local
// steps with η = 0.01, τ = (1, 10), equal weights, full participation (federated_quadratic_test in 8-D). From x
// a client's update is Δ_i(x) = −a_i(x − e_i), a_i = 1 − (1 − η)^τ_i, and FedAvg's fixed point is
// x* = Σ a_i e_i / Σ a_i.
constexpr size_t kSmall = 8;
constexpr int kRounds = 3000;

std::vector<float> e1() {
  std::vector<float> e(kSmall);
  for (size_t j = 0; j < kSmall; ++j) e[j] = 0.2f * static_cast<float>(j + 1);
  return e;
}

double a(int tau) { return 1.0 - std::pow(1.0 - 0.01, tau); }

RunInputs quadratic_run() {
  RunInputs in = star_run(2, models::FlAlgorithm::FedAvg, 1, kRounds);
  in.config.fabric.bandwidth = 25e9;
  in.config.gpu = {"test-gpu", 10e12, 10e12, 10e12, 40e9, 0.5};
  in.config.fl.local_steps_by_client = {1, 10};
  in.config.fl.eval_every = 500;
  return in;
}

Outcome train_quadratic(const RunInputs& in) {
  return train(in, {std::vector<float>(kSmall, 0.0f), e1()}, std::vector<float>(kSmall, 0.3f));
}

double distance_to_fixed_point(const std::vector<float>& x) {
  const double w = a(10) / (a(1) + a(10));
  double worst = 0.0;
  for (size_t j = 0; j < kSmall; ++j) worst = std::max(worst, std::fabs(x.at(j) - w * e1()[j]));
  return worst;
}

// topk with ratio 1 sends Δ exactly: the same run bit for bit (error feedback keeps nothing). With compressed
// downloads too the clients start from x̃ + (x − x̃), x up to rounding.
TEST(CompressedFederatedQuadratic, TopKOfEverythingIsTheUncompressedRun) {
  RunInputs in = quadratic_run();
  in.config.fl.rounds = 300;
  in.length = {1, 300};
  const Outcome plain = train_quadratic(in);
  in.config.compression.settings.ratio = 0.3;  // with kind = none: no compressor, nothing changes
  const Outcome none = train_quadratic(in);
  set_topk(in.config, 1.0, true);
  const Outcome topk = train_quadratic(in);
  in.config.compression.downloads = true;
  const Outcome both = train_quadratic(in);
  ASSERT_EQ(plain.params.size(), kSmall);
  for (size_t j = 0; j < kSmall; ++j) {
    EXPECT_EQ(none.params[j], plain.params[j]) << j;
    EXPECT_EQ(topk.params[j], plain.params[j]) << j;
    EXPECT_NEAR(both.params[j], plain.params[j], 1e-6) << j;
  }
  EXPECT_EQ(none.rows, plain.rows);
  EXPECT_FALSE(none.details.contains("compression"));
  EXPECT_GT(distance_to_fixed_point(std::vector<float>(kSmall, 0.3f)), 0.5);
  EXPECT_LT(distance_to_fixed_point(plain.params), 1e-3) << "300 rounds get close to x*";
}

// topk with k = 4 of 8. With error feedback, the virtual iterate v = x + Σ p_i e_i (e_i the residuals) follows
// exact FedAvg, so x settles within 2·sup‖Σ p_i e_i‖ of x*; a residual holds about d/k rounds of a coordinate's
// update, which near x* is Δ_i(x*) = a_i(e_i − x*): the tolerance is 2·(d/k)·max_i ‖Δ_i(x*)‖∞ = 0.058.
// Without error feedback the two clients' top-4 selections soon pick the same coordinates with opposite
// updates, which then cancel: the run stalls short of x* (a double-precision replay of both stalls at 0.11 in
// the ∞-norm, while error feedback stays within 0.007).
TEST(CompressedFederatedQuadratic, ErrorFeedbackReachesTheFedAvgFixedPointAndTopKAloneStalls) {
  const double w = a(10) / (a(1) + a(10));
  double largest_update = 0.0;
  for (size_t j = 0; j < kSmall; ++j) {
    const double x_star = w * e1()[j];
    largest_update = std::max({largest_update, a(1) * x_star, a(10) * std::fabs(e1()[j] - x_star)});
  }
  const double tolerance = 2.0 * (kSmall / 4.0) * largest_update;

  RunInputs in = quadratic_run();
  set_topk(in.config, 0.5, true);
  const Outcome ef = train_quadratic(in);
  set_topk(in.config, 0.5, false);
  const Outcome alone = train_quadratic(in);
  const double d_ef = distance_to_fixed_point(ef.params), d_alone = distance_to_fixed_point(alone.params);
  std::printf("tolerance %.4f; after %d rounds |x - x*|inf: error feedback %.5f, without %.5f\n", tolerance, kRounds,
              d_ef, d_alone);
  EXPECT_LE(d_ef, tolerance);
  EXPECT_GT(d_alone, tolerance);
  EXPECT_GT(ef.details["compression"]["relative_error"].get<double>(), 0.0);
  EXPECT_TRUE(ef.details["compression"]["error_feedback"].get<bool>());
}

}  // namespace
}  // namespace dtsim::sim
