// `dtsim workload` through the executable: the catalog list, one workload's figures and memory verdict, the
// machine-readable forms, and bad input as exit 2 with one line naming the flag or file.
#include <gtest/gtest.h>

#include <sstream>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_dtsim.hpp"

namespace {

using dtsim::testing::lines_of;
using dtsim::testing::run_dtsim;

TEST(WorkloadCli, ListsTheCatalog) {
  const auto r = run_dtsim("workload");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"bert-large", "gpt2-xl", "llama-7b", "llama-7b-lora", "llama2-70b", "mpt-760m", "mpt-1b",
                           "mpt-3b", "mpt-7b", "mpt-13b", "mpt-30b", "mpt-70b", "resnet50"})
    EXPECT_NE(r.output.find(std::string("\n") + name + " "), std::string::npos) << name << "\n" << r.output;
  EXPECT_NE(r.output.find("6,738,415,616"), std::string::npos);
  const auto csv = lines_of(run_dtsim("workload --format csv").output);
  ASSERT_EQ(csv.size(), 14u);  // a header and 13 workloads
  EXPECT_EQ(csv[1].rfind("bert-large,transformer,336226108,336226108,sequence,512,", 0), 0u) << csv[1];
}

TEST(WorkloadCli, TheJsonDocumentAddsUp) {
  const auto r = run_dtsim("workload llama2-70b --gpus 64 --zero 3 --checkpointing --gpu h100-80gb --format json",
                           true);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.err;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["parameters"].get<unsigned long long>(), 68976648192ull);
  const auto& m = doc["memory_per_gpu_bytes"];
  // ZeRO-3 over 64 GPUs: 16 bytes per weight, sharded.
  const double psi = 68976648192.0;
  EXPECT_NEAR(m["weights"].get<double>() + m["master_weights"].get<double>() + m["gradients"].get<double>() +
                  m["optimizer"].get<double>(),
              16 * psi / 64, 1);
  EXPECT_NEAR(m["total"].get<double>(),
              m["weights"].get<double>() + m["master_weights"].get<double>() + m["gradients"].get<double>() +
                  m["optimizer"].get<double>() + m["activations"].get<double>(),
              1);
  EXPECT_TRUE(doc["fits"].get<bool>());
  EXPECT_EQ(doc["gpu"]["name"], "H100-SXM5-80GB");
  EXPECT_GT(doc["recompute_flops_per_sample"].get<double>(), 0);
}

TEST(WorkloadCli, SaysWhatWouldMakeItFit) {
  const auto r = run_dtsim("workload llama2-70b --gpus 64");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("A100-SXM4-80GB (80 GB): does not fit"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("would fit with ZeRO stage 3 with activation checkpointing"), std::string::npos);
  // On one GPU its bf16 weights alone (138 GB) exceed the 80 GB: LoRA, which keeps them, is not offered.
  const auto one = run_dtsim("workload llama2-70b");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find("LoRA"), std::string::npos) << one.output;
}

TEST(WorkloadCli, PerLayerTableInForwardOrder) {
  const auto csv = lines_of(run_dtsim("workload resnet50 --layers --format csv").output);
  ASSERT_GT(csv.size(), 100u);
  EXPECT_EQ(csv[1].rfind("stem.conv,conv,-1,9408,9408,", 0), 0u) << csv[1];  // 7 x 7 x 3 x 64
  EXPECT_EQ(csv.back().rfind("loss,loss,", 0), 0u);
}

nlohmann::json simulation(const std::string& args) {
  const auto r = run_dtsim("workload " + args + " --simulate --format json", true);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.output)["simulation"];
}

