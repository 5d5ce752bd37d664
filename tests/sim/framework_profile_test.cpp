// Framework profiles (network_profiles/framework/): each ships the defaults its framework documents for
// [sync] and [compute] keys (the host's dispatch per kernel and CUDA graphs among them), a scenario's own value overrides the profile's, a bad profile is refused at its
// file and line, and the overlap a profile picks shows on a two-layer toy exactly as a timeline drawn by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "sim/collectives/collective.hpp"
#include "sim/strategies/timing/sync_timing.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/sim/topology_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

// The shared loaders (shipped profiles): a scenario's text to its config, or to the input error it raises.
using testing::config_error_of;
using testing::config_of;

RunConfig framework(const std::string& name) { return config_of("[framework]\nprofile = " + name + "\n"); }

TEST(FrameworkProfiles, EachShipsItsFrameworksDocumentedDefaults) {
  const RunConfig none = config_of("");
  EXPECT_EQ(none.framework, "");
  const RunConfig ddp = framework("pytorch-ddp");
  EXPECT_EQ(ddp.framework, "PyTorch DDP");
  EXPECT_DOUBLE_EQ(ddp.sync.bucket_bytes, 25e6);  // bucket_cap_mb = 25
  EXPECT_TRUE(ddp.sync.overlap);
  EXPECT_EQ(ddp.sync.zero_stage, 0);
  EXPECT_EQ(ddp.optimizer_kernels, models::OptimizerKernels::Foreach);
  const RunConfig fsdp = framework("pytorch-fsdp");
  EXPECT_EQ(fsdp.sync.zero_stage, 3);  // FULL_SHARD
  EXPECT_TRUE(fsdp.sync.overlap);
  EXPECT_EQ(fsdp.optimizer_kernels, models::OptimizerKernels::Foreach);
  const RunConfig zero2 = framework("deepspeed-zero2");
  EXPECT_EQ(zero2.sync.zero_stage, 2);
  EXPECT_DOUBLE_EQ(zero2.sync.bucket_bytes, 5e8 * 2);  // reduce_bucket_size: 5e8 elements of 2 bytes
  EXPECT_FALSE(zero2.sync.overlap);                     // overlap_comm: stage 3 only
  EXPECT_EQ(zero2.optimizer_kernels, models::OptimizerKernels::Fused);
  const RunConfig zero3 = framework("deepspeed-zero3");
  EXPECT_EQ(zero3.sync.zero_stage, 3);
  EXPECT_TRUE(zero3.sync.overlap);
  const RunConfig megatron = framework("megatron-lm");
  EXPECT_FALSE(megatron.sync.overlap);  // overlap_grad_reduce = False
  EXPECT_GE(megatron.sync.bucket_bytes, 1e12);
  EXPECT_EQ(megatron.optimizer_kernels, models::OptimizerKernels::Fused);
  // Every one runs eager PyTorch (PyTorch's operator benchmark: 3.333 us a dispatch) and captures no CUDA graph
  // by default; without a profile nothing is dispatched on the host.
  EXPECT_DOUBLE_EQ(none.kernel_issue.host_dispatch, 0);
  EXPECT_FALSE(none.kernel_issue.cuda_graphs);
  for (const RunConfig* c : {&ddp, &fsdp, &zero2, &zero3, &megatron}) {
    EXPECT_DOUBLE_EQ(c->kernel_issue.host_dispatch, 3.3e-6) << c->framework;
    EXPECT_FALSE(c->kernel_issue.cuda_graphs) << c->framework;
  }
}

TEST(FrameworkProfiles, TheScenarioSOwnValuesOverrideTheProfile) {
  const RunConfig file = config_of("[framework]\nprofile = pytorch-ddp\n[sync]\nbucket_size = 50MB\n");
  EXPECT_DOUBLE_EQ(file.sync.bucket_bytes, 50e6);
  EXPECT_TRUE(file.sync.overlap);  // the rest still the profile's
  const RunConfig flag = config_of("[framework]\nprofile = pytorch-ddp\n", {"compute.optimizer_kernels=fused"});
  EXPECT_EQ(flag.optimizer_kernels, models::OptimizerKernels::Fused);
  EXPECT_EQ(config_of("[framework]\nprofile = pytorch-ddp\nname = my DDP\n").framework, "my DDP");
}

