// What a worker trains, as the simulator's strategies see it: the gradient of a worker's local loss at given
// parameters, and what that costs in FLOPs. Strategies never look at data or networks themselves, so the same
// strategy code trains a network on Fashion-MNIST or the closed-form quadratic of the validation notes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/batch_schedule.hpp"
#include "models/compression/compression.hpp"
#include "models/dataset.hpp"
#include "models/evaluation.hpp"
#include "models/feature_noise.hpp"
#include "models/network.hpp"
#include "models/partition.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// A run of parameters whose gradient backward produces together (a layer's), in the order backward
// produces them, with the backward FLOPs spent on it: what gradient buckets are made of.
struct GradientSegment {
  size_t offset = 0;
  size_t size = 0;
  double backward_flops = 0.0;  // per gradient (the whole mini-batch)
};

template <class T>
class Objective {
 public:
  virtual ~Objective() = default;
  virtual std::string description() const = 0;
  virtual size_t num_params() const = 0;
  virtual const std::vector<ParamTensor>& param_tensors() const = 0;
  virtual void init_params(T* host_params, uint64_t seed) const = 0;
  // The tensors with the matrix shapes gradient compression (PowerSGD) needs; without shapes, all vectors.
  virtual std::vector<TensorLayout> tensor_layouts() const { return vector_layouts(param_tensors()); }

  // Writes numerics.loss_scale × the gradient of `worker`'s loss on its samples for its `step`-th gradient
  // (0-based, counted per worker) at `params` into `grads` (backend memory). Returns the unscaled mean loss.
  // Runs to completion without yielding, so one scratch workspace can serve every worker.
  virtual double gradient(int worker, int64_t step, const T* params, T* grads, const NumericsOptions& numerics) = 0;
  virtual double flops_per_gradient(int worker) const = 0;
  // The forward part of flops_per_gradient, and the backward part segment by segment in backward order
  // (their FLOPs add up to the rest). The default: the whole vector as one segment after a forward half.
  virtual double forward_flops(int worker) const { return flops_per_gradient(worker) / 2; }
  virtual std::vector<GradientSegment> gradient_segments(int worker) const {
    return {{0, num_params(), flops_per_gradient(worker) - forward_flops(worker)}};
  }
  // The per-layer cost figures of one sample (models/workload/), from which a run charges compute time with
  // the per-layer roofline; null when the objective has none, and its FLOPs are then charged at the GPU's
  // sustained rate. Its trained layers are gradient_segments()' layers, in forward order.
  virtual const Workload* layer_costs() const { return nullptr; }
  // Samples in the worker's mini-batch; 0 for an objective without mini-batches (the quadratic).
  virtual int batch(int /*worker*/) const { return 0; }
  // How much a worker's data counts when results are weighted by sample count (federated averaging).
  virtual double sample_weight(int worker) const = 0;
  // Test loss and accuracy at `params`; costs no simulated time.
  virtual EvalResult evaluate(const T* params, NumberFormat activations) = 0;
};

// A network trained on a dataset. Worker w's samples for its step s are either slice w of global batch s of
// one shared shuffled order (no partition: what centralised training with the whole global batch sees), or
// the next mini-batch of w's own shard (a partition). With `cap_batch_at_shard`, a worker whose shard is smaller
// than the batch takes the whole shard as its batch (one full-batch step per pass) instead of continuing into
// the next pass of its shard, which would repeat samples within the batch.
class NetworkObjective final : public Objective<float> {
 public:
  NetworkObjective(std::unique_ptr<Network<float>> net, gpu::Ops<float>& ops, const Dataset& train, const Dataset& test,
                   int workers, int batch_per_worker, const std::optional<Partition>& partition, uint64_t seed,
                   bool cap_batch_at_shard = false);

  std::string description() const override { return net_->description(); }
  size_t num_params() const override { return net_->num_params(); }
  const std::vector<ParamTensor>& param_tensors() const override { return net_->param_tensors(); }
  void init_params(float* host_params, uint64_t seed) const override { net_->init_params(host_params, seed); }
  std::vector<TensorLayout> tensor_layouts() const override { return models::tensor_layouts(*net_); }
  double gradient(int worker, int64_t step, const float* params, float* grads,
                  const NumericsOptions& numerics) override;
  double flops_per_gradient(int worker) const override;
  double forward_flops(int worker) const override;
  std::vector<GradientSegment> gradient_segments(int worker) const override;
  double sample_weight(int worker) const override;
  EvalResult evaluate(const float* params, NumberFormat activations) override;
  const Workload* layer_costs() const override { return &costs_; }
  int batch(int worker) const override;

  const Network<float>& network() const { return *net_; }
  int batch_per_worker() const { return batch_; }
  // NIID-Bench's feature imbalance: worker w's training inputs get noise.std_of(w) Gaussian noise, drawn
  // afresh for every step (the test set is the caller's: noisy_test_copies makes the benchmark's).
  void set_feature_noise(const FeatureNoise& noise) { noise_ = noise; }

 private:
  std::unique_ptr<Network<float>> net_;
  Workload costs_;
  gpu::Ops<float>& ops_;
  const Dataset& train_;
  const Dataset& test_;
  int workers_;
  int batch_;
  bool cap_batch_at_shard_;
  FeatureNoise noise_;
  BatchSchedule global_order_;
  std::vector<ShardSampler> shards_;  // one per worker when partitioned
  Workspace<float> workspace_;        // shared: a gradient never yields mid-way
  Workspace<float> eval_workspace_;
  std::vector<int32_t> indices_;
  std::vector<float> features_;
  std::vector<int32_t> labels_;
};

// F_w(x) = ½ ‖x − target_w‖² for each worker w, with the full gradient x − target_w: the closed-form problem
// on which federated algorithms have known fixed points (validation notes §1). evaluate() reports the mean of
// the workers' losses as the loss and 0 as the accuracy.
class QuadraticObjective final : public Objective<float> {
 public:
  QuadraticObjective(gpu::Ops<float>& ops, std::vector<std::vector<float>> targets, std::vector<float> initial,
                     std::vector<double> weights);

  std::string description() const override { return "quadratic"; }
  size_t num_params() const override { return initial_.size(); }
  const std::vector<ParamTensor>& param_tensors() const override { return tensors_; }
  void init_params(float* host_params, uint64_t seed) const override;
  double gradient(int worker, int64_t step, const float* params, float* grads,
                  const NumericsOptions& numerics) override;
  double flops_per_gradient(int) const override { return 2.0 * static_cast<double>(initial_.size()); }
  double sample_weight(int worker) const override { return weights_[worker]; }
  EvalResult evaluate(const float* params, NumberFormat activations) override;

 private:
  gpu::Ops<float>& ops_;
  std::vector<gpu::Buffer<float>> targets_;
  std::vector<float> initial_;
  std::vector<double> weights_;
  std::vector<ParamTensor> tensors_;
  gpu::Buffer<float> scratch_;
};

}  // namespace dtsim::models