TEST(WorkloadCli, OneSimulatedGpuIsItsComputeAlone) {
  const auto s = simulation("resnet50 --micro-batch 64 --gpus 1 --steps 3");
  EXPECT_NEAR(s["step_s"].get<double>(), s["one_gpu_step_s"].get<double>(), 1e-9);
  EXPECT_NEAR(s["scaling_efficiency"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(s["exposed_communication_s_per_step"].get<double>(), 0.0);
}

// Gradient accumulation: m micro-batches a step, one allreduce. One GPU alone takes m passes and one optimizer
// step; the extra time a step takes is that of the extra passes; twice the samples a step.
TEST(WorkloadCli, AccumulationAddsPassesNotAllreduces) {
  const auto one = simulation("resnet50 --micro-batch 64 --gpus 8 --steps 3");
  const auto two = simulation("resnet50 --micro-batch 64 --gpus 8 --steps 3 --set sync.accumulation_steps=2");
  EXPECT_EQ(two["micro_batches_per_step"].get<int>(), 2);
  const double pass = two["one_gpu_step_s"].get<double>() - one["one_gpu_step_s"].get<double>();
  EXPECT_GT(pass, 0.0);
  EXPECT_NEAR(two["step_s"].get<double>() - one["step_s"].get<double>(), pass, 1e-6 * one["step_s"].get<double>());
  EXPECT_NEAR(two["exposed_communication_s_per_step"].get<double>(), one["exposed_communication_s_per_step"].get<double>(),
              1e-9);
  EXPECT_NEAR(two["samples_per_second"].get<double>() * two["step_s"].get<double>(), 2 * 8 * 64, 1e-6);
}

// ZeRO-3 keeps only a shard of the weights, so each micro-batch gathers every unit again (forward and
// backward) and reduce-scatters its own gradients, as DeepSpeed's ZeRO-3 and FSDP without no_sync do: two
// micro-batches send exactly twice the bytes of one, and take at least one more micro-batch's compute.
TEST(WorkloadCli, ZeroThreeAccumulationGathersAndReduceScattersEveryMicroBatch) {
  const std::string job = "resnet50 --micro-batch 64 --gpus 8 --zero 3 --steps 3";
  const auto one = simulation(job);
  const auto two = simulation(job + " --set sync.accumulation_steps=2");
  EXPECT_EQ(two["micro_batches_per_step"].get<int>(), 2);
  EXPECT_EQ(two["bytes_sent"].get<uint64_t>(), 2 * one["bytes_sent"].get<uint64_t>());
  const double pass = two["one_gpu_step_s"].get<double>() - one["one_gpu_step_s"].get<double>();
  EXPECT_GT(pass, 0.0);
  EXPECT_GE(two["step_s"].get<double>(), one["step_s"].get<double>() + pass * (1 - 1e-9));
  // The optimizer still steps once: the second micro-batch adds its forward and backward only.
  EXPECT_NEAR(two["compute_s_per_step"].get<double>() - one["compute_s_per_step"].get<double>(), pass,
              1e-6 * one["step_s"].get<double>());
  EXPECT_NEAR(two["samples_per_second"].get<double>() * two["step_s"].get<double>(), 2 * 8 * 64, 1e-6);
  // Under --zero 3 the prefetch depth is read: gathers queued earlier, the same bytes.
  EXPECT_EQ(simulation(job + " --set sync.prefetch_units=2")["bytes_sent"], one["bytes_sent"]);
}

TEST(WorkloadCli, GpuKeysReachTheReportAndTheSimulationAlike) {
  const auto r = run_dtsim("workload resnet50 --micro-batch 64 --gpus 1 --steps 2 --simulate --format json "
                           "--set gpu.efficiency=0.6 --set gpu.memory=1GB", true);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["at_gpu_efficiency"]["efficiency"].get<double>(), 0.6);
  EXPECT_NEAR(doc["simulation"]["step_s"].get<double>(), doc["at_gpu_efficiency"]["step_s"].get<double>(), 1e-9);
  EXPECT_FALSE(doc["fits"].get<bool>());  // 1 GB
}

TEST(WorkloadCli, ScalingEfficiencyFallsAsTheNetworkSlows) {
  // GPT-2 XL on 16 A100s, 2 nodes of 8: the slower the fabric between nodes, the more of each step waits.
  const std::string job =
      "gpt2-xl --micro-batch 4 --gpus 16 --steps 3 --set cluster.gpus_per_node=8 "
      "--set cluster.intra_node_fabric=nvlink3-nvswitch --set collective.algorithm=hierarchical --set fabric.profile=";
  double previous = 1.0;
  for (const char* fabric : {"ib-ndr-400", "roce-100", "eth-25g-tcp", "eth-10g-tcp"}) {
    const auto s = simulation(job + fabric);
    const double efficiency = s["scaling_efficiency"].get<double>();
    EXPECT_LT(efficiency, previous) << fabric;
    EXPECT_GT(efficiency, 0.0);
    previous = efficiency;
  }
}

// A synchronous step's wait for a slow worker's backward pass is not communication: a fabric four times as
// fast used to leave the 'exposed communication' of a half-speed straggler's step almost unchanged (23.18
// against 21.73 ms). Split out, the wait is about the slow worker's extra compute whatever the fabric, and
// what is left as exposed communication is what it is without the straggler, give or take the overlap.
TEST(WorkloadCli, WaitingForAStragglerIsNotExposedCommunication) {
  const std::string job = "resnet50 --micro-batch 64 --gpus 16 --steps 3 --set fabric.profile=";
  const std::string slow = " --set stragglers.slow_workers=3 --set stragglers.slow_factor=0.5";
  for (const char* fabric : {"ib-hdr-200", "ib-xdr-800"}) {
    const auto even = simulation(job + fabric), uneven = simulation(job + fabric + slow);
    EXPECT_EQ(even["waiting_for_slowest_s_per_step"].get<double>(), 0.0) << fabric;
    const double compute = even["compute_s_per_step"].get<double>();
    const double wait = uneven["waiting_for_slowest_s_per_step"].get<double>();
    // 15 of 16 workers wait for the slow one's backward pass, about as long as its extra compute (the
    // forward and backward passes at half speed, the optimizer step after the wait excluded).
    EXPECT_GT(wait, 0.5 * compute * 15.0 / 16.0) << fabric;
    EXPECT_LT(wait, 1.0 * compute) << fabric;
    EXPECT_LT(uneven["exposed_communication_s_per_step"].get<double>(),
              2.0 * even["exposed_communication_s_per_step"].get<double>() + 1e-4)
        << fabric << ": the wait is no longer counted as communication";
  }
}

// Keys that do nothing are refused by the rules dtsim run warns by: under --zero 2 no allreduce is left for
// collective.algorithm to choose (the tree used to be accepted, and the step read the ring's time).
TEST(WorkloadCli, ZerosCollectivesAreRingsWhateverTheAlgorithmKey) {
  const auto r = run_dtsim("workload bert-large --micro-batch 8 --gpus 16 --simulate --steps 3 --zero 2 "
                           "--set cluster.gpus_per_node=8 --set cluster.intra_node_fabric=nvlink3-nvswitch "
                           "--set collective.algorithm=tree", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("collective.algorithm: has no effect with --zero 2"), std::string::npos) << r.err;
}

// A GPU without a price or power figures has no cost or energy: null, not 0 (which reads as free).
TEST(WorkloadCli, AnUnpricedGpuHasNoCostRatherThanAFreeOne) {
  const auto s = simulation("bert-large --micro-batch 8 --gpus 2 --gpu h200-141gb --steps 2");
  EXPECT_TRUE(s["cost_per_unit"].is_null()) << s["cost_per_unit"];
  EXPECT_TRUE(s["currency"].is_null()) << s["currency"];
  const auto priced = simulation("bert-large --micro-batch 8 --gpus 2 --steps 2");
  EXPECT_GT(priced["cost_per_unit"][0].get<double>(), 0.0);
  EXPECT_EQ(priced["currency"], "CNY");
}

// The CSV holds every digit: summed in a spreadsheet, GPT-2 XL block 0's saved bytes give the JSON's sum
// (to 6 significant digits the CSV lost 400 bytes of 186,777,600).
TEST(WorkloadCli, TheCsvKeepsEveryDigit) {
  const auto csv = run_dtsim("workload gpt2-xl --format csv", true);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.output.find("e+"), std::string::npos) << csv.output.substr(0, 400);
  // Korthikanti et al.'s activations of one block: s·h·(34 + 5·a·s/h) bytes, s = 1024, h = 1600, a = 25.
  double block0 = 0;
  std::istringstream lines(csv.output);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream cs(line);
    for (std::string cell; std::getline(cs, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 12u) << line;
    if (cells[2] == "0") block0 += std::stod(cells[9]);
  }
  EXPECT_EQ(block0, 1024.0 * 1600 * (34 + 5.0 * 25 * 1024 / 1600));
}

