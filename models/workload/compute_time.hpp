// Compute time of one training step of a workload on one GPU, layer by layer: a roofline (each layer takes the
// longer of its matrix FLOPs at the tensor peak and its bytes at the memory bandwidth) plus a fixed launch
// overhead per kernel. No efficiency factor: what it predicts is a lower bound that real kernels approach;
// docs/workloads.md compares it with published throughputs.
#pragma once

#include "models/workload/memory.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

struct DeviceRates {
  double matmul_flops = 0;      // FLOP/s of matrix products at the training precision (tensor-core peak)
  double memory_bandwidth = 0;  // bytes/s of device memory
  double launch_overhead = 0;   // seconds per kernel launch
};

struct StepCompute {
  double forward = 0, backward = 0, recompute = 0, optimizer = 0;  // seconds
  double compute_bound = 0;  // seconds of layers whose FLOPs take longer than their bytes
  double memory_bound = 0;   // seconds of the others (launches excluded)
  double launches = 0;       // seconds of kernel launches
  int kernels = 0;
  double total() const { return forward + backward + recompute + optimizer; }
};

// One layer's forward (or backward) time for `samples` samples: max(FLOPs / peak, bytes / bandwidth) plus its
// launches. Weights are read once per pass; a trained layer's backward also writes its weight gradient.
double layer_forward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d);
double layer_backward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d);

// One micro-batch (setup.micro_batch samples) forward and backward, the recomputation activation checkpointing
// adds, and the optimizer step over the trained weights (memory-bound: it reads and writes the gradient, the
// master weights, the optimizer state and the weights, one kernel per trained layer; with ZeRO only this GPU's
// 1/N shard).
StepCompute step_compute(const Workload& workload, const MemorySetup& setup, const DeviceRates& device);

// Model FLOPs utilisation: the workload's forward and backward matrix FLOPs (no recomputation) per second
// over the peak.
double model_flops_utilisation(const Workload& workload, double samples, double seconds, double peak_flops);

}  // namespace dtsim::models
