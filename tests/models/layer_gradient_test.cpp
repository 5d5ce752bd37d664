// Every layer type's backward pass against central finite differences in double, and the layers' shapes,
// parameter layouts and initialisation.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/conv_layers.hpp"
#include "models/layer.hpp"
#include "tests/models/gradient_check.hpp"

namespace dtsim::models {
namespace {

using gpu::CpuOps;
using namespace gradcheck;  // NOLINT: the shared gradient-check helpers

TEST(LayerGradientCheck, Conv2dWithStrideAndPadding) {
  // 3 channels of 7×6, 4 output channels, a non-square 3×2 kernel, stride 2, padding 1: output 4×4×4.
  const Conv2d<double> conv({3, 7, 6}, 4, 3, 2, 2, 1);
  EXPECT_EQ(conv.output_size(), 4 * 4 * 4);
  check_layer(conv, random_values(2 * conv.input_size(), 30), 31);
}

TEST(LayerGradientCheck, Conv2dSamePadding) {
  const Conv2d<double> conv({2, 5, 5}, 3, 5, 5, 1, 2);
  EXPECT_EQ(conv.output_size(), 3 * 5 * 5);
  check_layer(conv, random_values(3 * conv.input_size(), 32), 33);
}

TEST(LayerGradientCheck, MaxPool2d) {
  const MaxPool2d<double> pool({2, 6, 5}, 2, 2);  // the last column is in no window
  EXPECT_EQ(pool.output_size(), 2 * 3 * 2);
  check_layer(pool, distinct_values(3 * pool.input_size(), 34), 35);
}

TEST(LayerGradientCheck, MaxPool2dOverlapping) {
  const MaxPool2d<double> pool({2, 7, 7}, 3, 2);
  EXPECT_EQ(pool.output_size(), 2 * 3 * 3);
  check_layer(pool, distinct_values(2 * pool.input_size(), 36), 37);
}

TEST(LayerGradientCheck, AvgPool2d) {
  const AvgPool2d<double> pool({3, 5, 7}, 3, 2);
  EXPECT_EQ(pool.output_size(), 3 * 2 * 3);
  check_layer(pool, random_values(2 * pool.input_size(), 38), 39);
}

TEST(LayerGradientCheck, LayerNorm) {
  const LayerNorm<double> norm(7, 1e-3);
  // Random gamma and beta, so that the check does not rely on the identity initialisation.
  check_layer(norm, random_values(4 * 7, 40, -2, 2), 41);
}

TEST(LayerGradientCheck, EmbeddingWithRespectToTheTable) {
  const Embedding<double> embedding(3, 5, 4);  // 3 tokens per sample, vocabulary 5, dimension 4
  // Repeated ids accumulate; 5 and −1 are out of range and receive nothing.
  const std::vector<double> ids{0, 4, 4, 2, 5, 4, -1, 0, 1};
  check_layer(embedding, ids, 42, {}, /*check_input=*/false);
}

TEST(LayerGradientCheck, Gelu) {
  check_layer(Gelu<double>(6), random_values(3 * 6, 43, -3, 3), 44);
}

TEST(LayerGradientCheck, Tanh) {
  check_layer(Tanh<double>(6), random_values(3 * 6, 45, -2, 2), 46);
}

TEST(Layers, EmbeddingInputGradientIsZero) {
  CpuOps<double> ops;
  const Embedding<double> embedding(2, 3, 2);
  const std::vector<double> ids{0, 2}, params = random_values(6, 1), dout{1, 2, 3, 4};
  std::vector<double> out(4), din(2, std::nan("")), dparams(6);
  embedding.forward(ops, params.data(), {ids.data(), 1, 2}, {out.data(), 1, 4}, nullptr);
  EXPECT_EQ(out, (std::vector<double>{params[0], params[1], params[4], params[5]}));
  embedding.backward(ops, params.data(), {ids.data(), 1, 2}, {out.data(), 1, 4}, {dout.data(), 1, 4},
                     {din.data(), 1, 2}, dparams.data(), nullptr);
  EXPECT_EQ(din, (std::vector<double>{0, 0}));
  EXPECT_EQ(dparams, (std::vector<double>{1, 2, 0, 0, 3, 4}));
}

TEST(Layers, ConvInitialisationIsHeUniformOverTheFanIn) {
  const Conv2d<float> conv({4, 8, 8}, 16, 3, 3, 1, 1);
  const size_t weights = 16 * 4 * 3 * 3;
  ASSERT_EQ(conv.param_count(), weights + 16);
  std::vector<float> p(conv.param_count(), 7.0f);
  Rng rng(1);
  conv.init_params(p.data(), rng, InitScheme::HeUniform);
  const double fan_in = 4 * 3 * 3, bound = std::sqrt(6.0 / fan_in);
  double sum_sq = 0;
  for (size_t i = 0; i < weights; ++i) {
    EXPECT_LE(std::fabs(p[i]), bound);
    sum_sq += static_cast<double>(p[i]) * p[i];
  }
  EXPECT_NEAR(sum_sq / weights, 2.0 / fan_in, 0.1 * 2.0 / fan_in);  // Uniform(−b, b) has variance b²/3
  for (size_t i = weights; i < p.size(); ++i) EXPECT_EQ(p[i], 0.0f);
  const auto tensors = conv.param_tensors("conv0");
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "conv0.weight");
  EXPECT_EQ(tensors[0].size, weights);
  EXPECT_FALSE(tensors[0].is_bias);
  EXPECT_EQ(tensors[1].offset, weights);
  EXPECT_TRUE(tensors[1].is_bias);
}

TEST(Layers, LayerNormStartsAsTheIdentityAffineAndIsExcludedFromDecay) {
  const LayerNorm<float> norm(5);
  std::vector<float> p(norm.param_count());
  Rng rng(1);
  norm.init_params(p.data(), rng, InitScheme::TorchDefault);
  EXPECT_EQ(p, (std::vector<float>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}));
  for (const ParamTensor& t : norm.param_tensors("layernorm3")) EXPECT_TRUE(t.is_bias) << t.name;
}

