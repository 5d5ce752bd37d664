// compute.matmul = tiles from the command line: a workload run times its products from their shapes, a GPU
// without the model's inputs is refused at the key with the fix, and the keys of the model that is not in use
// are reported, not silently ignored.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"
#include "tests/cli/scratch_folder.hpp"

namespace {

namespace fs = std::filesystem;
using dtsim::testing::run_dtsim;
using dtsim::testing::run_summary;

const std::string kScenarios = std::string(DTSIM_SOURCE_DIR) + "/scenarios/";

struct Folder {
  fs::path path = fs::temp_directory_path() / ("dtsim_matmul_" + std::to_string(getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};


double step_seconds(const fs::path& run) { return run_summary(run)["simulation"]["step_s"].get<double>(); }

TEST(MatmulModel, TilesTimeAWorkloadFromItsShapesAndTheRooflineStaysTheDefault) {
  // ResNet-50 on one H100 (no communication): the roofline charges its products at 0.4 of the peak (the
  // profile's end-to-end efficiency) and its bytes at the datasheet's 3.35 TB/s; tiles its products at the
  // 794.5 TFLOP/s large products reach in a kernel benchmark, less what wave and tile quantisation lose, and
  // its bytes at the 0.867 of 3.35 TB/s a streaming copy reaches.
  Folder f;
  const std::string job = "run " + kScenarios + "workload_resnet50.ini --quiet --set cluster.workers=1 "
                          "--set cluster.gpus_per_node=1 --set cluster.topology=star --set workload.steps=2 --set gpu.profile=h100-80gb --out ";
  const auto roofline = run_dtsim(job + (f.path / "roofline").string(), true);
  ASSERT_EQ(roofline.exit_code, 0) << roofline.err;
  const auto tiles = run_dtsim(job + (f.path / "tiles").string() + " --set compute.matmul=tiles", true);
  ASSERT_EQ(tiles.exit_code, 0) << tiles.err;
  const auto datasheet = run_dtsim(job + (f.path / "datasheet").string() +
                                   " --set compute.matmul=tiles --set gpu.memory_efficiency=1", true);
  ASSERT_EQ(datasheet.exit_code, 0) << datasheet.err;
  // The key acts in a timing-only run, so it is not reported as one without effect.
  EXPECT_EQ(tiles.err.find("compute.matmul: has no effect"), std::string::npos) << tiles.err;
  // summary.json says which model timed the products, with its inputs.
  const nlohmann::json by_roofline = run_summary(f.path / "roofline")["compute_model"];
  EXPECT_EQ(by_roofline["matmul"], "roofline");
  EXPECT_EQ(by_roofline["math"], "bf16");
  EXPECT_DOUBLE_EQ(by_roofline["gpus"][0]["efficiency"].get<double>(), 0.4);
  EXPECT_FALSE(by_roofline["gpus"][0].contains("achievable_flops"));
  const nlohmann::json by_tiles = run_summary(f.path / "tiles")["compute_model"];
  EXPECT_EQ(by_tiles["matmul"], "tiles");
  EXPECT_DOUBLE_EQ(by_tiles["gpus"][0]["achievable_flops"].get<double>(), 794.5e12);
  EXPECT_EQ(by_tiles["gpus"][0]["multiprocessors"], 132);
  EXPECT_EQ(by_tiles["gpus"][0]["tile"], "128x256");
  // Memory traffic at the share of 3.35 TB/s a device-to-device copy reached on an H100 (the profile cites it).
  EXPECT_DOUBLE_EQ(by_tiles["gpus"][0]["memory_efficiency"].get<double>(), 0.867);
  EXPECT_FALSE(by_roofline["gpus"][0].contains("memory_efficiency"));
  EXPECT_FALSE(by_tiles["gpus"][0].contains("efficiency"));
  const double r = step_seconds(f.path / "roofline"), t = step_seconds(f.path / "tiles"),
               t1 = step_seconds(f.path / "datasheet");
  // With the bytes at the same bandwidth as the roofline's, the products alone differ: faster than at 0.4 of
  // the peak, and not below the bound a perfect GPU would give (every product at 794.5 TFLOP/s is at least
  // 0.4 × 989.4 / 794.5 = 0.50 of the roofline's product time).
  EXPECT_LT(t1, r);
  EXPECT_GT(t1, 0.5 * r);
  // At the measured streaming bandwidth every memory time grows by 1 / 0.867 and nothing else moves, so the
  // step lies between the two.
  EXPECT_GT(t, t1);
  EXPECT_LT(t, t1 / 0.867);
}

TEST(MatmulModel, DtsimWorkloadSimulatesUnderTilesWhatItsTiledLineCharges) {
  // `dtsim workload --simulate --set compute.matmul=tiles`: one GPU's compute in the simulated step is the step
  // the `tiled` line prints (the same shapes, the job's own BF16 rate, element-wise bytes at the measured share of
  // the bandwidth), on an A100 and on an H100.
  for (const std::string gpu : {"a100-80gb", "h100-80gb"}) {
    const auto out = run_dtsim("workload resnet50 --micro-batch 64 --gpu " + gpu +
                                   " --simulate --steps 2 --set compute.matmul=tiles --format json", true);
    ASSERT_EQ(out.exit_code, 0) << out.err;
    const nlohmann::json report = nlohmann::json::parse(out.output);
    const double tiled = report["tiled_products"]["step_s"].get<double>();
    const double roofline = report["compute_per_micro_batch_s"]["total"].get<double>();
    const nlohmann::json& sim = report["simulation"];
    EXPECT_NEAR(sim["one_gpu_step_s"].get<double>(), tiled, 1e-9 * tiled) << gpu;
    EXPECT_NEAR(sim["compute_s_per_step"].get<double>(), tiled, 1e-6 * tiled) << gpu;
    EXPECT_GT(tiled, roofline) << gpu;  // the bound at the datasheet's peak and bandwidth is faster
  }
  // The job's precision picks the rate: no profile gives a TF32 kernel benchmark, so a TF32 job is refused at
  // the key rather than charged at the BF16 rate.
  const auto tf32 = run_dtsim("workload resnet50 --precision tf32 --simulate --steps 2 --set compute.matmul=tiles", true);
  EXPECT_EQ(tf32.exit_code, 2) << tf32.output;
  EXPECT_NE(tf32.err.find("gpu.achievable_tf32"), std::string::npos) << tf32.err;
}

TEST(MatmulModel, AGpuWithoutTheModelSInputsIsRefusedAtTheKey) {
  // The V100 profile gives its SMs but no achievable BF16 rate (no kernel benchmark of an SXM2 was found).
  const auto v100 = run_dtsim("check " + kScenarios + "workload_resnet50.ini --set gpu.profile=v100-32gb "
                              "--set compute.matmul=tiles", true);
  EXPECT_EQ(v100.exit_code, 2) << v100.output;
  EXPECT_NE(v100.err.find("gpu.achievable_bf16"), std::string::npos) << v100.err;
  EXPECT_NE(v100.err.find("compute.matmul = roofline"), std::string::npos) << v100.err;
  // A training run with numerics charges its products in compute.math (fp32 here), whose rate no profile gives.
  const auto quickstart = run_dtsim("check " + kScenarios + "quickstart.ini --set compute.matmul=tiles", true);
  EXPECT_EQ(quickstart.exit_code, 2);
  EXPECT_NE(quickstart.err.find("gpu.achievable_fp32"), std::string::npos) << quickstart.err;
  EXPECT_EQ(run_dtsim("check " + kScenarios + "quickstart.ini --set compute.matmul=tiles --set compute.math=bf16", true)
                .exit_code,
            0);
  // No SMs: a profile of its own without them.
  const auto no_sms = run_dtsim("check " + kScenarios + "quickstart.ini --set compute.matmul=tiles --set compute.math=bf16 "
                                "--set gpu.multiprocessors=0", true);
  EXPECT_EQ(no_sms.exit_code, 2);
  EXPECT_NE(no_sms.err.find("gpu.multiprocessors"), std::string::npos) << no_sms.err;
}

TEST(MatmulModel, BadTilesAndRatesAboveThePeakAreRefused) {
  const auto tile = run_dtsim("check " + kScenarios + "quickstart.ini --set gpu.matmul_tile=100x128", true);
  EXPECT_EQ(tile.exit_code, 2);
  EXPECT_NE(tile.err.find("gpu.matmul_tile"), std::string::npos) << tile.err;
  EXPECT_NE(tile.err.find("multiple of 16"), std::string::npos) << tile.err;
  const auto stream = run_dtsim("check " + kScenarios + "quickstart.ini --set gpu.memory_efficiency=1.2", true);
  EXPECT_EQ(stream.exit_code, 2);  // a streaming kernel cannot beat the memory's own bandwidth
  EXPECT_NE(stream.err.find("gpu.memory_efficiency"), std::string::npos) << stream.err;
  const auto rate = run_dtsim("check " + kScenarios + "quickstart.ini --set gpu.achievable_bf16=400TFLOPS", true);
  EXPECT_EQ(rate.exit_code, 2);  // the A100's BF16 peak is 312 TFLOPS
  EXPECT_NE(rate.err.find("gpu.achievable_bf16"), std::string::npos) << rate.err;
}

TEST(MatmulModel, TheUnusedModelSKeysAreReported) {
  const auto roofline = run_dtsim("check " + kScenarios + "quickstart.ini --set gpu.multiprocessors=100", true);
  EXPECT_EQ(roofline.exit_code, 0);
  EXPECT_NE(roofline.err.find("gpu.multiprocessors: has no effect with compute.matmul = roofline"), std::string::npos)
      << roofline.err;
  const auto tiles = run_dtsim("check " + kScenarios + "quickstart.ini --set compute.matmul=tiles --set compute.math=bf16 "
                               "--set gpu.efficiency=0.3", true);
  EXPECT_EQ(tiles.exit_code, 0);
  EXPECT_NE(tiles.err.find("gpu.efficiency: has no effect with compute.matmul = tiles"), std::string::npos) << tiles.err;
  const auto stream = run_dtsim("check " + kScenarios + "quickstart.ini --set gpu.memory_efficiency=0.9", true);
  EXPECT_EQ(stream.exit_code, 0);
  EXPECT_NE(stream.err.find("gpu.memory_efficiency: has no effect with compute.matmul = roofline"), std::string::npos)
      << stream.err;
  // Under --strict an unused key is an error.
  EXPECT_EQ(run_dtsim("check " + kScenarios + "quickstart.ini --strict --set gpu.multiprocessors=100", true).exit_code, 2);
}

}  // namespace
