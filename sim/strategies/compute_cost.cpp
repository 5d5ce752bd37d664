#include "sim/strategies/compute_cost.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>

#include "sim/config/cluster_layout.hpp"
#include "sim/config/workload_config.hpp"

namespace dtsim::sim {

ComputeCost::ComputeCost(const RunConfig& config, const models::Objective<float>& objective,
                         const models::Workload* proxy) {
  const int workers = config.workers;
  const std::vector<topology::NodePlan> nodes = topology::plan_nodes(config.layout, workers, config.gpu, config.math);
  // A GPU kind: the ungrouped cluster's profile, or each node group's.
  const auto gpu_of_group = [&](int group) -> const GpuSpec& {
    return group < 0 ? config.gpu : config.layout.groups[static_cast<size_t>(group)].gpu;
  };
  work_of_rank_.assign(static_cast<size_t>(workers), 0);
  const models::Workload* costs = proxy ? proxy : objective.layer_costs();
  const models::MemorySetup setup =
      proxy ? workload_memory_setup(config) : run_memory_setup(config);
  const MathMode math = charged_math(config);
  if (proxy) {
    // The workload's trained layers, laid out in forward order, are the values its buckets carry; backward
    // reaches them last to first (gradient_timeline's segments).
    size_t end = static_cast<size_t>(proxy->trainable());
    for (size_t i = proxy->layers.size(); i-- > 0;) {
      const auto trained = static_cast<size_t>(proxy->layers[i].trainable);
      if (trained == 0) continue;
      end -= trained;
      segments_.push_back({end, trained, 0.0});
    }
    proxy_gradient_bytes_ = setup.gradient_bytes;
    proxy_weight_bytes_ = static_cast<double>(proxy->trainable()) * setup.weight_bytes;
    proxy_trained_values_ = proxy->trainable();
    // What the job saves: its trained weights' fp32 master copy (or the weights at their width) and optimizer state.
    proxy_checkpoint_bytes_ = static_cast<double>(proxy->trainable()) *
                              ((setup.master_weights ? 4.0 : setup.weight_bytes) + setup.optimizer_bytes);
  } else {
    segments_ = objective.gradient_segments(0);
  }
  // Work = seconds × the host's nominal FLOP rate in the run's math mode, whatever mode the products are
  // timed in, so that the host (slowed or not) takes the seconds the roofline says.
  const auto make_work = [&](const GpuSpec& gpu, double speed, int batch) {
    Work w;
    if (costs) {
      models::MemorySetup rank_setup = setup;
      if (batch > 0) rank_setup.micro_batch = batch;
      const models::GradientTimeline t = models::gradient_timeline(
          *costs, rank_setup, run_device_rates(gpu, math, config.matmul, config.kernel_issue));
      if (t.backward.size() != segments_.size())
        throw std::logic_error("the per-layer costs have " + std::to_string(t.backward.size()) +
                               " trained layers for " + std::to_string(segments_.size()) + " gradient segments");
      w.forward = t.forward * speed;
      for (const double b : t.backward) w.backward.push_back(b * speed);
      for (const double f : t.segment_forward) w.forward_segments.push_back(f * speed);
      w.update = t.optimizer * speed;
      w.tail = t.tail * speed;
      w.tail_forward = t.tail_forward * speed;
      if (segment_weight_bytes_.empty()) {  // the same layers on every GPU kind
        for (const std::uint64_t p : t.segment_parameters)
          segment_weight_bytes_.push_back(static_cast<double>(p) * setup.weight_bytes);
        if (t.tail_parameters > 0 || t.tail_forward > 0 || t.tail > 0)
          segment_weight_bytes_.push_back(static_cast<double>(t.tail_parameters) * setup.weight_bytes);
      }
    } else {
      w.forward = objective.forward_flops(0);
      for (const models::GradientSegment& s : segments_) w.backward.push_back(s.backward_flops);
    }
    w.backward_total = w.tail;
    for (const double b : w.backward) w.backward_total += b;
    return w;
  };
  // One work table per (GPU kind, mini-batch): ranks differ in batch only when training.cap_batch_at_shard
  // caps it at small shards.
  std::map<std::pair<int, int>, int> table_of;
  for (const topology::NodePlan& node : nodes) {
    for (int g = 0; g < node.gpus; ++g) {
      const int rank = node.first_rank + g;
      const int batch = proxy ? 0 : objective.batch(rank);
      const auto [slot, fresh] = table_of.try_emplace({node.group, batch}, static_cast<int>(works_.size()));
      if (fresh) works_.push_back(make_work(gpu_of_group(node.group), node.gpu_speed, batch));
      work_of_rank_[static_cast<size_t>(rank)] = slot->second;
    }
  }
}

uint64_t ComputeCost::proxy_gradient_message(double share) const {
  return static_cast<uint64_t>(std::llround(share * static_cast<double>(proxy_trained_values_) * proxy_gradient_bytes_));
}

uint64_t ComputeCost::proxy_compressed_message(uint64_t small_bytes, size_t small_values, double workload_values) {
  if (small_values == 0) return 0;
  return static_cast<uint64_t>(
      std::llround(static_cast<double>(small_bytes) * workload_values / static_cast<double>(small_values)));
}

uint64_t ComputeCost::proxy_weight_message(double share) const {
  return static_cast<uint64_t>(std::llround(share * proxy_weight_bytes_));
}

}  // namespace dtsim::sim
