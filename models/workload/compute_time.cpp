#include "models/workload/compute_time.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dtsim::models {
namespace {

// The compute side of one pass of a layer: its products one after another, each from its shape, with a matrix
// unit; else (or for a layer without shapes) its FLOPs at the rate.
double compute_seconds(double flops, const std::vector<LayerProduct>& products, double samples, double element_bytes,
                       const DeviceRates& d) {
  if (!d.matmul.enabled()) return flops / d.matmul_flops;
  if (products.empty()) return flops / d.matmul.large_product_flops;
  double seconds = 0;
  for (const LayerProduct& p : products) seconds += product_time(p.for_samples(samples), element_bytes, d.matmul).seconds;
  return seconds;
}

// A fused attention kernel with the matrix unit's measured table: its time is the table's, not its FLOPs at a rate.
bool timed_from_attention_table(const LayerCost& l, const DeviceRates& d) {
  return d.matmul.enabled() && d.matmul.attention && l.fused_attention.present();
}

// The roofline of one pass of one layer, launches excluded; adds to the bound it falls under.
double roofline(double compute, double bytes, const DeviceRates& d, StepCompute* tally) {
  // Without a memory bandwidth (a profile that gives none) only the FLOPs count.
  const double memory = d.memory_bandwidth > 0 ? bytes / d.memory_bandwidth : 0;
  if (tally) (compute >= memory ? tally->compute_bound : tally->memory_bound) += std::max(compute, memory);
  return std::max(compute, memory);
}

// A pass issued as KernelIssue says; the host's excess over the GPU's own time is tallied as host-bound.
double issue_pass(double work, int kernels, const DeviceRates& d, StepCompute* tally) {
  const double seconds = issued_seconds(work, kernels, d);
  if (tally && !d.issue.cuda_graphs) tally->host_bound += seconds - (work + kernels * d.launch_overhead);
  return seconds;
}

void check(const DeviceRates& d) {
  if (!(d.matmul_flops > 0) || !(d.memory_bandwidth >= 0) || !(d.launch_overhead >= 0) || !(d.issue.host_dispatch >= 0))
    throw std::invalid_argument(
        "the FLOP rate must be positive, and the memory bandwidth, the launch overhead and the host dispatch not "
        "negative");
  if (d.matmul.enabled() && !(d.matmul.large_product_flops > 0))
    throw std::invalid_argument("a matrix unit needs a positive rate for large products");
}

double forward(const LayerCost& l, double samples, double e, const DeviceRates& d, StepCompute* tally) {
  const double bytes = e * (static_cast<double>(l.parameters) + samples * l.forward_traffic);
  const double compute = timed_from_attention_table(l, d)
                             ? attention_time(l.fused_attention, samples, *d.matmul.attention, d.matmul.multiprocessors).forward
                             : compute_seconds(samples * l.forward_flops, l.forward_products, samples, e, d);
  return issue_pass(roofline(compute, bytes, d, tally), l.forward_kernels, d, tally);
}

double backward(const LayerCost& l, double samples, double e, const DeviceRates& d, StepCompute* tally) {
  // Weights read for the input gradient; a trained layer writes its weight gradient too.
  const double weights = static_cast<double>(l.parameters) + static_cast<double>(l.trainable);
  const double bytes = e * (weights + samples * l.backward_traffic);
  const double compute = timed_from_attention_table(l, d)
                             ? attention_time(l.fused_attention, samples, *d.matmul.attention, d.matmul.multiprocessors).backward
                             : compute_seconds(samples * l.backward_flops, l.backward_products, samples, e, d);
  return issue_pass(roofline(compute, bytes, d, tally), l.backward_kernels, d, tally);
}

// The update over every trained weight (optimizer_update's traffic and kernels per trained layer). With ZeRO
// (any stage) each GPU updates only its 1/N shard of the optimizer state.
double optimizer(const Workload& w, const MemorySetup& s, const DeviceRates& d, StepCompute* tally) {
  const OptimizerUpdate update = optimizer_update(s);
  double trained = 0;
  int updates = 0;
  for (const auto& l : w.layers)
    if (l.trainable > 0) {
      trained += static_cast<double>(l.trainable);
      ++updates;
    }
  const double shard = s.zero_stage >= 1 ? 1.0 / s.data_parallel : 1.0;
  const int kernels = updates * update.kernels_per_layer;
  if (tally) tally->kernels += kernels;
  return issue_pass(roofline(0, update.bytes_per_weight * trained * shard, d, tally), kernels, d, tally);  // no products
}

}  // namespace

