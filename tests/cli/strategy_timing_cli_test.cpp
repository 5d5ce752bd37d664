// Timing-only runs of a workload (workload.name without workload.proxy) with the asynchronous parameter
// server and with federated learning. Their timing actors (sim/strategies/timing/ps_timing.hpp, fl_timing.hpp)
// run the strategies' protocols without values; a proxy run of the same workload runs the real strategy with
// the workload's costs. The two must give the same simulated time, bytes and staleness: that pins the timing
// actors to the strategies they stand for. Then the closed forms, the scaling order as the network slows,
// and the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

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
const std::string kQuick = "run " + kScenarios + "quickstart.ini --quiet --set workload.name=llama-7b-lora" +
                           " --set workload.micro_batch=1";

struct Folder {
  fs::path path = fs::temp_directory_path() / ("dtsim_strategy_timing_" + std::to_string(getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

nlohmann::json run_summary(const std::string& command, const fs::path& out) {
  const auto r = run_dtsim(command + " --out " + out.string(), true);
  EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
  std::ifstream f(out / "summary.json");
  std::ostringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str());
}

// The same job run twice: as a proxy run of the real strategy (`proxy_length` sets its training length) and
// timing-only (`timing_length`). Every such pair must agree on the simulated time (to 1e-9) and the bytes.
struct ProxyAndTiming {
  nlohmann::json proxy, timing;
};

ProxyAndTiming run_both(const std::string& args, const std::string& proxy_length, const std::string& timing_length,
                        const fs::path& dir) {
  ProxyAndTiming r{run_summary(kQuick + args + proxy_length + " --set workload.proxy=true", dir / "proxy"),
                   run_summary(kQuick + args + timing_length, dir / "timing")};
  EXPECT_EQ(r.timing["mode"], "timing-only");
  const double t = r.proxy["simulated_time_s"].get<double>();
  EXPECT_NEAR(r.timing["simulated_time_s"].get<double>(), t, 1e-9 * t) << args;
  EXPECT_EQ(r.timing["simulation"]["bytes_sent"].get<double>(), r.proxy["bytes_sent"].get<double>()) << args;
  return r;
}

TEST(StrategyTiming, AsyncPsTimingOnlyRunsTheProxysProtocol) {
  // Four workers, one shard, two global batches' worth of gradients (eight).
  Folder f;
  const auto [proxy, timing] = run_both(" --set training.strategy=async-ps --set ps.servers=1 --set cluster.workers=4",
                                        " --set training.max_steps=2", " --set workload.steps=2", f.path);
  const nlohmann::json& sim = timing["simulation"];
  EXPECT_EQ(sim["strategy"], "async-ps");
  EXPECT_EQ(sim["async-ps"]["mean_staleness"].get<double>(), proxy["mean_staleness"].get<double>());
  EXPECT_EQ(sim["async-ps"]["gradients_applied"], 8);
  // Identical workers whose compute dwarfs the transfers take turns: once under way, every gradient is applied
  // after the other three workers' (staleness 3); the first round of pulls all see version 0 (0, 1, 2, 3).
  EXPECT_DOUBLE_EQ(sim["async-ps"]["mean_staleness"].get<double>(), (0 + 1 + 2 + 3 + 4 * 3) / 8.0);
  EXPECT_EQ(sim["async-ps"]["max_staleness"], 3);
  // The workers hold no optimizer state or master weights: the shards do.
  EXPECT_EQ(timing["memory_per_gpu"]["optimizer"], 0);
  EXPECT_EQ(timing["memory_per_gpu"]["master_weights"], 0);
}

TEST(StrategyTiming, LocalSgdTimingOnlyRunsTheProxysSteps) {
  // The quickstart's 8 GPUs averaging LoRA's adapters every 2 steps for 5 steps: after steps 2, 4 and the last.
  Folder f;
  const auto [proxy, timing] = run_both(" --set training.strategy=local --set local.local_steps=2",
                                        " --set training.max_steps=5", " --set workload.steps=5", f.path);
  const nlohmann::json& sim = timing["simulation"];
  EXPECT_EQ(sim["strategy"], "local");
  EXPECT_EQ(sim["local"]["averagings"], 3);
  // Each average is a ring allreduce of the bf16 adapters over 8 ranks: 2 x 7 x their bytes.
  const double trained = timing["workload"]["trainable"].get<double>();
  EXPECT_EQ(sim["bytes_sent"].get<double>(), 3 * 2 * 7 * 2 * trained);
  // Without averaging, a step is the GPU's compute alone.
  EXPECT_NEAR(sim["compute_s_per_step"].get<double>(), sim["one_gpu_step_s"].get<double>(),
              1e-9 * sim["one_gpu_step_s"].get<double>());
}

// Post-local SGD: 2 synchronous steps (their gradient buckets allreduced during backward), then local steps
// averaged every 2 counted from the switch, and after the last: steps 3 and 4 (of 0-4), 2 averages.
TEST(StrategyTiming, PostLocalSgdTimingOnlyRunsTheProxysSteps) {
  Folder f;
  const auto [proxy, timing] =
      run_both(" --set training.strategy=local --set local.local_steps=2 --set local.sync_until_step=2",
               " --set training.max_steps=5", " --set workload.steps=5", f.path);
  const nlohmann::json& sim = timing["simulation"];
  EXPECT_EQ(sim["local"]["sync_until_step"], 2);
  EXPECT_EQ(sim["local"]["averagings"], 2);
  // Two synchronous steps' gradients and two averages of the weights, each a ring allreduce of the bf16
  // adapters over 8 ranks (2 x 7 x their bytes): the gradients travel in bf16 as well here.
  const double trained = timing["workload"]["trainable"].get<double>();
  EXPECT_EQ(sim["bytes_sent"].get<double>(), (2 + 2) * 2 * 7 * 2 * trained);
  // The synchronous steps expose communication, so the run is slower than local SGD from the start.
  const nlohmann::json local = run_summary(kQuick + " --set training.strategy=local --set local.local_steps=2"
                                                    " --set workload.steps=5",
                                           f.path / "local");
  EXPECT_GT(timing["simulated_time_s"].get<double>(), local["simulated_time_s"].get<double>());
}

TEST(StrategyTiming, AsyncPsShardsCarryTheSameLayersInBothModes) {
  // Three shards: the proxy run splits the MLP's tensors for its numerics, but each shard's messages carry
  // the same whole layers of LoRA as the timing-only run's shards.
  Folder f;
  const auto [proxy, timing] = run_both(" --set training.strategy=async-ps --set ps.servers=3 --set cluster.workers=4",
                                        " --set training.max_steps=2", " --set workload.steps=2", f.path);
  EXPECT_EQ(timing["simulation"]["async-ps"]["mean_staleness"].get<double>(), proxy["mean_staleness"].get<double>());
}

TEST(StrategyTiming, AsyncPsUnderAStalenessBoundHoldsPullsAsTheProxyDoes) {
  // Four workers, one shard, bound 1: a pull is served only while the oldest outstanding computation's
  // staleness plus the computations outstanding stay within 1, so at most two computations run at once.
  Folder f;
  const auto [proxy, timing] = run_both(" --set training.strategy=async-ps --set ps.servers=1 --set cluster.workers=4"
                                        " --set ps.staleness_bound=1",
                                        " --set training.max_steps=2", " --set workload.steps=2", f.path);
  const nlohmann::json& sim = timing["simulation"]["async-ps"];
  EXPECT_EQ(sim["mean_staleness"].get<double>(), proxy["mean_staleness"].get<double>());
  EXPECT_EQ(sim["held_pulls"], proxy["strategy"]["held_pulls"]);
  EXPECT_GT(sim["held_pulls"].get<double>(), 0);
  EXPECT_LE(sim["max_staleness"].get<double>(), 1);
  // Two computations at a time: a global batch's worth (four) takes twice one computation, plus transfers.
  const double compute = timing["simulation"]["compute_s_per_step"].get<double>();
  EXPECT_GT(timing["simulation"]["step_s"].get<double>(), 2 * compute);
  EXPECT_LT(timing["simulation"]["step_s"].get<double>(), 2 * compute * 1.05);
}

TEST(StrategyTiming, StragglersSlowEveryStrategyAsTheyDoTheProxys) {
  // Two of the 8 workers at half speed, and 30 % of steps 3 times slower with a lognormal jitter: each timing
  // actor multiplies its compute by the draw the real strategy uses for that worker and step.
  Folder f;
  const std::string slow = " --set stragglers.slow_fraction=0.25 --set stragglers.step_probability=0.3"
                           " --set stragglers.step_slowdown=3 --set stragglers.lognormal_sigma=0.2";
  const struct {
    const char* name;
    std::string args, proxy_length, timing_length;
  } cases[] = {
      {"sync", "", " --set training.max_steps=3", " --set workload.steps=3"},
      {"local", " --set training.strategy=local --set local.local_steps=2", " --set training.max_steps=3",
       " --set workload.steps=3"},
      {"post-local", " --set training.strategy=local --set local.local_steps=2 --set local.sync_until_step=1",
       " --set training.max_steps=3", " --set workload.steps=3"},
      {"async-ps", " --set training.strategy=async-ps --set ps.servers=1", " --set training.max_steps=2",
       " --set workload.steps=2"},
      {"federated", " --set training.strategy=federated --set fl.rounds=2 --set fl.clients_per_round=4"
                    " --set fl.local_steps=2", "", ""},
  };
  for (const auto& c : cases) {
    const auto [proxy, timing] = run_both(c.args + slow, c.proxy_length, c.timing_length, f.path / c.name);
    const auto [plain_proxy, plain_timing] = run_both(c.args, c.proxy_length, c.timing_length, f.path / c.name / "plain");
    EXPECT_GT(timing["simulated_time_s"].get<double>(), 1.2 * plain_timing["simulated_time_s"].get<double>()) << c.name;
  }
}

TEST(StrategyTiming, AsyncPsShardsOwnWholeLayers) {
  // LoRA's adapters are 32 trained layers of 262,144 values (each block's q and v adapters, r = 16 on a hidden
  // size of 4096: 2 x 2 x 4096 x 16): the best split into three runs of whole layers has 11 in its largest
  // shards (the earliest cuts: 10, 11, 11).
  Folder f;
  const nlohmann::json s = run_summary(kQuick + " --set training.strategy=async-ps --set ps.servers=3"
                                                " --set cluster.workers=2 --set workload.steps=2",
                                       f.path / "three");
  const nlohmann::json& values = s["simulation"]["async-ps"]["shard_values"];
  const double trained = s["workload"]["trainable"].get<double>();
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0].get<double>() + values[1].get<double>() + values[2].get<double>(), trained);
  EXPECT_EQ(trained, 32 * 2 * 2 * 4096 * 16);
  EXPECT_EQ(values[0].get<double>(), 10 * trained / 32);
  EXPECT_EQ(values[1].get<double>(), 11 * trained / 32);
  EXPECT_EQ(values[2].get<double>(), 11 * trained / 32);
  // Four gradients pushed (bf16) and pulled (bf16), and a 64-byte first pull request per worker and shard.
  EXPECT_EQ(s["simulation"]["bytes_sent"].get<double>(), 4 * (2 * trained + 2 * trained) + 2 * 3 * 64);
}