// ZeRO stages on 8 GPUs, per step: stage 2 reduce-scatters the gradients and all-gathers the updated weights
// (2 (N - 1) M bytes on the wire for M bytes of bf16 weights), stage 3 gathers every weight twice, before
// forward and before backward (3 (N - 1) M): 1.5 times as much. Stage 3 also keeps 1/8 of the weights.
TEST(WorkloadCli, ZeroStage3MovesHalfAgainStage2sBytes) {
  const std::string job = "gpt2-xl --micro-batch 4 --gpus 8 --steps 3 --zero ";
  const auto two = simulation(job + "2"), three = simulation(job + "3");
  const double ratio = three["bytes_sent"].get<double>() / two["bytes_sent"].get<double>();
  EXPECT_NEAR(ratio, 1.5, 1e-6);
  EXPECT_NEAR(two["bytes_sent"].get<double>(), 3 * 2 * 7 * 2.0 * 1557611200, 3 * 2 * 7 * 2.0 * 1557611200 * 1e-6);
  EXPECT_GT(three["step_s"].get<double>(), 0);
}

// A network price per GPU-hour adds its share to the cost of a million samples: price × GPUs × hours per
// million samples, the same step time.
TEST(WorkloadCli, TheNetworksPriceAddsToTheCost) {
  const std::string job = "resnet50 --micro-batch 64 --gpus 16 --steps 3";
  const auto plain = simulation(job);
  const auto priced = simulation(job + " --set fabric.price_low=2 --set fabric.price_high=4 --set fabric.price_currency=CNY");
  EXPECT_EQ(plain["step_s"].get<double>(), priced["step_s"].get<double>());
  const double gpu_hours = 16 * plain["seconds_per_unit"].get<double>() / 3600;
  EXPECT_NEAR(priced["cost_per_unit"][0].get<double>() - plain["cost_per_unit"][0].get<double>(), 2 * gpu_hours, 1e-9);
  EXPECT_NEAR(priced["cost_per_unit"][1].get<double>() - plain["cost_per_unit"][1].get<double>(), 4 * gpu_hours, 1e-9);
  EXPECT_TRUE(plain["network_price_per_gpu_hour"].is_null());
  EXPECT_EQ(priced["network_price_per_gpu_hour"][1].get<double>(), 4.0);
}

