// The QA fine-tuning objective: what it trains (adapters or the base), what it stores (a quantised base), where
// its batches come from, and how it scores.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/qa/qa_objective.hpp"

namespace dtsim::models {
namespace {

QaTaskSpec small_task() {
  QaTaskSpec spec;
  spec.seq_len = 48;
  return spec;
}

QaModelSetup setup_for(const QaTaskSpec& spec, int rank, WeightFormat format = WeightFormat::Fp32) {
  QaModelSetup s;
  s.model.vocab = qa_vocab_size(spec);
  s.model.seq_len = spec.seq_len;
  s.model.dim = 32;
  s.model.heads = 2;
  s.model.layers = 2;
  s.model.ffn = 64;
  s.lora.rank = rank;
  s.base_format = format;
  const SpanTransformer<float> m(s.model, s.lora);
  s.base.resize(m.base_param_count());
  m.init_base(s.base.data(), 21);
  return s;
}

struct Data {
  QaDataset train = make_qa_dataset(small_task(), 0.5, 64, 1);
  QaDataset test = make_qa_dataset(small_task(), 0.5, 40, 2);
};

TEST(QaObjective, LoraTrainsOnlyTheAdapters) {
  gpu::CpuOps<float> ops;
  const Data d;
  QaObjective full(ops, setup_for(small_task(), 0), d.train, d.test, 2, 4, std::nullopt, 3);
  QaObjective lora(ops, setup_for(small_task(), 4), d.train, d.test, 2, 4, std::nullopt, 3);
  EXPECT_EQ(full.num_params(), full.model().base_param_count());
  EXPECT_EQ(lora.num_params(), lora.model().adapter_param_count());
  // Per block, q and v: two adapters of 32×4 + 4×32.
  EXPECT_EQ(lora.num_params(), 2u * 2u * (32u * 4u + 4u * 32u));
  EXPECT_LT(static_cast<double>(lora.num_params()) / full.num_params(), 0.05);
  ASSERT_EQ(lora.param_tensors().size(), 8u);
  EXPECT_EQ(lora.param_tensors()[0].name, "block0.q.lora_a");
  // LoRA's backward skips the frozen weights' gradients, about a third of the full backward here (attention's
  // backward, the same in both, is the rest).
  const double ratio = (lora.flops_per_gradient(0) - lora.forward_flops(0)) /
                       (full.flops_per_gradient(0) - full.forward_flops(0));
  EXPECT_GT(ratio, 0.55);
  EXPECT_LT(ratio, 0.75);
}

TEST(QaObjective, FullFineTuningStartsFromTheGivenBase) {
  gpu::CpuOps<float> ops;
  const Data d;
  const QaModelSetup s = setup_for(small_task(), 0);
  QaObjective objective(ops, s, d.train, d.test, 1, 4, std::nullopt, 3);
  std::vector<float> params(objective.num_params());
  objective.init_params(params.data(), 99);
  EXPECT_EQ(params, s.base);
}

TEST(QaObjective, AQuantisedBaseStoresProjectionsInFourBits) {
  gpu::CpuOps<float> ops;
  const Data d;
  QaObjective fp32(ops, setup_for(small_task(), 4), d.train, d.test, 1, 4, std::nullopt, 3);
  QaObjective nf4(ops, setup_for(small_task(), 4, WeightFormat::Nf4), d.train, d.test, 1, 4, std::nullopt, 3);
  QaObjective int8(ops, setup_for(small_task(), 4, WeightFormat::Int8), d.train, d.test, 1, 4, std::nullopt, 3);
  // Per block 4 attention weights of 32×32 and two MLP weights of 32×64: 8,192 quantised values, in 128 blocks.
  const size_t quantised = 2 * (4 * 32 * 32 + 2 * 32 * 64);
  EXPECT_EQ(fp32.base_bytes(), fp32.base_bytes_fp32());
  EXPECT_EQ(nf4.base_bytes(), fp32.base_bytes() - 4 * quantised + quantised / 2 + 4 * (quantised / 64));
  EXPECT_EQ(int8.base_bytes(), fp32.base_bytes() - 4 * quantised + quantised + 4 * (quantised / 64));
  // The adapters start at B = 0, so each model computes with its own dequantised base: close, not equal.
  std::vector<float> adapters(fp32.num_params());
  fp32.init_params(adapters.data(), 5);
  const double loss32 = fp32.evaluate(adapters.data(), NumberFormat::Fp32).loss;
  const double loss4 = nf4.evaluate(adapters.data(), NumberFormat::Fp32).loss;
  const double loss8 = int8.evaluate(adapters.data(), NumberFormat::Fp32).loss;
  EXPECT_NE(loss32, loss4);
  EXPECT_LT(std::abs(loss8 - loss32), std::abs(loss4 - loss32) + 1e-9);
  EXPECT_LT(std::abs(loss4 - loss32), 0.05 * loss32);
}

TEST(QaObjective, AShardOfOneExampleGivesThatExamplesGradient) {
  gpu::CpuOps<float> ops;
  const Data d;
  const QaModelSetup s = setup_for(small_task(), 0);
  Partition partition;
  partition.shards = {{7}, {9, 11}};
  QaObjective objective(ops, s, d.train, d.test, 2, 3, partition, 3);
  std::vector<float> grads(objective.num_params()), expected(grads.size());
  const double loss = objective.gradient(0, 0, s.base.data(), grads.data(), {});
  // The same example three times is that example's own gradient.
  const SpanTransformer<float> m(s.model, s.lora);
  auto ws = m.make_workspace(ops, 1);
  const int e = 7;
  const SpanBatch one{1, d.train.example(e), &d.train.lengths[e], &d.train.answer_start[e], &d.train.answer_end[e]};
  const double expected_loss = m.loss_and_gradient(ops, ws, s.base.data(), nullptr, one, expected.data()).loss;
  EXPECT_NEAR(loss, expected_loss, 1e-5);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    diff += std::pow(grads[i] - expected[i], 2);
    norm += std::pow(expected[i], 2);
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-5);
  EXPECT_EQ(objective.sample_weight(0), 1.0);
  EXPECT_EQ(objective.sample_weight(1), 2.0);
}

TEST(QaObjective, ScoresCountEachDomainSeparately) {
  gpu::CpuOps<float> ops;
  const Data d;
  QaObjective objective(ops, setup_for(small_task(), 0), d.train, d.test, 1, 4, std::nullopt, 3);
  const QaDataset medical = make_qa_dataset(small_task(), 1.0, 30, 4);
  std::vector<float> params(objective.num_params());
  objective.init_params(params.data(), 0);
  const QaScores s = objective.scores(params.data(), medical);
  EXPECT_EQ(s.all.examples, 30);
  EXPECT_EQ(s.by_domain[static_cast<int>(QaDomain::Medical)].examples, 30);
  EXPECT_EQ(s.by_domain[static_cast<int>(QaDomain::Finance)].examples, 0);
  EXPECT_GE(s.all.f1, s.all.exact_match);  // a span with the right tokens has F1 = 1
  EXPECT_GT(s.loss, 0.0);
}

TEST(QaObjective, StepsAlongTheGradientReduceTheTrainingLoss) {
  gpu::CpuOps<float> ops;
  const Data d;
  Partition partition;
  partition.shards = {{0, 1, 2, 3}};
  // Full fine-tuning fits four examples quickly; rank-4 adapters on a random base move it slowly (LoRA needs a
  // base worth adapting), but downhill.
  for (const auto& [rank, lr, factor] : {std::tuple{0, 0.05f, 0.1}, std::tuple{4, 0.2f, 0.97}}) {
    QaObjective objective(ops, setup_for(small_task(), rank), d.train, d.test, 1, 4, partition, 3);
    std::vector<float> w(objective.num_params()), g(w.size());
    objective.init_params(w.data(), 8);
    double first = 0.0, last = 0.0;
    for (int step = 0; step < 60; ++step) {
      last = objective.gradient(0, step, w.data(), g.data(), {});
      if (step == 0) first = last;
      for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * g[i];
    }
    EXPECT_LT(last, factor * first) << "rank " << rank;
  }
}

TEST(QaObjective, TheSameBatchGivesTheSameGradientEveryCall) {
  // The workspace is reused from call to call: nothing of one call may leak into the next.
  gpu::CpuOps<float> ops;
  const Data d;
  Partition partition;
  partition.shards = {{0, 1, 2, 3}};
  for (const int rank : {0, 4}) {
    QaObjective objective(ops, setup_for(small_task(), rank), d.train, d.test, 1, 4, partition, 3);
    std::vector<float> w(objective.num_params()), g1(w.size()), g2(w.size());
    objective.init_params(w.data(), 8);
    const double l1 = objective.gradient(0, 0, w.data(), g1.data(), {});
    (void)objective.evaluate(w.data(), NumberFormat::Fp32);
    const double l2 = objective.gradient(0, 1, w.data(), g2.data(), {});  // the same four examples, reshuffled
    EXPECT_NEAR(l1, l2, 1e-5) << "rank " << rank;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < g1.size(); ++i) {
      diff += std::pow(double(g1[i]) - g2[i], 2);
      norm += std::pow(double(g1[i]), 2);
    }
    EXPECT_LT(std::sqrt(diff / norm), 1e-5) << "rank " << rank;
  }
}

TEST(QaObjective, RejectsInconsistentSetups) {
  gpu::CpuOps<float> ops;
  const Data d;
  QaModelSetup wrong_base = setup_for(small_task(), 4);
  wrong_base.base.pop_back();
  EXPECT_THROW(QaObjective(ops, wrong_base, d.train, d.test, 1, 4, std::nullopt, 3), std::invalid_argument);
  // A quantised base cannot be trained.
  EXPECT_THROW(QaObjective(ops, setup_for(small_task(), 0, WeightFormat::Nf4), d.train, d.test, 1, 4, std::nullopt, 3),
               std::invalid_argument);
  QaTaskSpec longer = small_task();
  longer.seq_len = 56;
  const QaDataset other = make_qa_dataset(longer, 0.5, 10, 1);
  EXPECT_THROW(QaObjective(ops, setup_for(small_task(), 4), other, d.test, 1, 4, std::nullopt, 3),
               std::invalid_argument);
  EXPECT_THROW(QaObjective(ops, setup_for(small_task(), 4), d.train, d.test, 8, 16, std::nullopt, 3),
               std::invalid_argument);  // a global batch of 128 from 64 examples
}

}  // namespace
}  // namespace dtsim::models
