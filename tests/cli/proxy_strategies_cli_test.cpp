// Proxy mode (workload.proxy) with the strategies that are not synchronous: the asynchronous parameter server
// and federated learning train the scenario's small model for real while every computation and every
// message is charged as the named workload's. Checked against closed forms of the workload's bytes, against
// the compute a synchronous proxy run charges for the same workload, and against the same strategy without the
// proxy where simulated time cannot change the numerics (one worker; federated rounds without a deadline).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";
// LoRA r = 16 of LLaMA-7B: its adapters are what a proxy run's messages carry (bf16: 2 bytes a value).
const std::string kLora = " --set workload.name=llama-7b-lora --set workload.micro_batch=1";
const std::string kProxy = kLora + " --set workload.proxy=true";

struct Folder {
  fs::path path = fs::temp_directory_path() / ("dtsim_proxy_strategies_" + std::to_string(getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

nlohmann::json run_summary(const std::string& args, const fs::path& out) {
  const auto r = run_dtsim("run " + kScenarios + "quickstart.ini --quiet" + args + " --out " + out.string(), true);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  std::ifstream f(out / "summary.json");
  std::ostringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str());
}

// The same run with the proxy and without it.
struct ProxiedAndPlain {
  nlohmann::json proxied, plain;
};

ProxiedAndPlain run_both(const std::string& args, const fs::path& dir) {
  return {run_summary(args + kProxy, dir / "proxy"), run_summary(args, dir / "plain")};
}

// One worker of the quickstart training `steps` steps synchronously as a proxy: with nobody to talk to, its
// simulated time is the workload's forward, backward and optimizer step, `steps` times.
double sync_compute_per_step(const fs::path& out, int steps, const std::string& accumulation) {
  const nlohmann::json s = run_summary(" --set cluster.workers=1 --set training.max_steps=" + std::to_string(steps) +
                                           accumulation + kProxy,
                                       out);
  EXPECT_EQ(s["bytes_sent"].get<double>(), 0.0);
  return s["simulated_time_s"].get<double>() / steps;
}

TEST(ProxyStrategies, AsyncPsPushesTheWorkloadsGradientsAndPullsItsWeights) {
  Folder f;
  const std::string ps = " --set training.strategy=async-ps --set ps.servers=1 --set cluster.workers=1"
                         " --set training.max_steps=3";
  const auto [proxied, plain] = run_both(ps, f.path);
  const double trained = proxied["proxy"]["trainable"].get<double>();
  ASSERT_GT(trained, 1e6);
  // Three gradients: each pulls the adapters (bf16) and pushes their gradients (bf16); the first pull is
  // asked for by a 64-byte control message, the later ones travel with the pushes.
  EXPECT_DOUBLE_EQ(proxied["bytes_sent"].get<double>(), 3 * (2 * trained + 2 * trained) + 64);
  // A worker's compute per gradient is the workload's forward and backward: what one synchronous step costs
  // without its optimizer step. Two micro-batches cost one more forward and backward than one.
  const double one = sync_compute_per_step(f.path / "sync1", 2, "");
  const double two = sync_compute_per_step(f.path / "sync2", 2, " --set sync.accumulation_steps=2");
  const double forward_backward = two - one;
  ASSERT_GT(forward_backward, 0.01);  // seconds: LLaMA-7B's, not the MLP's microseconds
  EXPECT_NEAR(proxied["time_breakdown_s"]["compute"].get<double>(), 3 * forward_backward, 1e-9 * forward_backward);
  // Alone, the worker's gradients are applied in the same order whatever they cost: the numerics are those
  // of the run without the proxy.
  EXPECT_EQ(proxied["final_test_loss"], plain["final_test_loss"]);
  EXPECT_EQ(proxied["final_test_accuracy"], plain["final_test_accuracy"]);
  EXPECT_GT(proxied["simulated_time_s"].get<double>(), 1000 * plain["simulated_time_s"].get<double>());
}

TEST(ProxyStrategies, AsyncPsShardsCarryWholeLayersOfTheWorkload) {
  // Two shards own the MLP's tensors for the numerics; on the wire each carries whole layers of the workload
  // (16 of LoRA's 32 trained layers each), and the shares add up to the workload.
  Folder f;
  const std::string ps = " --set training.strategy=async-ps --set ps.servers=2 --set cluster.workers=4"
                         " --set training.max_steps=2";
  const nlohmann::json s = run_summary(ps + kProxy, f.path / "proxy");
  const double trained = s["proxy"]["trainable"].get<double>();
  const double gradients = s["strategy"]["gradients_applied"].get<double>();
  EXPECT_EQ(gradients, 8);
  // 8 gradients (2 global batches of 4) pushed and pulled, and a first pull request per worker and shard.
  EXPECT_EQ(s["bytes_sent"].get<double>(), gradients * 4 * trained + 4 * 2 * 64);
  EXPECT_GT(s["mean_staleness"].get<double>(), 0.0);  // four workers: gradients arrive stale
}

TEST(ProxyStrategies, FederatedClientsDownloadAndUploadTheWorkloadsAdapters) {
  Folder f;
  const std::string fl = " --set training.strategy=federated --set cluster.workers=4 --set fl.rounds=2"
                         " --set fl.clients_per_round=2 --set fl.local_steps=3 --set fl.local_epochs=0";
  const auto [proxied, plain] = run_both(fl, f.path);
  const double trained = proxied["proxy"]["trainable"].get<double>();
  // Two rounds of two clients, each downloading the adapters and uploading their update, in bf16.
  EXPECT_DOUBLE_EQ(proxied["bytes_sent"].get<double>(), 2 * 2 * (2 * trained + 2 * trained));
  EXPECT_DOUBLE_EQ(proxied["strategy"]["model_bytes"].get<double>(), 2 * trained);
  // A local step is a forward, a backward and an optimizer step: one synchronous step of one worker.
  const double step = sync_compute_per_step(f.path / "sync", 2, "");
  const double steps_done = 2 * 2 * 3;
  EXPECT_NEAR(proxied["time_breakdown_s"]["compute"].get<double>() * 4, steps_done * step, 1e-9 * steps_done * step);
  // No deadline: which clients report does not depend on time, so the global model is the plain run's.
  EXPECT_EQ(proxied["final_test_loss"], plain["final_test_loss"]);
  EXPECT_EQ(proxied["final_test_accuracy"], plain["final_test_accuracy"]);
}

TEST(ProxyStrategies, LocalSgdAveragesTheWorkloadsWeights) {
  // Local SGD averaging every 2 steps over 4 steps on 8 GPUs: two ring allreduces of the adapters.
  Folder f;
  const nlohmann::json s = run_summary(" --set training.strategy=local --set local.local_steps=2"
                                       " --set training.max_steps=4" + kProxy,
                                       f.path / "local");
  const double trained = s["proxy"]["trainable"].get<double>();
  EXPECT_DOUBLE_EQ(s["bytes_sent"].get<double>(), 2 * 2.0 * 7 * trained * 2);
}

// Compression in a proxy run: the small model's gradients are compressed for real, and each message carries
// the workload's values at the bytes per value the small model's were compressed to. The compressor's totals
// in summary.json are the small model's: fp32_bytes is 4 bytes for each of its values, every message.
double small_values_per_message(const nlohmann::json& compression) {
  return compression["fp32_bytes"].get<double>() / 4 / compression["messages"].get<double>();
}

TEST(ProxyStrategies, SyncCompressionSendsTheWorkloadAtTheSmallModelsRatio) {
  // PowerSGD's P and Q are allreduced: 8 ranks of a ring send 2 · 7 times each step's message in all.
  Folder f;
  const std::string sync = " --set training.max_steps=3 --set compression.kind=powersgd --set compression.rank=2";
  const nlohmann::json s = run_summary(sync + kProxy, f.path / "proxy");
  const nlohmann::json& c = s["strategy"]["compression"];
  const double trained = s["proxy"]["trainable"].get<double>();
  const double per_worker_step = c["wire_bytes"].get<double>() / c["messages"].get<double>();
  const double small = small_values_per_message(c);
  ASSERT_LT(per_worker_step, 0.2 * 4 * small) << "PowerSGD compresses the MLP";
  // Rounded per bucket and phase: at most a byte each of LoRA's buckets, per rank and step.
  const double expected = 3 * 2 * 7 * per_worker_step * trained / small;
  const double buckets = s["strategy"]["buckets"].get<double>();
  EXPECT_NEAR(s["bytes_sent"].get<double>(), expected, 3 * 2 * 7 * 2 * buckets);
  EXPECT_LT(s["bytes_sent"].get<double>(), 0.5 * 3 * 2 * 7 * 2 * trained) << "less than the dense bf16 gradients";
}

TEST(ProxyStrategies, AsyncPsAndFederatedCompressTheWorkloadsMessages) {
  Folder f;
  const std::string topk = " --set compression.kind=topk --set compression.ratio=0.01";
  // One worker, one shard: three pushes of the compressed gradient, three pulls of the adapters in bf16, and
  // the first pull's request.
  const nlohmann::json ps = run_summary(" --set training.strategy=async-ps --set ps.servers=1 --set cluster.workers=1"
                                        " --set training.max_steps=3" + topk + kProxy,
                                        f.path / "ps");
  const double trained = ps["proxy"]["trainable"].get<double>();
  const nlohmann::json& pc = ps["strategy"]["compression"];
  const double pushed = pc["wire_bytes"].get<double>() * trained / small_values_per_message(pc);
  EXPECT_NEAR(ps["bytes_sent"].get<double>(), 3 * 2 * trained + pushed + 64, 3.0);
  EXPECT_LT(pushed, 0.1 * 3 * 2 * trained);
  // Federated: two rounds of two clients download the adapters in bf16 and upload their compressed update.
  const nlohmann::json fl = run_summary(" --set training.strategy=federated --set cluster.workers=4 --set fl.rounds=2"
                                        " --set fl.clients_per_round=2 --set fl.local_steps=3 --set fl.local_epochs=0" +
                                            topk + kProxy,
                                        f.path / "fl");
  const nlohmann::json& fc = fl["strategy"]["compression"];
  EXPECT_EQ(fc["messages"].get<double>(), 4);
  const double uploaded = fc["wire_bytes"].get<double>() * trained / small_values_per_message(fc);
  EXPECT_NEAR(fl["bytes_sent"].get<double>(), 2 * 2 * 2 * trained + uploaded, 4.0);
  EXPECT_LT(uploaded, 0.1 * 4 * 2 * trained);
}

// Failures in a proxy run: a restart writes and reads back the workload's checkpoint (LoRA's adapters in fp32
// and Adam's two moments: 12 bytes a trained value), at the big job's times.
TEST(ProxyStrategies, SyncRestartsWriteAndReadTheWorkloadsCheckpoint) {
  Folder f;
  const std::string base = " --set training.max_steps=6 --set collective.fidelity=stepwise" + kProxy;
  const std::string restart = " --set sync.fault_reaction=restart --set sync.checkpoint_every=2"
                              " --set sync.checkpoint_bandwidth=1GB/s --set sync.restart_time=2s"
                              " --set sync.fault_timeout=1s";
  const nlohmann::json plain = run_summary(base, f.path / "plain");
  const double trained = plain["proxy"]["trainable"].get<double>();
  const double checkpoint_s = trained * 12 / 1e9;
  const double run_s = plain["simulated_time_s"].get<double>();
  ASSERT_GT(run_s, 6 * 0.01) << "LLaMA-7B's steps, not the MLP's";
  // A failure after the run: nothing fails, but the checkpoints at steps 2 and 4 cost their write time.
  const nlohmann::json late = run_summary(base + restart + " --set 'faults.events=worker 1 down at 100000s'", f.path / "late");
  EXPECT_EQ(late["strategy"]["checkpoints_written"].get<int>(), 2);
  EXPECT_NEAR(late["simulated_time_s"].get<double>() - run_s, 2 * checkpoint_s, 1e-9 * run_s);
  // Worker 1 down in the middle of the run: the job waits for it, then reads the checkpoint back.
  char events[128];
  std::snprintf(events, sizeof events, " --set 'faults.events=worker 1 down at %.9fs up at %.9fs'", 0.55 * run_s,
                0.55 * run_s + 5.0);
  const nlohmann::json failed = run_summary(base + restart + events, f.path / "failed");
  ASSERT_EQ(failed["status"], "completed");
  const nlohmann::json& report = failed["strategy"]["faults"].at(0);
  const double back = std::max(0.55 * run_s + 5.0, report["detected_at_s"].get<double>() + 2.0);
  EXPECT_NEAR(report["resumed_at_s"].get<double>() - back, checkpoint_s, 1e-6);
  EXPECT_GT(report["steps_rolled_back"].get<int>(), 0);
}

TEST(ProxyStrategies, AsyncPsRefusesMoreShardsThanTheWorkloadHasTrainedLayers) {
  // An MLP of 21 dense layers has 42 tensors, enough for 40 shards of its own; LoRA's 32 trained layers are
  // not, and each shard carries whole layers of the workload.
  std::string hidden = "16";
  for (int i = 1; i < 20; ++i) hidden += ",16";
  const std::string check = "check " + kScenarios + "quickstart.ini --set training.strategy=async-ps" +
                            " --set cluster.workers=2 --set model.hidden=" + hidden + kProxy;
  const auto refused = run_dtsim(check + " --set ps.servers=40", true);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("ps.servers: llama-7b-lora has 32 trained layers, too few for 40 shards of whole "
                             "layers; use at most 32 shards"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(run_dtsim(check + " --set ps.servers=32", true).exit_code, 0);
}

TEST(ProxyStrategies, WarnsWhenTheWorkloadDoesNotFitItsWorkers) {
  // Full training of LLaMA-7B with Adam keeps 16 bytes a weight on each synchronous worker, beyond the
  // quickstart's 40 GB A100s; an async-ps worker keeps only the bf16 weights and gradients (4 bytes a weight,
  // 27 GB) and one sequence's activations, which fit: the shards hold the rest.
  const std::string check = "check " + kScenarios + "quickstart.ini --set workload.name=llama-7b --set workload.proxy=true";
  const auto sync = run_dtsim(check, true);
  EXPECT_EQ(sync.exit_code, 0) << sync.err;
  EXPECT_NE(sync.err.find("warning: workload.proxy: llama-7b needs "), std::string::npos) << sync.err;
  EXPECT_NE(sync.err.find(" per GPU but the A100-SXM4-40GB has 40 GB; charged anyway"), std::string::npos) << sync.err;
  const auto ps = run_dtsim(check + " --set training.strategy=async-ps", true);
  EXPECT_EQ(ps.exit_code, 0) << ps.err;
  EXPECT_EQ(ps.err.find("charged anyway"), std::string::npos) << ps.err;
}

}  // namespace