TEST(FrameworkProfiles, ABadProfileIsRefusedWithWhereAndWhy) {
  const std::string unknown = config_error_of("[framework]\nprofile = pytorch-dp\n");
  EXPECT_NE(unknown.find("framework.profile"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("did you mean 'pytorch-ddp'"), std::string::npos) << unknown;
  // A framework profile sets [framework], [sync] and [compute] keys, not a GPU's.
  const std::string dir = ::testing::TempDir() + "framework_profiles_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string bad = dir + "/bad.ini";
  std::ofstream(bad) << "[framework]\nname = bad\n[gpu]\nmemory = 1GB\n";
  const std::string gpu = config_error_of("[framework]\nprofile = " + bad + "\n");
  EXPECT_NE(gpu.find(bad + ":3"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("[framework], [sync] and [compute]"), std::string::npos) << gpu;
  std::ofstream(bad) << "[sync]\nbucket_sise = 1MB\n";
  const std::string typo = config_error_of("[framework]\nprofile = " + bad + "\n");
  EXPECT_NE(typo.find("did you mean 'sync.bucket_size'"), std::string::npos) << typo;
  std::filesystem::remove_all(dir);
}

// The toy: 4 workers on an ideal star (25 GB/s, 1 us links) at 1e12 FLOP/s; forward 2 ms; backward two layers
// of 1 ms, each with 15 M bf16 gradients (30 MB); the optimizer 0.5 ms. The framework decides the rest.
double toy_step(const RunConfig& framework) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    const FabricSpec fabric{"ideal 25 GB/s, 1 us links", 25e9, 1e-6, 0.0, 1.0};
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(4, 1e12, fabric);
    install_fabric_calibration(*engine, fabric);
    TimingSpec s;
    s.forward_flops = 2e9;
    s.segments = {{15'000'000, 15'000'000, 1e9}, {0, 15'000'000, 1e9}};
    s.optimizer_flops = 0.5e9;
    s.bytes_per_value = 2;
    s.bucket_bytes = framework.sync.bucket_bytes;
    s.overlap = framework.sync.overlap;
    s.steps = 3;
    const TimingOutcome t = run_sync_timing(p, s, [&](CollectiveKind kind, const std::string& name) {
      return make_collective(kind, Algorithm::Ring, Fidelity::Stepwise, p, name);
    });
    return dtsim::testing::to_bytes(std::vector<double>{t.step_end_s[2] - t.step_end_s[1]});
  }))[0];
}

TEST(FrameworkProfiles, TheirOverlapOnATwoLayerToyMatchesTheTimelineByHand) {
  // A ring allreduce of S bytes over 4 workers: 2 · 3 · (2 us + S / (4 · 25 GB/s)).
  const auto ring = [](double bytes) { return 6 * (2e-6 + bytes / 100e9); };
  // DDP (25 MB buckets, overlap): each 30 MB layer is a bucket. The first allreduce starts when the first
  // layer's backward ends (3 ms), the second when both it and the backward are done; then the optimizer.
  //   0 ─ forward ─ 2 ─ backward 1 ─ 3 ─ backward 2 ─ 4
  //                                 3 ─ allreduce 1 ─ 3 + r ─ allreduce 2 ─ 3 + 2r ─ optimizer ─ 3.5 + 2r
  const double ddp = 3e-3 + std::max(1e-3, ring(30e6)) + ring(30e6) + 0.5e-3;
  // Megatron (no overlap, one bucket): one 60 MB allreduce after the whole backward.
  //   0 ─ forward ─ 2 ─ backward ─ 4 ─ allreduce of both ─ 4 + R ─ optimizer ─ 4.5 + R
  const double megatron = 4e-3 + ring(60e6) + 0.5e-3;
  const double ddp_step = toy_step(framework("pytorch-ddp")), megatron_step = toy_step(framework("megatron-lm"));
  EXPECT_NEAR(ddp_step, ddp, 1e-3 * ddp);
  EXPECT_NEAR(megatron_step, megatron, 1e-3 * megatron);
  EXPECT_LT(ddp_step, megatron_step);  // 1 ms of the first allreduce hidden behind backward
}

}  // namespace
}  // namespace dtsim::sim