TEST(Layers, ShapesThatDoNotFitAreRejected) {
  EXPECT_THROW(Conv2d<float>({1, 4, 4}, 2, 5, 5, 1, 0), std::invalid_argument);
  EXPECT_NO_THROW(Conv2d<float>({1, 4, 4}, 2, 5, 5, 1, 1));
  EXPECT_THROW(Conv2d<float>({1, 4, 4}, 2, 3, 3, 0, 0), std::invalid_argument);
  EXPECT_THROW(MaxPool2d<float>({1, 1, 4}, 2, 2), std::invalid_argument);
  EXPECT_THROW(AvgPool2d<float>({0, 4, 4}, 2, 2), std::invalid_argument);
  EXPECT_THROW(Dense<float>(0, 3), std::invalid_argument);
  EXPECT_THROW(LayerNorm<float>(4, 0.0), std::invalid_argument);
  EXPECT_THROW(Embedding<float>(1, 0, 3), std::invalid_argument);
}

// FLOPs per sample against the documented convention (multiply-add 2, anything else 1).
TEST(Layers, FlopsPerSample) {
  // Conv 3×7×6 → 4×4×4 with 3×2 kernels: 64 positions, each a 3·3·2 = 18-long multiply-add sum and a bias.
  const Conv2d<float> conv({3, 7, 6}, 4, 3, 2, 2, 1);
  EXPECT_DOUBLE_EQ(conv.forward_flops(), 64 * (2.0 * 18) + 64);
  EXPECT_DOUBLE_EQ(conv.backward_flops(false), 64 * (2.0 * 18) + 64);
  EXPECT_DOUBLE_EQ(conv.backward_flops(true), 2 * 64 * (2.0 * 18) + 64);
  // Max pool 2×6×5, 2×2 windows: 2·3·2 = 12 windows of 4 values.
  const MaxPool2d<float> maxpool({2, 6, 5}, 2, 2);
  EXPECT_DOUBLE_EQ(maxpool.forward_flops(), 12 * 3);
  EXPECT_DOUBLE_EQ(maxpool.backward_flops(true), 12 * 4);
  EXPECT_DOUBLE_EQ(maxpool.backward_flops(false), 0);
  const AvgPool2d<float> avgpool({2, 6, 5}, 2, 2);
  EXPECT_DOUBLE_EQ(avgpool.forward_flops(), 12 * (3 + 1));
  EXPECT_DOUBLE_EQ(avgpool.backward_flops(true), 12 * (1 + 4));
  const LayerNorm<float> norm(10);
  EXPECT_DOUBLE_EQ(norm.forward_flops(), 10 * (1 + 3 + 4));
  EXPECT_DOUBLE_EQ(norm.backward_flops(false), 10 * (4 + 2 + 2 + 1));
  EXPECT_DOUBLE_EQ(norm.backward_flops(true), 10 * (4 + 2 + 2 + 1) + 10 * (1 + 1 + 2 + 4));
  EXPECT_DOUBLE_EQ(Gelu<float>(10).forward_flops(), 50);
  EXPECT_DOUBLE_EQ(Gelu<float>(10).backward_flops(true), 110);
  EXPECT_DOUBLE_EQ(Tanh<float>(10).forward_flops(), 10);
  EXPECT_DOUBLE_EQ(Tanh<float>(10).backward_flops(true), 30);
  const Embedding<float> embedding(3, 100, 8);
  EXPECT_DOUBLE_EQ(embedding.forward_flops(), 0);
  EXPECT_DOUBLE_EQ(embedding.backward_flops(false), 3 * 8);
}

}  // namespace
}  // namespace dtsim::models
