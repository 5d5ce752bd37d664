#include "objective.hpp"

#include "models/workload/network_workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace dtsim::models {

NetworkObjective::NetworkObjective(std::unique_ptr<Network<float>> net, gpu::Ops<float>& ops, const Dataset& train,
                                   const Dataset& test, int workers, int batch_per_worker,
                                   const std::optional<Partition>& partition, uint64_t seed, bool cap_batch_at_shard)
    : net_(std::move(net)),
      costs_(network_workload(*net_, net_->description())),
      ops_(ops),
      train_(train),
      test_(test),
      workers_(workers),
      batch_(batch_per_worker),
      cap_batch_at_shard_(cap_batch_at_shard),
      global_order_(train.num_samples, std::min(workers * batch_per_worker, train.num_samples), seed) {
  if (partition) {
    if (static_cast<int>(partition->shards.size()) != workers)
      throw std::invalid_argument("the partition has " + std::to_string(partition->shards.size()) + " shards for " +
                                  std::to_string(workers) + " workers");
    for (int w = 0; w < workers; ++w) shards_.emplace_back(partition->shards[w], seed, w);
  }
  // Buffers for the largest batch any worker takes (a capped batch may be far below the configured one).
  int largest = shards_.empty() ? batch_ : 1;
  for (int w = 0; w < static_cast<int>(shards_.size()); ++w) largest = std::max(largest, batch(w));
  workspace_ = net_->make_workspace(ops, largest);
  eval_workspace_ = net_->make_workspace(ops, std::min(1000, std::max(1, test.num_samples)), WorkspaceUse::Evaluation);
  indices_.resize(largest);
  features_.resize(static_cast<size_t>(largest) * net_->input_size());
  labels_.resize(largest);
}

int NetworkObjective::batch(int worker) const {
  if (shards_.empty() || !cap_batch_at_shard_) return batch_;
  return static_cast<int>(std::min<size_t>(batch_, shards_.at(worker).shard_size()));
}

double NetworkObjective::gradient(int worker, int64_t step, const float* params, float* grads,
                                  const NumericsOptions& numerics) {
  const int n = batch(worker);
  if (shards_.empty()) {
    const int32_t* slice = global_order_.batch(step, worker * batch_);
    std::copy(slice, slice + batch_, indices_.begin());
  } else {
    shards_[worker].next(n, indices_.data());
  }
  gather_batch(train_, indices_.data(), n, features_.data(), labels_.data());
  add_feature_noise(noise_, worker, step, features_.data(), static_cast<size_t>(n) * net_->input_size());
  const gpu::LossSums sums =
      net_->loss_and_gradient(ops_, workspace_, params, features_.data(), labels_.data(), n, grads, numerics);
  return sums.loss / n;
}

double NetworkObjective::flops_per_gradient(int worker) const {
  return batch(worker) * (net_->forward_flops_per_sample() + net_->backward_flops_per_sample());
}

double NetworkObjective::forward_flops(int worker) const { return batch(worker) * net_->forward_flops_per_sample(); }

std::vector<GradientSegment> NetworkObjective::gradient_segments(int worker) const {
  const int b = batch(worker);  // this worker's: a capped batch is smaller than the configured one
  // Backward visits the layers last to first; a layer's parameter gradient is ready once its own backward
  // has run, and the loss's and parameter-free layers' work is charged to the next layer that has some.
  std::vector<GradientSegment> segments;
  double pending = b * (net_->backward_flops_per_sample() - [&] {
    double layers = 0;
    for (size_t i = 0; i < net_->num_layers(); ++i) layers += net_->layer(i).backward_flops(i > 0);
    return layers;
  }());  // the loss gradient
  for (size_t i = net_->num_layers(); i-- > 0;) {
    const Layer<float>& layer = net_->layer(i);
    pending += b * layer.backward_flops(i > 0);
    if (layer.param_count() == 0) continue;
    segments.push_back({net_->layer_param_offset(i), layer.param_count(), pending});
    pending = 0;
  }
  if (!segments.empty()) segments.back().backward_flops += pending;  // anything before the first parametric layer
  return segments;
}

double NetworkObjective::sample_weight(int worker) const {
  return shards_.empty() ? static_cast<double>(train_.num_samples) / workers_
                         : static_cast<double>(shards_[worker].shard_size());
}

EvalResult NetworkObjective::evaluate(const float* params, NumberFormat activations) {
  return evaluate_dataset(*net_, ops_, eval_workspace_, params, test_, activations);
}

QuadraticObjective::QuadraticObjective(gpu::Ops<float>& ops, std::vector<std::vector<float>> targets,
                                       std::vector<float> initial, std::vector<double> weights)
    : ops_(ops), initial_(std::move(initial)), weights_(std::move(weights)) {
  if (targets.empty() || targets.size() != weights_.size())
    throw std::invalid_argument("a quadratic objective needs one target and one weight per worker");
  for (const auto& t : targets) {
    if (t.size() != initial_.size()) throw std::invalid_argument("targets and initial point differ in size");
    targets_.emplace_back(ops, t.size());
    ops.upload(targets_.back().data(), t.data(), t.size());
  }
  tensors_ = {{"x", 0, initial_.size(), false}};
  scratch_ = gpu::Buffer<float>(ops, initial_.size());
}

void QuadraticObjective::init_params(float* host_params, uint64_t) const {
  std::copy(initial_.begin(), initial_.end(), host_params);
}

double QuadraticObjective::gradient(int worker, int64_t, const float* params, float* grads,
                                    const NumericsOptions& numerics) {
  const size_t n = initial_.size();
  ops_.copy(grads, params, n);  // x − target
  ops_.axpy(-1.0f, targets_[worker].data(), grads, n);
  const double loss = 0.5 * ops_.sum_squares(grads, n);
  if (numerics.loss_scale != 1.0) ops_.scale(static_cast<float>(numerics.loss_scale), grads, n);
  ops_.round_to_format(grads, n, numerics.gradients);
  return loss;
}

EvalResult QuadraticObjective::evaluate(const float* params, NumberFormat) {
  const size_t n = initial_.size();
  double loss = 0.0;
  for (size_t w = 0; w < targets_.size(); ++w) {
    ops_.copy(scratch_.data(), params, n);
    ops_.axpy(-1.0f, targets_[w].data(), scratch_.data(), n);
    loss += 0.5 * ops_.sum_squares(scratch_.data(), n);
  }
  EvalResult r;
  r.loss = loss / static_cast<double>(targets_.size());
  r.accuracy = 0.0;
  r.samples = static_cast<int>(targets_.size());
  return r;
}

}  // namespace dtsim::models