TEST(StrategyTiming, FederatedTimingOnlyRunsTheProxysRounds) {
  // Six clients, three rounds of K = 2 with over-commit (3 sampled, the first 2 reports kept), and among the
  // three a protocol straggler doing fewer local steps (partial policy), which reports first: the slower of
  // the other two is cancelled.
  Folder f;
  const std::string base = " --set training.strategy=federated --set cluster.workers=6 --set fl.rounds=3"
                           " --set fl.clients_per_round=2 --set fl.overcommit=0.5 --set fl.local_steps=3"
                           " --set fl.straggler_fraction=0.34";
  const std::string fl = base + " --set fl.straggler_policy=partial";
  const auto [proxy, timing] = run_both(fl, "", "", f.path);
  const nlohmann::json& rounds = timing["simulation"]["federated"];
  EXPECT_EQ(rounds["reports_kept"], 6);
  EXPECT_EQ(rounds["dropped_overcommit"], 3);
  EXPECT_EQ(rounds["reports_kept"], proxy["strategy"]["aggregated"]["total"]);
  EXPECT_EQ(rounds["dropped_overcommit"], proxy["strategy"]["dropped"]["overcommit"]);
  EXPECT_EQ(rounds["dropped_stragglers"], proxy["strategy"]["dropped"]["straggler"]);
  // With the drop policy the straggler only downloads; the two others are kept.
  const nlohmann::json drop = run_summary(kQuick + base + " --set fl.straggler_policy=drop", f.path / "drop");
  EXPECT_EQ(drop["simulation"]["federated"]["dropped_stragglers"], 3);
  EXPECT_EQ(drop["simulation"]["federated"]["dropped_overcommit"], 0);
}

