// Memory per GPU of a training job: weights, gradients, optimizer state and activations, with ZeRO's
// sharding (Rajbhandari et al., SC'20, arXiv:1910.02054) and activation checkpointing. Pure arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// How the optimizer step runs on the GPU. Fused: one pass per trained layer that reads the gradient, the
// weights and the state and writes them back (PyTorch's fused=True, Apex's and DeepSpeed's FusedAdam).
// Foreach: PyTorch's multi-tensor default, one element-wise kernel per arithmetic step of the update, each a
// full pass over its tensors (optimizer_update in compute_time.hpp counts them).
enum class OptimizerKernels { Fused, Foreach };
const NameTable<OptimizerKernels>& optimizer_kernels_table();  // fused, foreach

struct MemorySetup {
  int data_parallel = 1;  // GPUs holding replicas of the model; ZeRO shards its state over them
  int zero_stage = 0;     // 0: none; 1: optimizer state (and fp32 master weights); 2: + gradients; 3: + weights
  double micro_batch = 1;       // samples per GPU in one forward pass
  bool checkpointing = false;   // keep block inputs only, recompute the rest in the backward pass
  double weight_bytes = 2;      // bytes per weight as the kernels read it (2: bf16/fp16, 4: fp32)
  double gradient_bytes = 2;    // bytes per gradient element
  double activation_bytes = 2;  // bytes per saved activation element
  // Optimizer bytes per trained weight: Adam keeps two fp32 moments (8), SGD with momentum one (4).
  double optimizer_bytes = 8;
  // With weights narrower than fp32 the optimizer updates an fp32 master copy (4 bytes per trained weight).
  bool master_weights = true;
  OptimizerKernels optimizer_kernels = OptimizerKernels::Fused;
};

struct MemoryBreakdown {
  double weights = 0, master_weights = 0, gradients = 0, optimizer = 0, activations = 0;
  double total() const { return weights + master_weights + gradients + optimizer + activations; }
};

// The model state alone (no activations) for `parameters` weights of which `trainable` train, per GPU.
// For mixed-precision Adam this is ZeRO's (2 + 2 + 12) Ψ, divided as its stages say.
MemoryBreakdown state_memory(double parameters, double trainable, const MemorySetup& setup);

// Model state plus the activations of one micro-batch.
MemoryBreakdown memory_per_gpu(const Workload& workload, const MemorySetup& setup);

// Throws std::invalid_argument naming the field of a setup that makes no sense (zero GPUs, stage 4...).
void validate(const MemorySetup& setup);

// When `workload` does not fit in `capacity` bytes: changes that would make it fit, each with the memory it would
// need, in the order a user would try them (checkpointing, ZeRO stages, a smaller micro-batch, more GPUs with
// ZeRO-3, LoRA for a fully trained transformer). Empty when it already fits or nothing listed helps.
std::vector<std::string> ways_to_fit(const Workload& workload, const MemorySetup& setup, double capacity);

// "12.3 GB" (10^9 bytes), the unit every memory figure is shown in.
std::string format_gigabytes(double bytes);

}  // namespace dtsim::models
