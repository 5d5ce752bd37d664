#include "models/qa/qa_objective.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/transformer/span_transformer_workload.hpp"

namespace dtsim::models {

namespace {

void check_data(const QaDataset& data, const TransformerConfig& model, const char* which) {
  if (data.seq_len() != model.seq_len || data.vocab_size > model.vocab) {
    throw std::invalid_argument(std::string("the QA ") + which + " data (sequences of " +
                                std::to_string(data.seq_len()) + " tokens, vocabulary " +
                                std::to_string(data.vocab_size) + ") does not fit the model (" +
                                std::to_string(model.seq_len) + " tokens, vocabulary " + std::to_string(model.vocab) +
                                ")");
  }
}

constexpr int kEvalBatch = 128;

}  // namespace

size_t base_storage_bytes(const SpanTransformer<float>& model, WeightFormat format) {
  size_t bytes = model.base_param_count() * sizeof(float);
  for (const ParamTensor& t : model.projection_weights()) {
    bytes -= sizeof(float) * t.size;  // stored in `format` instead of fp32
    bytes += storage_bytes(t.size, format);
  }
  return bytes;
}

size_t quantize_base(const SpanTransformer<float>& model, std::vector<float>& host_base, WeightFormat format) {
  if (format != WeightFormat::Fp32) {
    for (const ParamTensor& t : model.projection_weights())
      dequantize(quantize(host_base.data() + t.offset, t.size, format), host_base.data() + t.offset);
  }
  return base_storage_bytes(model, format);
}

QaObjective::QaObjective(gpu::Ops<float>& ops, QaModelSetup setup, const QaDataset& train, const QaDataset& test,
                         int workers, int batch_per_worker, const std::optional<Partition>& partition, uint64_t seed)
    : ops_(ops),
      model_(setup.model, setup.lora),
      costs_(span_transformer_workload(model_)),
      host_base_(std::move(setup.base)),
      base_format_(setup.base_format),
      train_(train),
      test_(test),
      workers_(workers),
      batch_(batch_per_worker),
      global_order_(train.count, std::min(workers * batch_per_worker, std::max(train.count, 1)), seed) {
  if (host_base_.size() != model_.base_param_count()) {
    throw std::invalid_argument("the base has " + std::to_string(host_base_.size()) + " values, the model " +
                                std::to_string(model_.base_param_count()));
  }
  if (base_format_ != WeightFormat::Fp32 && !setup.lora.enabled()) {
    throw std::invalid_argument(std::string("a ") + to_string(base_format_) +
                                " base can only be frozen: set a LoRA rank, or keep the base in fp32");
  }
  check_data(train, setup.model, "training");
  check_data(test, setup.model, "test");
  if (workers <= 0 || batch_per_worker <= 0) throw std::invalid_argument("workers and batch must be positive");
  if (partition) {
    if (static_cast<int>(partition->shards.size()) != workers) {
      throw std::invalid_argument("the partition has " + std::to_string(partition->shards.size()) +
                                  " shards for " + std::to_string(workers) + " workers");
    }
    for (int w = 0; w < workers; ++w) shards_.emplace_back(partition->shards[w], seed, w);
  } else if (train.count < workers * batch_per_worker) {
    throw std::invalid_argument("a global batch of " + std::to_string(workers * batch_per_worker) +
                                " exceeds the " + std::to_string(train.count) + " training examples");
  }
  if (setup.lora.enabled()) {
    std::vector<float> stored = host_base_;
    base_bytes_ = quantize_base(model_, stored, base_format_);
    base_ = gpu::Buffer<float>(ops, stored.size());
    ops.upload(base_.data(), stored.data(), stored.size());
    ops.round_to_format(base_.data(), base_.size(), setup.base_weights);
    trained_tensors_ = model_.adapter_tensors();
  } else {
    base_bytes_ = base_bytes_fp32();
    trained_tensors_ = model_.base_tensors();
  }
  workspace_ = model_.make_workspace(ops, batch_);
  eval_workspace_ = model_.make_workspace(ops, std::max(1, std::min(kEvalBatch, test.count)));
  indices_.resize(std::max(batch_, eval_workspace_.max_batch));
}

std::string QaObjective::description() const {
  std::string text = model_.description();
  if (base_format_ != WeightFormat::Fp32) text += std::string(", base stored in ") + to_string(base_format_);
  return text;
}

void QaObjective::init_params(float* host_params, uint64_t seed) const {
  if (model_.lora().enabled()) {
    model_.init_adapters(host_params, seed);
  } else {
    std::copy(host_base_.begin(), host_base_.end(), host_params);
  }
}

SpanBatch QaObjective::gather(const QaDataset& data, const int32_t* indices, int count) {
  const int S = data.seq_len();
  tokens_.resize(static_cast<size_t>(count) * S);
  lengths_.resize(count);
  starts_.resize(count);
  ends_.resize(count);
  for (int i = 0; i < count; ++i) {
    const int e = indices[i];
    std::copy(data.example(e), data.example(e) + S, tokens_.begin() + static_cast<size_t>(i) * S);
    lengths_[i] = data.lengths[e];
    starts_[i] = data.answer_start[e];
    ends_[i] = data.answer_end[e];
  }
  return {count, tokens_.data(), lengths_.data(), starts_.data(), ends_.data()};
}

double QaObjective::gradient(int worker, int64_t step, const float* params, float* grads,
                             const NumericsOptions& numerics) {
  if (shards_.empty()) {
    const int32_t* slice = global_order_.batch(step, worker * batch_);
    std::copy(slice, slice + batch_, indices_.begin());
  } else {
    shards_[worker].next(batch_, indices_.data());
  }
  const SpanBatch b = gather(train_, indices_.data(), batch_);
  const SpanLoss loss =
      model_.loss_and_gradient(ops_, workspace_, base_for(params), adapters_for(params), b, grads, numerics);
  return loss.loss / batch_;
}

double QaObjective::flops_per_gradient(int) const {
  return batch_ * (model_.forward_flops() + model_.backward_flops());
}

double QaObjective::forward_flops(int) const { return batch_ * model_.forward_flops(); }

std::vector<GradientSegment> QaObjective::gradient_segments(int) const {
  return workload_segments(costs_, batch_ * model_.backward_flops());
}

double QaObjective::sample_weight(int worker) const {
  return shards_.empty() ? static_cast<double>(train_.count) / workers_
                         : static_cast<double>(shards_[worker].shard_size());
}

QaScores QaObjective::scores(const float* params, const QaDataset& data, NumberFormat activations) {
  check_data(data, model_.config(), "evaluation");
  QaScores s;
  std::vector<SpanPrediction> predictions;
  double loss = 0.0;
  for (int first = 0; first < data.count; first += eval_workspace_.max_batch) {
    const int count = std::min(eval_workspace_.max_batch, data.count - first);
    for (int i = 0; i < count; ++i) indices_[i] = first + i;
    const SpanBatch b = gather(data, indices_.data(), count);
    loss += model_.evaluate(ops_, eval_workspace_, base_for(params), adapters_for(params), b, predictions,
                            activations)
                .loss;
    for (int i = 0; i < count; ++i) {
      const int e = first + i;
      const double em = qa_exact_match(data, e, predictions[i].start, predictions[i].end);
      const double f1 = qa_token_f1(data, e, predictions[i].start, predictions[i].end);
      for (QaScores::Part* part : {&s.all, &s.by_domain[static_cast<int>(data.domain[e])]}) {
        part->examples += 1;
        part->exact_match += em;
        part->f1 += f1;
      }
    }
  }
  for (QaScores::Part* part : {&s.all, &s.by_domain[0], &s.by_domain[1]}) {
    if (part->examples == 0) continue;
    part->exact_match /= part->examples;
    part->f1 /= part->examples;
  }
  s.loss = data.count > 0 ? loss / data.count : 0.0;
  return s;
}

EvalResult QaObjective::evaluate(const float* params, NumberFormat activations) {
  const QaScores s = scores(params, test_, activations);
  EvalResult r;
  r.loss = s.loss;
  r.accuracy = s.all.exact_match;
  r.samples = s.all.examples;
  return r;
}

}  // namespace dtsim::models