// With random stragglers the seed draws which steps are slowed, so two seeds give two runs.
TEST(WorkloadCli, TheSeedDrawsTheStragglersOfASimulation) {
  const std::string job = "workload resnet50 --micro-batch 64 --gpus 4 --steps 4 --simulate --format json "
                          "--set stragglers.step_probability=0.5 --set stragglers.step_slowdown=3 --set run.seed=";
  const auto a = run_dtsim(job + "1", true), b = run_dtsim(job + "2", true);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  // The simulated figures, without the wall time it took.
  const auto simulated = [](const std::string& output) {
    nlohmann::json s = nlohmann::json::parse(output)["simulation"];
    s.erase("wall_s_per_step");
    return s;
  };
  EXPECT_NE(simulated(a.output)["compute_s_per_step"], simulated(b.output)["compute_s_per_step"]);
  EXPECT_EQ(simulated(run_dtsim(job + "1", true).output), simulated(a.output)) << "the same seed, the same run";
}

// ZeRO shards over the data-parallel GPUs: on one GPU the stage changes nothing, and the command says so.
TEST(WorkloadCli, ZeroOnOneGpuIsReportedAsWithoutEffect) {
  const auto one = run_dtsim("workload llama-7b --zero 2 --format json", true);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.err, "dtsim: warning: command line: --zero: has no effect on one GPU: ZeRO shards the model state "
                     "over the data-parallel GPUs, and one holds it all, as without ZeRO (--gpus 1)\n");
  const auto plain = run_dtsim("workload llama-7b --format json", true);
  EXPECT_EQ(nlohmann::json::parse(one.output)["memory_per_gpu_bytes"], nlohmann::json::parse(plain.output)["memory_per_gpu_bytes"]);
  EXPECT_EQ(run_dtsim("workload llama-7b --zero 2 --gpus 8 --format json", true).err, "");
}

