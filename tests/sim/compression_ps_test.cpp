// Gradient compression in the asynchronous parameter server, against the wire-byte rules of
// models/compression/compression.hpp computed by hand: the bytes a push costs per shard, the time it takes on
// a slow fabric, what the shards apply (a hand replay of error feedback), the metrics columns; and the
// combinations the scenario refuses.
//
// The MLP of ps_testing::mlp_run, 784-64-10, has four tensors: W1 784×64 = 50176 values, b1 64, W2 64×10 = 640,
// b2 10 (n = 50890). Two shards split them as [W1] and [b1 W2 b2] (the largest shard as small as possible).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/compression/compression.hpp"
#include "models/lr_schedule.hpp"
#include "models/objective.hpp"
#include "models/optimizer.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/run_dtsim.hpp"
#include "tests/sim/async_ps_support.hpp"
#include "tests/sim/topology_support.hpp"

namespace dtsim::sim {
namespace {

using ps_testing::Outcome;

constexpr uint64_t kTensors[4] = {50176, 64, 640, 10};
constexpr uint64_t kParams = 50890;

// ⌈log2 d⌉, 0 for d = 1.
uint64_t log2_ceil(uint64_t d) {
  uint64_t bits = 0;
  while ((uint64_t{1} << bits) < d) ++bits;
  return bits;
}

// topk per tensor (compression.hpp): k = max(1, round(ratio·d)) fp32 values and k indices of ⌈log2 d⌉ bits,
// rounded up to whole bytes.
uint64_t topk_bytes(uint64_t d, double ratio) {
  const uint64_t k = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(ratio * static_cast<double>(d))));
  return (k * (32 + log2_ceil(d)) + 7) / 8;
}

struct PsRun {
  Outcome o;
  uint64_t bytes = 0;
};

template <class Train>
PsRun run_child(Train train) {
  const std::string text = dtsim::testing::run_in_child([&] {
    const RunResult r = train();
    nlohmann::json j;
    j["o"] = ps_testing::encode(r);
    j["bytes"] = r.bytes_sent;
    return j.dump();
  });
  const nlohmann::json j = nlohmann::json::parse(text);
  return {ps_testing::decode(j["o"].get<std::string>()), j["bytes"].get<uint64_t>()};
}

PsRun run_mlp(const RunInputs& in) {
  return run_child([&] {
    MetricsLog metrics;
    return run_training(in, metrics);
  });
}

void set_topk(RunConfig& c, double ratio, bool error_feedback) {
  c.compression.settings.kind = models::CompressorKind::TopK;
  c.compression.settings.ratio = ratio;
  c.compression.settings.error_feedback = error_feedback;
}

// The last `n` cells of a metrics.csv row before its final column (nonfinite, which must be empty here).
// A metrics.csv row's compression cells: compression_error, wire_bytes_per_worker, compression_ratio (columns 9
// to 11 of 14; the flag column last must be empty).
std::vector<std::string> compression_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream ss(row);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (row.back() == ',') cells.push_back("");
  EXPECT_EQ(cells.size(), 14u) << row;
  if (cells.size() != 14u) return {"?", "?", "?"};
  EXPECT_EQ(cells.back(), "") << "a non-finite value in " << row;
  return {cells.begin() + 8, cells.begin() + 11};
}