double issued_seconds(double work_seconds, int kernels, const DeviceRates& d) {
  if (d.issue.cuda_graphs) return work_seconds;
  const double on_gpu = work_seconds + kernels * d.launch_overhead;
  const double on_host = kernels * (d.launch_overhead + d.issue.host_dispatch);
  return std::max(on_gpu, on_host);
}

double layer_forward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d) {
  check(d);
  return forward(layer, samples, element_bytes, d, nullptr);
}

double layer_backward_seconds(const LayerCost& layer, double samples, double element_bytes, const DeviceRates& d) {
  check(d);
  return backward(layer, samples, element_bytes, d, nullptr);
}

StepCompute step_compute(const Workload& w, const MemorySetup& s, const DeviceRates& d) {
  check(d);
  validate(s);
  StepCompute t;
  const double b = s.micro_batch, e = s.activation_bytes;
  for (const auto& l : w.layers) {
    t.forward += forward(l, b, e, d, &t);
    t.backward += backward(l, b, e, d, &t);
    t.kernels += l.forward_kernels + l.backward_kernels;
    if (s.checkpointing && l.recomputed_with_checkpointing()) {
      t.recompute += forward(l, b, e, d, &t);
      t.kernels += l.forward_kernels;
    }
  }
  t.optimizer = optimizer(w, s, d, &t);
  t.launches = d.issue.cuda_graphs ? 0 : t.kernels * d.launch_overhead;
  return t;
}

double GradientTimeline::backward_total() const {
  double sum = tail;
  for (const double b : backward) sum += b;
  return sum;
}

GradientTimeline gradient_timeline(const Workload& w, const MemorySetup& s, const DeviceRates& d) {
  check(d);
  validate(s);
  GradientTimeline t;
  const double b = s.micro_batch, e = s.activation_bytes;
  for (const auto& l : w.layers) t.forward += forward(l, b, e, d, nullptr);
  double pending = 0, pending_forward = 0;
  std::uint64_t pending_parameters = 0;
  for (size_t i = w.layers.size(); i-- > 0;) {
    const LayerCost& l = w.layers[i];
    const double f = forward(l, b, e, d, nullptr);
    if (s.checkpointing && l.recomputed_with_checkpointing()) pending += f;
    pending += backward(l, b, e, d, nullptr);
    pending_forward += f;
    pending_parameters += l.parameters;
    if (l.trainable == 0) continue;
    t.backward.push_back(pending);
    t.trained_layers.push_back(static_cast<int>(i));
    t.segment_forward.push_back(pending_forward);
    t.segment_parameters.push_back(pending_parameters);
    pending = pending_forward = 0;
    pending_parameters = 0;
  }
  t.tail = pending;  // backward work after the last gradient is complete (LoRA's frozen embedding and first layers)
  t.tail_forward = pending_forward;
  t.tail_parameters = pending_parameters;
  t.optimizer = optimizer(w, s, d, nullptr);
  return t;
}

OptimizerUpdate optimizer_update(const MemorySetup& s) {
  const bool master = s.master_weights && s.weight_bytes < 4;
  if (s.optimizer_kernels == OptimizerKernels::Fused)
    return {s.gradient_bytes + 2 * s.weight_bytes + (master ? 8 : 0) + 2 * s.optimizer_bytes, 1};
  constexpr double kState = 4;  // fp32 moments and temporaries
  const double written = master ? 4 : s.weight_bytes;
  const double copy = master ? 4 + s.weight_bytes : 0;
  const int copy_kernels = master ? 1 : 0;
  const double g = s.gradient_bytes;
  if (s.optimizer_bytes == 8) return {16 * kState + 2 * g + 2 * written + copy, 8 + copy_kernels};
  if (s.optimizer_bytes == 4) return {5 * kState + g + 2 * written + copy, 3 + copy_kernels};
  if (s.optimizer_bytes == 0) return {g + 2 * written + copy, 1 + copy_kernels};
  std::ostringstream state;
  state << s.optimizer_bytes;
  throw std::invalid_argument("the foreach optimizer kernels are known for Adam (8 bytes of state per weight), SGD "
                              "with momentum (4) and SGD (0), not for " + state.str() + " bytes");
}

double model_flops_utilisation(const Workload& w, double samples, double seconds, double peak_flops) {
  if (!(seconds > 0) || !(peak_flops > 0)) return 0;
  return samples * w.model_flops() / seconds / peak_flops;
}

}  // namespace dtsim::models