TEST(WorkloadCli, BadInputIsExitTwoWithOneLine) {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"workload gpt3", "dtsim: error: gpt3: is not a catalog workload or a .json file; known: bert-large"},
           {"workload llama-7b --zero 4", "dtsim: error: command line: --zero: '4' is not a whole number from 0 to 3"},
           {"workload llama-7b --optimizer adamw", "dtsim: error: command line: --optimizer: unknown value 'adamw'"},
           {"workload --gpus 8", "dtsim: error: command line: --gpus: applies to one workload; name a workload"},
           {"workload llama-7b --gpu a100", "dtsim: error: "},
           {"workload a b", "dtsim: error: command line: unexpected argument 'b'"},
           {"workload gpt2-xl --steps 3", "dtsim: error: command line: --steps: applies to a simulation; add --simulate"},
           {"workload gpt2-xl --simulate --set cluster.workers=4",
            "dtsim: error: command line: --set: cluster.workers is set by --gpus; use that flag"},
           // Until 2026-12-07 these two were read and then not applied: the flags own what they set.
           {"workload gpt2-xl --simulate --set compute.optimizer_kernels=foreach",
            "dtsim: error: command line: --set: compute.optimizer_kernels is set by --optimizer-kernels; use that flag"},
           {"workload gpt2-xl --simulate --set framework.profile=pytorch-fsdp",
            "dtsim: error: command line: --set: framework.profile is not read by dtsim workload"},
           // Only stage 3 gathers weights ahead; under --zero 0 the key would change nothing.
           {"workload gpt2-xl --simulate --gpus 2 --set sync.prefetch_units=2",
            "dtsim: error: command line: sync.prefetch_units: has no effect without --zero 3"},
           // Until 2026-12-08 only the collective keys and sync.prefetch_units went through dtsim run's rules, and
           // these three were read and then changed nothing.
           {"workload gpt2-xl --simulate --set gpu.multiprocessors=100",
            "dtsim: error: command line: gpu.multiprocessors: has no effect with compute.matmul = roofline"},
           {"workload gpt2-xl --simulate --set compute.matmul=tiles --set gpu.efficiency=0.3",
            "dtsim: error: command line: gpu.efficiency: has no effect with compute.matmul = tiles"},
           {"workload gpt2-xl --simulate --gpus 2 --set stragglers.step_slowdown=2",
            "dtsim: error: command line: stragglers.step_slowdown: has no effect"},
           {"workload gpt2-xl --simulate --set training.lr=1",
            "dtsim: error: command line: training.lr: has no effect on a timing-only run of a workload"},
           // Before 2026-12-06 a failure reached the timing actors, which deadlocked and printed an infinite rate.
           {"workload resnet50 --simulate --gpus 4 --steps 3 --set \"faults.events=worker 1 down at 1ms\"",
            "dtsim: error: command line: faults.events: a timing-only run of a workload does not simulate failures"},
           // The first step is not counted: one step measures nothing (workload.steps has the same range).
           {"workload resnet50 --simulate --steps 1", "dtsim: error: command line: --steps: '1' is not a whole number from 2"},
           // One workload's csv is its per-layer table: a setup flag would change nothing in it.
           {"workload llama-7b --format csv --gpus 4",
            "dtsim: error: command line: --gpus: has no effect with --format csv (the per-layer table"},
           {"workload llama-7b --format csv --checkpointing", "dtsim: error: command line: --checkpointing: has no effect"},
           // The seed draws only random stragglers.
           {"workload resnet50 --simulate --gpus 4 --steps 3 --set run.seed=3",
            "dtsim: error: command line: run.seed: has no effect on a timing-only run of a workload without stragglers"},
       }) {
    const auto r = run_dtsim(c.args, true);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(r.output.empty()) << c.args << ": " << r.output;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << c.args << ": " << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  }
}

TEST(WorkloadCli, ABrokenFileNamesItsLineAndField) {
  const auto path = std::filesystem::temp_directory_path() / ("wl" + std::to_string(::getpid())) / "mine.json";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "{\n  \"name\": \"mine\",\n  \"title\": \"x\",\n  \"architecture\": \"resnet\",\n"
                         "  \"sources\": [\"s\"],\n  \"resnet\": {\"image\": 224, \"classes\": 10,\n"
                         "    \"stages\": [{\"blocks\": 1, \"width\": 8, \"strides\": 2}]}\n}\n";
  const auto r = run_dtsim("workload " + path.string(), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim: error: " + path.string() +
                       ":7: resnet.stages[0].strides: is not a field here; fields: blocks, width, stride\n");
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