TEST(StrategyTiming, FederatedDeadlinesCutTheSameWorkAsTheProxys) {
  // Six clients asked for 1 to 6 local steps of about 0.42 s each, all in every round, a 1.5 s deadline: under
  // the drop policy the three with 4 or more steps miss it; under the partial policy they upload the 3 steps
  // they finished (the one in progress does not count).
  Folder f;
  const std::string fl = " --set training.strategy=federated --set cluster.workers=6 --set fl.rounds=2"
                         " --set fl.clients_per_round=6 --set fl.local_steps_by_client=1,2,3,4,5,6"
                         " --set fl.deadline=1.5s";
  for (const char* policy : {"drop", "partial"}) {
    const auto [proxy, timing] = run_both(fl + " --set fl.straggler_policy=" + policy, "", "", f.path / policy);
    const nlohmann::json& rounds = timing["simulation"]["federated"];
    EXPECT_EQ(rounds["reports_kept"], proxy["strategy"]["aggregated"]["total"]) << policy;
    EXPECT_EQ(rounds["dropped_deadline"], proxy["strategy"]["dropped"]["deadline"]) << policy;
    const bool drop = std::string(policy) == "drop";
    EXPECT_EQ(rounds["reports_kept"], drop ? 2 * 3 : 2 * 6) << policy;
    EXPECT_EQ(rounds["local_steps_kept"], drop ? 2 * (1 + 2 + 3) : 2 * (1 + 2 + 3 + 3 + 3 + 3)) << policy;
  }
}