TEST(CompressedParameterServer, PushesCostTheEncodingsBytesPerShard) {
  const int workers = 2, steps = 6, gradients = workers * steps;
  RunInputs in = ps_testing::mlp_run(workers, steps);
  in.config.ps.servers = 2;
  const PsRun dense = run_mlp(in);
  set_topk(in.config, 0.01, false);
  const PsRun topk = run_mlp(in);

  // By hand: W1 k = 502, 16-bit indices: ⌈502·48/8⌉ = 3012; b1 k = 1, 6 bits: 5; W2 k = 6, 10 bits: ⌈252/8⌉ = 32;
  // b2 k = 1, 4 bits: 5. Shard 0 gets 3012 bytes a push, shard 1 42.
  EXPECT_EQ(topk_bytes(kTensors[0], 0.01), 3012u);
  EXPECT_EQ(topk_bytes(kTensors[1], 0.01) + topk_bytes(kTensors[2], 0.01) + topk_bytes(kTensors[3], 0.01), 42u);
  const uint64_t wire = 3012 + 42;
  // The same pulls, requests and goodbyes; every push is 4n − wire bytes lighter.
  EXPECT_EQ(topk.bytes, dense.bytes - gradients * (4 * kParams - wire));
  EXPECT_EQ(topk.o.details["gradients_applied"], gradients);

  const nlohmann::json& c = topk.o.details["compression"];
  EXPECT_EQ(c["kind"], "topk");
  EXPECT_EQ(c["messages"].get<uint64_t>(), static_cast<uint64_t>(gradients));  // one per push
  EXPECT_EQ(c["wire_bytes"].get<uint64_t>(), gradients * wire);
  EXPECT_EQ(c["fp32_bytes"].get<uint64_t>(), gradients * 4 * kParams);
  EXPECT_DOUBLE_EQ(c["compression_ratio"].get<double>(), 4.0 * kParams / wire);
  EXPECT_FALSE(dense.o.details.contains("compression"));

  // metrics.csv: every row after the start has the error in [0, 1], the bytes of a push and the ratio.
  ASSERT_GE(topk.o.rows.size(), 2u);
  EXPECT_EQ(compression_cells(topk.o.rows.front()), (std::vector<std::string>{"", "", ""})) << "nothing compressed yet";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.4f", 4.0 * kParams / wire);
  for (size_t i = 1; i < topk.o.rows.size(); ++i) {
    const std::vector<std::string> cells = compression_cells(topk.o.rows[i]);
    const double error = std::stod(cells[0]);
    EXPECT_GT(error, 0.0) << topk.o.rows[i];
    EXPECT_LE(error, 1.0) << topk.o.rows[i];
    EXPECT_EQ(cells[1], "3054.0") << topk.o.rows[i];
    EXPECT_EQ(cells[2], ratio) << topk.o.rows[i];
  }
  for (const std::string& row : dense.o.rows) EXPECT_EQ(compression_cells(row), (std::vector<std::string>{"", "", ""}));

  // start_step counts each worker's own gradients from 0: steps 0 and 1 of both workers travel dense.
  in.config.compression.settings.start_step = 2;
  const PsRun late = run_mlp(in);
  EXPECT_EQ(late.bytes, dense.bytes - (gradients - 2 * workers) * (4 * kParams - wire));
  EXPECT_EQ(late.o.details["compression"]["messages"].get<uint64_t>(), static_cast<uint64_t>(gradients));
}

TEST(CompressedParameterServer, Fp16HalvesEveryPush) {
  const int workers = 2, steps = 4, gradients = workers * steps;
  RunInputs in = ps_testing::mlp_run(workers, steps);
  const PsRun dense = run_mlp(in);
  in.config.compression.settings.kind = models::CompressorKind::Fp16;
  const PsRun fp16 = run_mlp(in);
  EXPECT_EQ(fp16.bytes, dense.bytes - gradients * 2 * kParams);
  EXPECT_EQ(fp16.o.details["compression"]["wire_bytes"].get<uint64_t>(), gradients * 2 * kParams);
  EXPECT_DOUBLE_EQ(fp16.o.details["compression"]["compression_ratio"].get<double>(), 2.0);
  EXPECT_EQ(compression_cells(fp16.o.rows.back())[2], "2.0000");
}

// One worker on a 100 MB/s fabric without latency: a transfer of S bytes takes S/B whichever shards it is split
// over (the worker's link carries all of it), so the worker's communication time is
//   (64·shards [the first pull request] + G·4n [pulls] + G·push) / B.
TEST(CompressedParameterServer, ASmallerPushTakesLessTimeOnASlowFabric) {
  const int steps = 8;
  const double bandwidth = 1e8;
  RunInputs in = ps_testing::mlp_run(1, steps);
  in.config.ps.servers = 2;
  in.config.fabric.bandwidth = bandwidth;
  const PsRun dense = run_mlp(in);
  set_topk(in.config, 0.01, true);
  const PsRun topk = run_mlp(in);
  const uint64_t wire = 3054;
  const auto expected = [&](double push) { return (64.0 * 2 + steps * 4.0 * kParams + steps * push) / bandwidth; };
  ASSERT_EQ(dense.o.times.size(), 1u);
  EXPECT_NEAR(dense.o.times[0].communication, expected(4.0 * kParams), 1e-9);
  EXPECT_NEAR(topk.o.times[0].communication, expected(static_cast<double>(wire)), 1e-9);
  EXPECT_NEAR(dense.o.times[0].communication - topk.o.times[0].communication,
              steps * (4.0 * kParams - wire) / bandwidth, 1e-9);
  // Compression costs no compute time here, so the run is shorter by exactly the pushes' saving.
  EXPECT_NEAR(dense.o.sim_time - topk.o.sim_time, steps * (4.0 * kParams - wire) / bandwidth, 1e-9);
  std::printf("push: dense %llu B in %.3f ms, topk 1%% %llu B in %.3f ms\n",
              static_cast<unsigned long long>(4 * kParams), 4e3 * kParams / bandwidth,
              static_cast<unsigned long long>(wire), 1e3 * wire / bandwidth);
}

