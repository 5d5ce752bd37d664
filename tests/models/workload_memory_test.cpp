// Memory per GPU against ZeRO's closed forms and the fit advice.
#include <algorithm>
#include <gtest/gtest.h>

#include "models/workload/catalog.hpp"
#include "models/workload/memory.hpp"

namespace dtsim::models {
namespace {

TEST(WorkloadMemory, ZeroStagesMatchThePapersFigureOne) {
  // Rajbhandari et al., ZeRO (arXiv:1910.02054), Figure 1: a 7.5B-parameter model, 64 GPUs, mixed-precision
  // Adam (K = 12): 120 GB without ZeRO, 31.4 GB with stage 1, 16.6 GB with stage 2, 1.9 GB with stage 3.
  MemorySetup s;
  s.data_parallel = 64;
  const double psi = 7.5e9;
  const double expected[] = {120e9, 31.4e9, 16.6e9, 1.9e9};
  for (int stage = 0; stage <= 3; ++stage) {
    s.zero_stage = stage;
    const double gb = state_memory(psi, psi, s).total();
    EXPECT_NEAR(gb, expected[stage], 0.05e9) << "stage " << stage;
  }
  // The exact forms behind the rounded figures: (2 + 2 + 12) Ψ, 4 Ψ + 12 Ψ / N, 2 Ψ + 14 Ψ / N, 16 Ψ / N.
  s.zero_stage = 2;
  EXPECT_DOUBLE_EQ(state_memory(psi, psi, s).total(), 2 * psi + 14 * psi / 64);
}

TEST(WorkloadMemory, FrozenWeightsCarryNoGradientOrOptimizerState) {
  MemorySetup s;  // bf16 weights and gradients, Adam, fp32 master weights
  const MemoryBreakdown m = state_memory(1e9, 1e6, s);
  EXPECT_DOUBLE_EQ(m.weights, 2e9);
  EXPECT_DOUBLE_EQ(m.gradients, 2e6);
  EXPECT_DOUBLE_EQ(m.optimizer, 8e6);
  EXPECT_DOUBLE_EQ(m.master_weights, 4e6);
  s.weight_bytes = 4;  // fp32 training needs no master copy
  EXPECT_DOUBLE_EQ(state_memory(1e9, 1e6, s).master_weights, 0);
}

TEST(WorkloadMemory, ActivationsScaleWithTheMicroBatch) {
  const Workload w = find_workload("gpt2-xl", DTSIM_WORKLOAD_DIR);
  MemorySetup s;
  s.micro_batch = 4;
  const MemoryBreakdown m = memory_per_gpu(w, s);
  EXPECT_DOUBLE_EQ(m.activations, 4 * w.saved_bytes(2));
  s.checkpointing = true;
  EXPECT_LT(memory_per_gpu(w, s).activations, m.activations / 5);
}

TEST(WorkloadMemory, AdviceForSeventyBillionOnEightyGigabytes) {
  const Workload w = find_workload("llama2-70b", DTSIM_WORKLOAD_DIR);
  MemorySetup s;
  s.data_parallel = 64;
  const double capacity = 80e9;
  // 16 bytes per weight: 1.1 TB of state, far beyond one GPU; ZeRO-3 over 64 GPUs holds 17 GB of it.
  ASSERT_GT(memory_per_gpu(w, s).total(), 1e12);
  const auto ways = ways_to_fit(w, s, capacity);
  ASSERT_FALSE(ways.empty());
  EXPECT_EQ(ways.front().rfind("ZeRO stage 3", 0), 0u) << ways.front();
  // LoRA keeps the frozen weights, 138 GB in bf16, and a 4,096-token sequence's activations: it fits only
  // with both sharded and checkpointed, and says so.
  EXPECT_EQ(ways.back().rfind("LoRA fine-tuning with ZeRO stage 3 and activation checkpointing", 0), 0u) << ways.back();
  // Every offered setup does fit.
  MemorySetup z3 = s;
  z3.zero_stage = 3;
  z3.checkpointing = ways.front().find("checkpointing") != std::string::npos;
  EXPECT_LE(memory_per_gpu(w, z3).total(), capacity);
  // On one GPU nothing shards them: LoRA is not offered (its weights alone exceed the GPU).
  MemorySetup alone;
  for (const std::string& way : ways_to_fit(w, alone, capacity)) EXPECT_EQ(way.find("LoRA"), std::string::npos) << way;
  // Where the frozen weights and activations fit, LoRA is offered with that floor: LLaMA-7B's 13.5 GB of bf16
  // weights plus one sequence's activations on an 80 GB GPU that its full fine-tuning (16 bytes a weight) overflows.
  const Workload llama7 = find_workload("llama-7b", DTSIM_WORKLOAD_DIR);
  const auto seven = ways_to_fit(llama7, alone, capacity);
  ASSERT_FALSE(seven.empty());
  const MemoryBreakdown full = memory_per_gpu(llama7, alone);
  const std::string floor = format_gigabytes(2.0 * static_cast<double>(llama7.parameters()) + full.activations);
  EXPECT_NE(seven.back().find("LoRA fine-tuning, which trains adapters only (at least " + floor), std::string::npos)
      << seven.back();
  // The least change first: two GPUs at ZeRO stage 1 hold LLaMA-7B's full fine-tuning (the advice used to be
  // stage 3 with checkpointing), and a smaller micro-batch without checkpointing is offered where it fits.
  EXPECT_EQ(seven.front().rfind("ZeRO stage 1 over 2 GPUs", 0), 0u) << seven.front();
  MemorySetup one = alone;
  one.data_parallel = 2;
  one.zero_stage = 1;
  EXPECT_LE(memory_per_gpu(llama7, one).total(), capacity);
  MemorySetup big_batch;
  big_batch.micro_batch = 512;
  const Workload resnet = find_workload("resnet50", DTSIM_WORKLOAD_DIR);
  const auto smaller = ways_to_fit(resnet, big_batch, 32e9);
  EXPECT_NE(std::find_if(smaller.begin(), smaller.end(),
                         [](const std::string& w) { return w.rfind("micro-batch 256 and gradient accumulation", 0) == 0; }),
            smaller.end());
  big_batch.micro_batch = 256;
  EXPECT_LE(memory_per_gpu(resnet, big_batch).total(), 32e9);
  // One that fits gets no advice.
  EXPECT_TRUE(ways_to_fit(find_workload("resnet50", DTSIM_WORKLOAD_DIR), MemorySetup{}, capacity).empty());
}

TEST(WorkloadMemory, RefusesNonsense) {
  MemorySetup s;
  s.zero_stage = 4;
  EXPECT_THROW(state_memory(1, 1, s), std::invalid_argument);
  s = MemorySetup{};
  s.data_parallel = 0;
  EXPECT_THROW(state_memory(1, 1, s), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
