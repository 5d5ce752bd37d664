// Backward passes against central finite differences computed in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/network.hpp"
#include "tests/models/gradient_check.hpp"

namespace dtsim::models {
namespace {

using gpu::CpuOps;
using namespace gradcheck;  // NOLINT: the shared gradient-check helpers

TEST(GradientCheck, DenseLayer) {
  check_layer(Dense<double>(5, 4), random_values(3 * 5, 10), 11);
}

TEST(GradientCheck, ReluLayerAwayFromTheKink) {
  // Inputs at least 0.1 away from zero, so ±h never crosses the kink.
  std::vector<double> x = random_values(3 * 6, 20, 0.1, 1.0);
  for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
  check_layer(Relu<double>(6), x, 21);
}

TEST(GradientCheck, DenseSkipsInputGradientWhenNotAsked) {
  CpuOps<double> ops;
  Dense<double> layer(3, 2);
  std::vector<double> params = random_values(layer.param_count(), 1), x = random_values(6, 2), out(4), dout(4, 1.0),
                      dparams(params.size());
  layer.forward(ops, params.data(), {x.data(), 2, 3}, {out.data(), 2, 2}, nullptr);
  layer.backward(ops, params.data(), {x.data(), 2, 3}, {out.data(), 2, 2}, {dout.data(), 2, 2}, {}, dparams.data(),
                 nullptr);
  // Bias gradient = column sums of dout = batch size.
  EXPECT_DOUBLE_EQ(dparams[6], 2.0);
  EXPECT_DOUBLE_EQ(dparams[7], 2.0);
}

struct MlpCase {
  std::vector<int> hidden;
  int batch;
};

class MlpGradientCheck : public ::testing::TestWithParam<MlpCase> {};

TEST_P(MlpGradientCheck, WholeNetworkInDouble) {
  const MlpCase c = GetParam();
  const int inputs = 7, classes = 4;
  const auto net = make_mlp<double>(inputs, c.hidden, classes);
  CpuOps<double> ops;
  auto ws = net->make_workspace(ops, c.batch);
  std::vector<double> params(net->num_params());
  net->init_params(params.data(), 5);
  // Non-zero biases, so that the check also covers paths the zero initialisation would hide.
  for (const ParamTensor& t : net->param_tensors())
    if (t.is_bias)
      for (size_t i = 0; i < t.size; ++i) params[t.offset + i] = 0.1 * static_cast<double>(i % 3) - 0.1;
  const std::vector<double> x = random_values(static_cast<size_t>(c.batch) * inputs, 6);
  std::vector<int32_t> labels(c.batch);
  for (int i = 0; i < c.batch; ++i) labels[i] = i % classes;

  std::vector<double> grads(params.size());
  net->loss_and_gradient(ops, ws, params.data(), x.data(), labels.data(), c.batch, grads.data());
  const auto mean_loss = [&] {
    return net->evaluate(ops, ws, params.data(), x.data(), labels.data(), c.batch).loss / c.batch;
  };
  EXPECT_LT(relative_error(grads, numeric_gradient(params, mean_loss)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Shapes, MlpGradientCheck,
                         ::testing::Values(MlpCase{{}, 5},          // multinomial logistic regression
                                           MlpCase{{6}, 4},         // one hidden layer
                                           MlpCase{{8, 5}, 6}));    // the quickstart's shape, scaled down

TEST(GradientCheck, FloatMlpAgreesWithDoubleFiniteDifferences) {
  const int inputs = 7, classes = 4, batch = 6;
  const std::vector<int> hidden{8, 5};
  const auto netf = make_mlp<float>(inputs, hidden, classes);
  const auto netd = make_mlp<double>(inputs, hidden, classes);
  CpuOps<float> opsf;
  CpuOps<double> opsd;
  auto wsf = netf->make_workspace(opsf, batch);
  auto wsd = netd->make_workspace(opsd, batch);
  std::vector<float> pf(netf->num_params());
  netf->init_params(pf.data(), 9);
  std::vector<double> pd(pf.begin(), pf.end());
  const std::vector<double> xd = random_values(batch * inputs, 10);
  const std::vector<float> xf(xd.begin(), xd.end());
  std::vector<int32_t> labels{0, 1, 2, 3, 0, 1};

  std::vector<float> gf(pf.size());
  netf->loss_and_gradient(opsf, wsf, pf.data(), xf.data(), labels.data(), batch, gf.data());
  const auto mean_loss = [&] { return netd->evaluate(opsd, wsd, pd.data(), xd.data(), labels.data(), batch).loss / batch; };
  const std::vector<double> numeric = numeric_gradient(pd, mean_loss);
  EXPECT_LT(relative_error(std::vector<double>(gf.begin(), gf.end()), numeric), 1e-3);
}

TEST(Network, ParameterLayoutAndFlops) {
  const auto net = make_mlp<float>(784, {256, 128}, 10);
  EXPECT_EQ(net->num_params(), 784u * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  const auto& t = net->param_tensors();
  ASSERT_EQ(t.size(), 6u);
  size_t expected_offset = 0;
  for (const ParamTensor& p : t) {
    EXPECT_EQ(p.offset, expected_offset) << p.name;
    expected_offset += p.size;
  }
  EXPECT_EQ(t[0].name, "dense0.weight");
  EXPECT_TRUE(t[1].is_bias);
  // Forward: a multiply-add per weight is 2 FLOPs; bias adds, ReLUs and a 4-per-class softmax on top.
  const double macs = 784.0 * 256 + 256.0 * 128 + 128.0 * 10;
  EXPECT_DOUBLE_EQ(net->forward_flops_per_sample(), 2 * macs + (256 + 128 + 10) + (256 + 128) + 4 * 10);
  // Backward: weight gradients for all layers, input gradients for all but the first.
  const double input_grad_macs = 256.0 * 128 + 128.0 * 10;
  EXPECT_DOUBLE_EQ(net->backward_flops_per_sample(),
                   2 * macs + (256 + 128 + 10) + 2 * input_grad_macs + (256 + 128) + 2 * 10);
}

TEST(Network, EvaluationWorkspaceEvaluatesTheSameAndCannotTrain) {
  const auto net = make_mlp<double>(6, {5}, 3);
  CpuOps<double> ops;
  auto training = net->make_workspace(ops, 4);
  auto evaluation = net->make_workspace(ops, 4, WorkspaceUse::Evaluation);
  EXPECT_TRUE(evaluation.gradients.empty());
  std::vector<double> params(net->num_params()), grads(net->num_params());
  net->init_params(params.data(), 1);
  const std::vector<double> x = random_values(4 * 6, 2);
  const std::vector<int32_t> labels{0, 1, 2, 0};
  const LossSums a = net->evaluate(ops, training, params.data(), x.data(), labels.data(), 4);
  const LossSums b = net->evaluate(ops, evaluation, params.data(), x.data(), labels.data(), 4);
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_THROW(net->loss_and_gradient(ops, evaluation, params.data(), x.data(), labels.data(), 4, grads.data()),
               std::invalid_argument);
}

TEST(Network, RejectsMismatchedLayers) {
  std::vector<std::unique_ptr<Layer<float>>> layers;
  layers.push_back(std::make_unique<Dense<float>>(4, 3));
  layers.push_back(std::make_unique<Dense<float>>(5, 2));
  EXPECT_THROW(Network<float>("bad", std::move(layers)), std::invalid_argument);
}

TEST(Network, InitialisationIsSeededAndHeUniform) {
  const auto net = make_mlp<float>(100, {50}, 10);
  std::vector<float> a(net->num_params()), b(net->num_params()), c(net->num_params());
  net->init_params(a.data(), 1);
  net->init_params(b.data(), 1);
  net->init_params(c.data(), 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const float bound = std::sqrt(6.0f / 100.0f);
  double sum_sq = 0;
  for (size_t i = 0; i < 100 * 50; ++i) {
    EXPECT_LE(std::fabs(a[i]), bound);
    sum_sq += a[i] * a[i];
  }
  // Uniform(−b, b) has variance b²/3 = 2/fan_in.
  EXPECT_NEAR(sum_sq / 5000, 2.0 / 100, 0.1 * 2.0 / 100);
  for (size_t i = 100 * 50; i < 100 * 50 + 50; ++i) EXPECT_EQ(a[i], 0.0f);
}

}  // namespace
}  // namespace dtsim::models