void expect_same_params(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.params.size(), b.params.size());
  size_t differing = 0;
  for (size_t i = 0; i < a.params.size(); ++i) differing += a.params[i] != b.params[i];
  EXPECT_EQ(differing, 0u) << "of " << a.params.size();
}

TEST(CompressedParameterServer, KindNoneIsTheUncompressedRunBitForBit) {
  RunInputs in = ps_testing::mlp_run(3, 5);
  in.config.ps.servers = 2;
  const PsRun plain = run_mlp(in);
  // Settings of other compressors, with kind = none: nothing is constructed, nothing changes.
  in.config.compression.settings.ratio = 0.5;
  in.config.compression.settings.qsgd_levels = 3;
  in.config.compression.settings.start_step = 2;
  const PsRun none = run_mlp(in);
  expect_same_params(none.o, plain.o);
  EXPECT_EQ(none.bytes, plain.bytes);
  EXPECT_EQ(none.o.rows, plain.o.rows);
  EXPECT_EQ(none.o.sim_time, plain.o.sim_time);
  EXPECT_EQ(none.o.details, plain.o.details);
}

// topk with ratio 1 sends every value exactly (and error feedback then keeps nothing): the shards apply the
// same gradients, and only the indices are extra: ⌈d·⌈log2 d⌉/8⌉ per tensor.
TEST(CompressedParameterServer, TopKOfEverythingChangesOnlyTheBytes) {
  const int workers = 2, steps = 4, gradients = workers * steps;
  const uint64_t index_bytes = 50176 * 16 / 8 + 64 * 6 / 8 + 640 * 10 / 8 + (10 * 4 + 7) / 8;  // 101205
  for (const bool mixed : {false, true}) {
    RunInputs in = ps_testing::mlp_run(workers, steps);
    in.config.ps.servers = 2;
    if (mixed) {  // fp16 gradients, dynamic loss scaling from 2^16: compressed unscaled, scaled back exactly
      in.config.precision.activations = gpu::NumberFormat::Fp16;
      in.config.precision.gradients = gpu::NumberFormat::Fp16;
      in.config.precision.loss_scaling = models::LossScaleMode::Dynamic;
    }
    const PsRun dense = run_mlp(in);
    set_topk(in.config, 1.0, true);
    const PsRun topk = run_mlp(in);
    SCOPED_TRACE(mixed ? "mixed precision" : "fp32");
    expect_same_params(topk.o, dense.o);
    const uint64_t dense_push = (mixed ? 2 : 4) * kParams;
    EXPECT_EQ(topk.bytes, dense.bytes - gradients * dense_push + gradients * (4 * kParams + index_bytes));
    EXPECT_EQ(topk.o.details["compression"]["relative_error"].get<double>(), 0.0);
  }
}