TEST(StrategyTiming, FederatedSecureAggregationAndAvailabilityWindowsAsTheProxys) {
  // Six clients, every available one in each of 3 rounds of 3 local steps (about 1.3 s a round), with secure
  // aggregation's messages and host time; client 2 is online until 2 s (lost in the second round, absent from
  // the third), client 4 from 1 s (absent from the first round): 5, 6 and 5 selected, 5 kept each time.
  Folder f;
  const auto [proxy, timing] = run_both(" --set training.strategy=federated --set cluster.workers=6"
                                        " --set fl.rounds=3 --set fl.clients_per_round=6 --set fl.local_steps=3"
                                        " --set fl.secure_aggregation=true"
                                        " --set \"fl.availability_trace=2: 0s to 2s; 4: from 1s\"",
                                        "", "", f.path);
  const nlohmann::json& rounds = timing["simulation"]["federated"];
  EXPECT_EQ(rounds["lost"], 1);
  EXPECT_EQ(rounds["lost"], proxy["strategy"]["dropped"]["lost"]);
  EXPECT_EQ(rounds["reports_kept"], 5 + 5 + 5);
  EXPECT_EQ(rounds["reports_kept"], proxy["strategy"]["aggregated"]["total"]);
  // Secure aggregation adds its setup, mask headroom and unmasking to 16 downloads and 15 uploads of the
  // adapters (bf16).
  const double trained = timing["workload"]["trainable"].get<double>();
  EXPECT_GT(timing["simulation"]["bytes_sent"].get<double>(), (16 + 15) * 2 * trained);
}

TEST(StrategyTiming, FederatedRoundIsDownloadLocalStepsUploadAndAggregation) {
  // One client per round on a contention-free star: a round is the download, H local steps and the upload,
  // back to back, then the server's aggregation; with the adapters small and local steps long, H local
  // steps dominate, so rounds of 4 local steps take twice as long as rounds of 2, less the transfers' share.
  Folder f;
  const std::string fl = " --set training.strategy=federated --set cluster.workers=2 --set fl.rounds=2"
                         " --set fl.clients_per_round=1";
  const nlohmann::json two = run_summary(kQuick + fl + " --set fl.local_steps=2", f.path / "two");
  const nlohmann::json four = run_summary(kQuick + fl + " --set fl.local_steps=4", f.path / "four");
  const double step = two["simulation"]["one_gpu_step_s"].get<double>();
  const double round2 = two["simulation"]["step_s"].get<double>();
  const double round4 = four["simulation"]["step_s"].get<double>();
  EXPECT_NEAR(round4 - round2, 2 * step, 1e-9 * step);  // the transfers and aggregation are the same
  EXPECT_GT(round2, 2 * step);
  EXPECT_LT(round2, 2 * step * 1.01);
  EXPECT_EQ(two["simulation"]["federated"]["model_bytes"].get<double>(), 2 * two["workload"]["trainable"].get<double>());
}

