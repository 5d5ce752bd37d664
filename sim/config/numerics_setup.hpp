// Translates the scenario's numerics (optimizer, learning-rate schedule, precision) into the settings of
// the models/ layer. Shared by every training strategy.
#pragma once

#include <cstdint>

#include "models/architectures.hpp"
#include "models/dataset.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/optimizer.hpp"
#include "models/workload/compute_time.hpp"
#include "models/workload/memory.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// How long a run is, in optimizer steps, once the data is known.
struct RunLength {
  int64_t steps_per_epoch = 0;  // usable training samples / global batch
  int64_t total_steps = 0;      // epochs × steps_per_epoch, capped by training.max_steps
};
RunLength run_length(const RunConfig& config, int usable_training_samples);

// The network the scenario asks for, shaped for the training set's samples.
models::NetworkSpec network_spec(const RunConfig& config, const models::Dataset& train);
models::OptimizerSettings optimizer_settings(const RunConfig& config);
models::LrScheduleSettings schedule_settings(const RunConfig& config, const RunLength& length);
models::LossScalerSettings loss_scaler_settings(const RunConfig& config);
models::PrecisionSettings precision_settings(const RunConfig& config);

// The memory and precision setup of a run's roofline and memory check: one micro-batch of batch_per_worker
// samples, the element sizes of [precision], the optimizer's state per trained weight (4 bytes for momentum,
// 8 for Adam-style moments), a replica on every worker.
models::MemorySetup run_memory_setup(const RunConfig& config);
// The rates of `gpu` for a run's roofline: its peak in `math` × gpu.efficiency, memory bandwidth, launch cost;
// with compute.matmul = tiles also its matrix unit (SMs, tile, achievable rate in `math`), which then times the
// products in place of the peak × efficiency; and how the host issues kernels (compute.host_dispatch,
// compute.cuda_graphs).
models::DeviceRates run_device_rates(const GpuSpec& gpu, MathMode math, MatmulModel matmul,
                                     const models::KernelIssue& issue);
// Whether compute.matmul = tiles times `gpu`'s fused attention kernels from its gpu.attention_table: the tables
// measure FlashAttention, which runs in BF16/FP16 only.
bool attention_table_applies(const GpuSpec& gpu, MathMode math);
// The matrix unit alone (disabled for the roofline).
models::MatmulUnit matmul_unit(const GpuSpec& gpu, MathMode math, MatmulModel matmul);

// Builds each of the above once so that the models layer's own validation runs before anything is
// simulated; its complaints become InputErrors at the key a user would change. Also checks that the model
// state and one batch's activations fit in every GPU's gpu.memory. Returns the model's parameter count (0 for the
// span transformer, which check_qa_run checks).
size_t check_numerics(const RunConfig& config, const RunLength& length, const models::Dataset& train,
                      const KeyOrigins& origins);

}  // namespace dtsim::sim