// One worker, one shard, plain SGD on F(x) = ½‖x − t‖² (16 values): the shard must apply exactly what a hand loop
// with its own Compressor decodes, step by step (rank 0, steps 0, 1, 2, ...). Error feedback's identity then
// holds at the strategy level: x_T = x_0 − lr·(Σ g − e_T).
TEST(CompressedParameterServer, AppliesTheDecodedGradientsOfErrorFeedback) {
  constexpr size_t d = 16;
  constexpr int steps = 40;
  std::vector<float> target(d), initial(d, 0.0f);
  for (size_t i = 0; i < d; ++i) target[i] = static_cast<float>(i % 5) - 1.5f + 0.1f * static_cast<float>(i);
  RunInputs in = ps_testing::mlp_run(1, steps);
  in.config.lr = 0.1;
  in.config.weight_decay = 0.0;
  in.length = {steps, steps};
  set_topk(in.config, 0.25, true);
  const auto make = [&](gpu::Ops<float>& ops) {
    return std::make_unique<models::QuadraticObjective>(ops, std::vector<std::vector<float>>{target}, initial,
                                                        std::vector<double>{1.0});
  };
  const Outcome ps = ps_testing::run_with(in, make);
  in.config.compression = {};
  const Outcome dense = ps_testing::run_with(in, make);

  gpu::BackendChoice backend = gpu::make_backend(gpu::Device::Cpu);
  gpu::Ops<float>& ops = *backend.ops;
  auto objective = make(ops);
  gpu::Buffer<float> x(ops, d), g(ops, d);
  ops.upload(x.data(), initial.data(), d);
  auto optimizer = models::make_optimizer<float>(ops, objective->param_tensors(), d, optimizer_settings(in.config));
  const models::LrSchedule schedule(schedule_settings(in.config, in.length));
  set_topk(in.config, 0.25, true);
  models::Compressor<float> compressor(ops, objective->tensor_layouts(), d,
                                       in.config.compression.resolved(in.length.steps_per_epoch), 0);
  std::vector<double> gradient_sum(d, 0.0);
  std::vector<float> host(d);
  for (int step = 0; step < steps; ++step) {
    objective->gradient(0, step, x.data(), g.data(), {});
    ops.download(host.data(), g.data(), d);
    for (size_t i = 0; i < d; ++i) gradient_sum[i] += host[i];
    compressor.compress(g.data(), step);
    optimizer->step(x.data(), g.data(), schedule.lr(step));
  }
  ops.download(host.data(), x.data(), d);
  ASSERT_EQ(ps.params.size(), d);
  for (size_t i = 0; i < d; ++i) EXPECT_EQ(ps.params[i], host[i]) << i;

  std::vector<float> residual(d);
  ops.download(residual.data(), compressor.residual(), d);
  double moved = 0.0, apart = 0.0;
  for (size_t i = 0; i < d; ++i) {
    EXPECT_NEAR(ps.params[i], initial[i] - in.config.lr * (gradient_sum[i] - residual[i]), 1e-4) << i;
    moved += std::fabs(ps.params[i] - initial[i]);
    apart += std::fabs(ps.params[i] - dense.params[i]);
  }
  EXPECT_GT(moved, 1.0);
  EXPECT_GT(apart, 1e-3) << "compression changed nothing";
}

// ---- combinations the scenario refuses --------------------------------------------------------------------

const std::string kQuickstart = std::string(DTSIM_SOURCE_DIR) + "/scenarios/quickstart.ini";
void expect_refused(const std::vector<std::string>& sets, const std::string& key) {
  const std::string error = testing::config_error_of("", sets);
  EXPECT_NE(error.find(key), std::string::npos) << error;
  std::string args = "check " + kQuickstart;
  for (const std::string& s : sets) args += " --set " + s;
  const dtsim::testing::DtsimOutcome o = dtsim::testing::run_dtsim(args);
  EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.output;
  EXPECT_NE(o.output.find(key), std::string::npos) << o.output;
}

TEST(CompressionConfig, RefusesWhatAsyncPsAndFederatedCannotServe) {
  for (const char* strategy : {"async-ps", "federated"}) {
    const std::string s = std::string("training.strategy=") + strategy;
    SCOPED_TRACE(strategy);
    expect_refused({s, "compression.kind=sign", "compression.majority_vote=true"}, "compression.majority_vote");
    expect_refused({s, "compression.kind=fp16", "compression.predivide=true"}, "compression.predivide");
    EXPECT_EQ(testing::config_error_of("", {s, "compression.kind=topk", "compression.error_feedback=true"}), "");
  }
  expect_refused({"training.strategy=federated", "fl.secure_aggregation=true", "compression.kind=qsgd"},
                 "compression.kind");
  expect_refused({"training.strategy=federated", "compression.downloads=true"}, "compression.downloads");
  EXPECT_EQ(testing::config_error_of("", {"training.strategy=federated", "fl.secure_aggregation=true"}), "");
  EXPECT_EQ(testing::config_error_of("", {"training.strategy=federated", "compression.kind=topk", "compression.downloads=true"}),
            "");
}

}  // namespace
}  // namespace dtsim::sim
