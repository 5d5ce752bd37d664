// Fine-tuning the span transformer on the synthetic QA task, as the simulator's strategies see it (an Objective):
// the trained vector is the LoRA adapters over a frozen base, or the whole base (full fine-tuning and
// pre-training). A frozen base may be stored quantised (QLoRA's NF4, or int8): its projection weights are
// quantised once and dequantised into the backend's fp32 copy, which is what a QLoRA kernel computes with.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/batch_schedule.hpp"
#include "models/objective.hpp"
#include "models/partition.hpp"
#include "models/qa/qa_task.hpp"
#include "models/quantization.hpp"
#include "models/transformer/span_transformer.hpp"
#include "models/workload/workload.hpp"

namespace dtsim::models {

// Exact match and token F1 (SQuAD's metrics) over a test set, overall and per domain.
struct QaScores {
  struct Part {
    int examples = 0;
    double exact_match = 0.0;  // fractions in [0, 1]
    double f1 = 0.0;
  };
  Part all;
  Part by_domain[2];  // indexed by QaDomain
  double loss = 0.0;  // mean span loss
};

struct QaModelSetup {
  TransformerConfig model;
  LoraConfig lora;
  // The base parameters (host, base_param_count() values): a pre-trained checkpoint, or an initialisation.
  std::vector<float> base;
  // How the frozen base is stored (LoRA only; full fine-tuning trains the base in fp32).
  WeightFormat base_format = WeightFormat::Fp32;
  // The format forward and backward see the frozen base in (precision.weights; the trained vector is rounded by
  // the strategies' working copy instead).
  NumberFormat base_weights = NumberFormat::Fp32;
};

class QaObjective final : public Objective<float> {
 public:
  // Worker w's mini-batches come from its shard of `partition`, or else from slice w of each global batch of one
  // shared order (as NetworkObjective). Throws std::invalid_argument for inconsistent sizes (a base of the wrong
  // length, data of another sequence length or vocabulary than the model, quantising a trained base).
  QaObjective(gpu::Ops<float>& ops, QaModelSetup setup, const QaDataset& train, const QaDataset& test, int workers,
              int batch_per_worker, const std::optional<Partition>& partition, uint64_t seed);

  std::string description() const override;
  size_t num_params() const override { return model_.trained_param_count(); }
  const std::vector<ParamTensor>& param_tensors() const override { return trained_tensors_; }
  // LoRA: fresh adapters (seeded); otherwise the base the objective was given.
  void init_params(float* host_params, uint64_t seed) const override;
  double gradient(int worker, int64_t step, const float* params, float* grads,
                  const NumericsOptions& numerics) override;
  double flops_per_gradient(int worker) const override;
  double forward_flops(int worker) const override;
  // The trained layers, last to first (span_transformer_workload.hpp): what the backward pass makes ready in turn.
  std::vector<GradientSegment> gradient_segments(int worker) const override;
  // The model's layers for the per-layer roofline (span_transformer_workload.hpp).
  const Workload* layer_costs() const override { return &costs_; }
  int batch(int /*worker*/) const override { return batch_; }
  double sample_weight(int worker) const override;
  // Loss and exact match (as the accuracy) on the test set.
  EvalResult evaluate(const float* params, NumberFormat activations) override;

  // Exact match and F1 on `data` at `params` (the trained vector), activations stored in `activations`.
  QaScores scores(const float* params, const QaDataset& data, NumberFormat activations = NumberFormat::Fp32);
  const SpanTransformer<float>& model() const { return model_; }
  // Bytes of the base as stored (quantised where base_format says) and as fp32.
  size_t base_bytes() const { return base_bytes_; }
  size_t base_bytes_fp32() const { return model_.base_param_count() * sizeof(float); }
  WeightFormat base_format() const { return base_format_; }

 private:
  SpanBatch gather(const QaDataset& data, const int32_t* indices, int count);
  const float* base_for(const float* params) const { return model_.lora().enabled() ? base_.data() : params; }
  const float* adapters_for(const float* params) const { return model_.lora().enabled() ? params : nullptr; }

  gpu::Ops<float>& ops_;
  SpanTransformer<float> model_;
  Workload costs_;
  std::vector<float> host_base_;  // as given (the full fine-tuning start)
  gpu::Buffer<float> base_;       // the frozen base in backend memory, dequantised (LoRA only)
  size_t base_bytes_ = 0;
  WeightFormat base_format_;
  const QaDataset& train_;
  const QaDataset& test_;
  int workers_;
  int batch_;
  std::vector<ParamTensor> trained_tensors_;
  BatchSchedule global_order_;
  std::vector<ShardSampler> shards_;
  TransformerWorkspace<float> workspace_;
  TransformerWorkspace<float> eval_workspace_;
  std::vector<int32_t> indices_, tokens_, lengths_, starts_, ends_;
};

// The bytes of `model`'s base stored in `format`: its projection weights in `format`; the embeddings, layer norms,
// biases and the head in fp32, as in QLoRA.
size_t base_storage_bytes(const SpanTransformer<float>& model, WeightFormat format);
// Quantises and dequantises in place the projection weights. Returns base_storage_bytes.
size_t quantize_base(const SpanTransformer<float>& model, std::vector<float>& host_base, WeightFormat format);

}  // namespace dtsim::models
