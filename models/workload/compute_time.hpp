// Compute time of one training step of a workload on one GPU, layer by layer: a roofline (each layer takes the
// longer of its matrix FLOPs at the tensor peak and its bytes at the memory bandwidth) plus a fixed launch
// overhead per kernel. No efficiency factor: what it predicts is a lower bound that real kernels approach;
// docs/workloads.md compares it with published throughputs.
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload/matmul_time.hpp"
#include "models/workload/memory.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// How the host issues a pass's kernels (compute.host_dispatch, compute.cuda_graphs). An eager framework runs
// its own code for every kernel (Python, the operator dispatcher, autograd's bookkeeping) before it calls the
// launch, and the host runs ahead of the GPU: a pass takes the longer of its GPU time (work plus a launch per
// kernel) and its host time (dispatch plus launch per kernel). A layer of long kernels hides the host; a layer
// of short ones waits for it. A captured CUDA graph replays every kernel from one launch per step: neither the
// dispatch nor the per-kernel launch is paid, and dtsim charges the kernels' work alone, a lower bound (the
// GPU's own gap between graph nodes is not charged).
struct KernelIssue {
  double host_dispatch = 0;  // seconds of framework work on the host per kernel; 0 = none
  bool cuda_graphs = false;
};

struct DeviceRates {
  double matmul_flops = 0;      // FLOP/s of matrix products at the training precision (tensor-core peak)
  double memory_bandwidth = 0;  // bytes/s of device memory; 0 = not known, and memory traffic then costs nothing
  double launch_overhead = 0;   // seconds per kernel launch
  // With a unit (compute.matmul = tiles), a layer's products are timed from their shapes (matmul_time.hpp) and
  // the FLOPs of a layer without shapes (a fused FlashAttention kernel) run at the unit's rate; matmul_flops is
  // then not used for time.
  MatmulUnit matmul{};
  KernelIssue issue{};
};

// One pass of `kernels` kernels whose work (products and memory traffic, launches excluded) takes
// `work_seconds` on the GPU, as KernelIssue says: max(work + kernels × launch, kernels × (launch + dispatch)),
// or the work alone from a CUDA graph.
double issued_seconds(double work_seconds, int kernels, const DeviceRates& d);

struct StepCompute {
  double forward = 0, backward = 0, recompute = 0, optimizer = 0;  // seconds
  double compute_bound = 0;  // seconds of layers whose FLOPs take longer than their bytes
  double memory_bound = 0;   // seconds of the others (launches excluded)
  double launches = 0;       // seconds of kernel launches (none from a CUDA graph)
  double host_bound = 0;     // seconds the GPU waits for the host's dispatch beyond its own work and launches
  int kernels = 0;
  double total() const { return forward + backward + recompute + optimizer; }
};

// One layer's forward (or backward) time for `samples` samples: max(FLOPs / peak, bytes / bandwidth), issued
// with its kernels as issued_seconds says; with a matrix unit, the products' shape-aware times in place of
// FLOPs / peak. Weights are read once per pass; a trained layer's backward also writes its weight gradient.
double layer_forward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d);
double layer_backward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d);

// One micro-batch (setup.micro_batch samples) forward and backward, the recomputation activation checkpointing
// adds, and the optimizer step over the trained weights (memory-bound: it reads and writes the gradient, the
// master weights, the optimizer state and the weights, one kernel per trained layer; with ZeRO only this GPU's
// 1/N shard).
StepCompute step_compute(const Workload& workload, const MemorySetup& setup, const DeviceRates& device);

// One micro-batch's gradient as a simulated worker computes it: the forward pass, then the backward pass cut
// where each trained layer's gradient is complete, in backward order (what gradient buckets are made of).
// An untrained layer's backward time, the loss's, and a checkpointed block's recomputation go to the next
// trained layer the backward pass reaches; what comes after the last one reached (a frozen embedding and
// first blocks under LoRA) is the tail, which runs once every gradient is complete. The parts add up to
// step_compute(...).total().
struct GradientTimeline {
  double forward = 0;                // seconds
  std::vector<double> backward;      // seconds, one per trained layer in backward order
  std::vector<int> trained_layers;   // index into Workload::layers of each backward entry's trained layer
  double tail = 0;                   // seconds of backward after the last gradient is complete
  // The same grouping of layers for the forward pass and the weights (frozen or not; what ZeRO-3 gathers):
  // entry i covers backward entry i's layers (its trained layer and the untrained ones above it), the
  // tail's the layers below the first trained one.
  std::vector<double> segment_forward;        // seconds
  std::vector<std::uint64_t> segment_parameters;
  double tail_forward = 0;
  std::uint64_t tail_parameters = 0;
  double optimizer = 0;              // seconds of the update after the gradients are averaged
  double backward_total() const;  // the segments and the tail
  double total() const { return forward + backward_total() + optimizer; }
};
GradientTimeline gradient_timeline(const Workload& workload, const MemorySetup& setup, const DeviceRates& device);

// The optimizer step's memory traffic per trained weight and its kernels per trained layer. Fused: read the
// gradient and the weight, read and write the fp32 master copy (weights narrower than fp32) and the optimizer
// state, write the weight; one kernel. Foreach, as PyTorch's _multi_tensor_adam and _multi_tensor_sgd run it
// (torch/optim/adam.py, sgd.py): every step below is one kernel that reads its operands and writes its result
// in full, 4-byte state and temporaries, P the tensor the update writes (the fp32 master copy, else the weight):
//   Adam (2 moments): m *= b1; m += (1 − b1) g; v *= b2; v += (1 − b2) g²; t = sqrt(v); t /= c2; t += eps;
//     P += −s · m / t: 16 state passes, 2 of the gradient, 2 of P, 8 kernels;
//   SGD with momentum (1): b *= mu; b += g; P −= lr · b: 5 state passes, 1 gradient, 2 of P, 3 kernels;
//   SGD (0): P −= lr · g: 1 gradient, 2 of P, 1 kernel;
// plus, with a master copy, the copy to the narrower weights (read 4 bytes, write the weight): 1 kernel.
// Throws std::invalid_argument for a foreach setup whose optimizer state is not 0, 4 or 8 bytes.
struct OptimizerUpdate {
  double bytes_per_weight = 0;
  int kernels_per_layer = 0;
};
OptimizerUpdate optimizer_update(const MemorySetup& setup);

// Model FLOPs utilisation: the workload's forward and backward matrix FLOPs (no recomputation) per second
// over the peak.
double model_flops_utilisation(const Workload& workload, double samples, double seconds, double peak_flops);

}  // namespace dtsim::models