TEST(StrategyTiming, AsyncPsScalingFallsAsTheNetworkSlows) {
  // Full fine-tuning of GPT-2 XL on 16 GPUs with 2 shards: its 3 GB of gradients a push make the shards' links
  // the bottleneck on the slower fabrics.
  Folder f;
  double previous = 2.0;
  for (const char* fabric : {"ib-ndr-400", "roce-100", "eth-25g-tcp"}) {
    const nlohmann::json s = run_summary("run " + kScenarios + "workload_gpt2_xl.ini --quiet" +
                                             " --set training.strategy=async-ps --set ps.servers=2" +
                                             " --set cluster.workers=16 --set workload.steps=3 --set fabric.profile=" +
                                             fabric,
                                         f.path / fabric);
    const double scaling = s["simulation"]["scaling_efficiency"].get<double>();
    EXPECT_LT(scaling, previous) << fabric;
    previous = scaling;
  }
  EXPECT_LT(previous, 0.5);
}

TEST(StrategyTiming, WhatItDoesNotSimulateIsRefusedAtTheKey) {
  const std::string check = "check " + kScenarios + "workload_llama_7b_lora.ini";
  const auto epochs = run_dtsim(check + " --set training.strategy=federated", true);
  EXPECT_EQ(epochs.exit_code, 2);
  EXPECT_NE(epochs.err.find("fl.local_steps: a timing-only run of a workload has no dataset to count local epochs in"),
            std::string::npos)
      << epochs.err;
  const auto failures = run_dtsim(check + " --set \"faults.events=worker 1 down at 1s\"", true);
  EXPECT_EQ(failures.exit_code, 2);
  EXPECT_NE(failures.err.find("faults.events: a timing-only run of a workload does not simulate failures"),
            std::string::npos)
      << failures.err;
  // The keys that only change the values are flagged, the ones that plan the work are read.
  const auto fl = run_dtsim(check + " --set training.strategy=federated --set fl.local_steps=2 --set fl.server_lr=0.5"
                                    " --set fl.clients_per_round=4 --set fl.overcommit=0.2 --set workload.steps=4",
                            true);
  EXPECT_EQ(fl.exit_code, 0) << fl.err;
  EXPECT_NE(fl.err.find("fl.server_lr: has no effect in a timing-only run of a workload"), std::string::npos) << fl.err;
  EXPECT_NE(fl.err.find("workload.steps: has no effect: a federated timing-only run lasts fl.rounds rounds"),
            std::string::npos)
      << fl.err;
  EXPECT_EQ(fl.err.find("fl.overcommit"), std::string::npos) << fl.err;
}

// async_two_sites.ini: the workers behind the WAN (ranks 8-15) push fewer and staler gradients as its latency
// grows, while the near site's gradients stay about as fresh (docs/validation.md, "Staleness behind a slow
// link"). The timing alone, on 20 global steps: 320 gradients.
TEST(AsyncTwoSites, ASlowerLinkMakesItsWorkersGradientsFewerAndStaler) {
  Folder f;
  struct Site {
    double share = 0, staleness = 0;
  };
  const auto sites = [&](const std::string& latency) {
    const nlohmann::json s = run_summary("run " + kScenarios + "async_two_sites.ini --quiet --set training.max_steps=20 "
                                         "--set cluster.wan_latency=" + latency,
                                         f.path / latency);
    std::pair<Site, Site> out;  // near, far
    double applied[2] = {0, 0}, stale[2] = {0, 0}, total = 0;
    for (const auto& w : s["strategy"]["workers"]) {
      const int site = w["rank"].get<int>() < 8 ? 0 : 1;
      const double n = w["gradients_applied"].get<double>();
      applied[site] += n;
      stale[site] += n * w["mean_staleness"].get<double>();
      total += n;
    }
    EXPECT_EQ(total, 320);
    out.first = {applied[0] / total, stale[0] / applied[0]};
    out.second = {applied[1] / total, applied[1] > 0 ? stale[1] / applied[1] : 0};
    return out;
  };
  const auto [near_fast, far_fast] = sites("10us");
  const auto [near_slow, far_slow] = sites("10ms");
  EXPECT_GT(far_fast.share, 0.3) << "at 10 us both sites send";
  EXPECT_LT(far_slow.share, far_fast.share / 5);
  EXPECT_GT(far_slow.staleness, 5 * far_fast.staleness);
  EXPECT_LT(near_slow.staleness, near_fast.staleness + 1.0) << "the near site's gradients stay fresh";
}

}  // namespace
