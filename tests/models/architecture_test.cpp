// make_network: gradient checks of every architecture in double, parameter counts and FLOPs against
// closed forms, and the specification's validation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/architectures.hpp"
#include "tests/models/gradient_check.hpp"

namespace dtsim::models {
namespace {

using gpu::CpuOps;
using namespace gradcheck;  // NOLINT: the shared gradient-check helpers

NetworkSpec spec(const std::string& arch, int channels, int height, int width, int classes,
                 std::vector<int> hidden = {}, Activation activation = Activation::Relu) {
  NetworkSpec s;
  s.arch = parse_architecture(arch);
  s.channels = channels;
  s.height = height;
  s.width = width;
  s.classes = classes;
  s.hidden = std::move(hidden);
  s.activation = activation;
  return s;
}

// `count` distinct indices below `size` (all of them when size ≤ count), seeded.
std::vector<size_t> sample_indices(size_t size, size_t count, std::mt19937& gen) {
  std::set<size_t> picked;
  if (size <= count) {
    for (size_t i = 0; i < size; ++i) picked.insert(i);
  } else {
    std::uniform_int_distribution<size_t> dist(0, size - 1);
    while (picked.size() < count) picked.insert(dist(gen));
  }
  return {picked.begin(), picked.end()};
}

// The gradient of the mean loss with respect to the parameters and to the input, against central finite
// differences at up to `per_tensor` seeded coordinates of every parameter tensor and of the input.
void check_network(const Network<double>& net, int batch, size_t per_tensor, unsigned seed) {
  CpuOps<double> ops;
  auto ws = net.make_workspace(ops, batch);
  std::vector<double> params(net.num_params());
  net.init_params(params.data(), seed);
  // Non-zero biases, so that the check also covers paths the zero initialisation would hide.
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> bias(-0.1, 0.1);
  for (const ParamTensor& t : net.param_tensors())
    if (t.is_bias)
      for (size_t i = 0; i < t.size; ++i) params[t.offset + i] = bias(gen);
  std::vector<double> x = random_values(static_cast<size_t>(batch) * net.input_size(), seed + 1, 0.0, 1.0);
  std::vector<int32_t> labels(batch);
  for (int i = 0; i < batch; ++i) labels[i] = (3 * i + 1) % net.num_classes();

  std::vector<double> grads(params.size(), std::nan("")), input_grads(x.size(), std::nan(""));
  net.loss_and_gradient(ops, ws, params.data(), x.data(), labels.data(), batch, grads.data(), {}, input_grads.data());
  const auto mean_loss = [&] {
    return net.evaluate(ops, ws, params.data(), x.data(), labels.data(), batch).loss / batch;
  };

  for (const ParamTensor& t : net.param_tensors()) {
    std::vector<double> analytic, numeric;
    for (const size_t i : sample_indices(t.size, per_tensor, gen)) {
      analytic.push_back(grads[t.offset + i]);
      numeric.push_back(numeric_partial(params, t.offset + i, mean_loss));
    }
    EXPECT_LT(relative_error(analytic, numeric), 1e-6) << net.description() << ": " << t.name;
  }
  std::vector<double> analytic, numeric;
  for (const size_t i : sample_indices(x.size(), per_tensor, gen)) {
    analytic.push_back(input_grads[i]);
    numeric.push_back(numeric_partial(x, i, mean_loss));
  }
  EXPECT_LT(relative_error(analytic, numeric), 1e-6) << net.description() << ": input";
}

constexpr size_t kAll = static_cast<size_t>(-1);

TEST(NetworkGradientCheck, LogisticRegression) {
  check_network(*make_network<double>(spec("logreg", 1, 3, 4, 5)), 4, kAll, 50);
}

class MlpActivationGradientCheck : public ::testing::TestWithParam<Activation> {};

TEST_P(MlpActivationGradientCheck, EveryParameterAndInput) {
  check_network(*make_network<double>(spec("mlp", 2, 2, 3, 4, {7, 5}, GetParam())), 5, kAll, 51);
}

INSTANTIATE_TEST_SUITE_P(Activations, MlpActivationGradientCheck,
                         ::testing::Values(Activation::Relu, Activation::Gelu, Activation::Tanh),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(NetworkGradientCheck, LeNetSampledCoordinates) {
  check_network(*make_network<double>(spec("lenet", 1, 28, 28, 10)), 2, 30, 52);
}

TEST(NetworkGradientCheck, FedAvgCnnSampledCoordinates) {
  check_network(*make_network<double>(spec("cnn", 1, 28, 28, 10)), 2, 25, 53);
}

TEST(NetworkGradientCheck, LeNetOnColourImagesWithGelu) {
  check_network(*make_network<double>(spec("lenet", 3, 16, 12, 4, {}, Activation::Gelu)), 2, 30, 54);
}

TEST(Architectures, LeNetParameterCount) {
  // 28×28 → conv 5×5 pad 2 → 28×28 → pool → 14×14 → conv 5×5 → 10×10 → pool → 5×5.
  const size_t conv1 = 6 * 1 * 5 * 5 + 6, conv2 = 16 * 6 * 5 * 5 + 16;
  const size_t fc1 = 16 * 5 * 5 * 120 + 120, fc2 = 120 * 84 + 84, fc3 = 84 * 10 + 10;
  EXPECT_EQ(make_network<float>(spec("lenet", 1, 28, 28, 10))->num_params(), conv1 + conv2 + fc1 + fc2 + fc3);
  EXPECT_EQ(conv1 + conv2 + fc1 + fc2 + fc3, 61706u);
  // 3×32×32 → 32×32 → 16×16 → 12×12 → 6×6.
  const size_t colour = (6 * 3 * 25 + 6) + conv2 + (16 * 6 * 6 * 120 + 120) + fc2 + fc3;
  EXPECT_EQ(make_network<float>(spec("lenet", 3, 32, 32, 10))->num_params(), colour);
}

TEST(Architectures, UnpaddedLeNetParameterCountIsTheFederatedBenchmarks) {
  // 28×28 → conv 5×5 → 24×24 → pool → 12×12 → conv 5×5 → 8×8 → pool → 4×4: FC 256 → 120.
  const size_t conv1 = 6 * 1 * 5 * 5 + 6, conv2 = 16 * 6 * 5 * 5 + 16;
  const size_t fc1 = 16 * 4 * 4 * 120 + 120, fc2 = 120 * 84 + 84, fc3 = 84 * 10 + 10;
  EXPECT_EQ(conv1 + conv2 + fc1 + fc2 + fc3, 44426u);
  EXPECT_EQ(make_network<float>(spec("lenet-nopad", 1, 28, 28, 10))->num_params(), 44426u);
  // 3×32×32 (CIFAR-10) → 28×28 → 14×14 → 10×10 → 5×5: the 62,006 of the benchmark's CIFAR-10 simple-cnn.
  EXPECT_EQ(make_network<float>(spec("lenet-nopad", 3, 32, 32, 10))->num_params(),
            (6 * 3 * 25 + 6) + conv2 + (16 * 5 * 5 * 120 + 120) + fc2 + fc3);
  EXPECT_EQ(make_network<float>(spec("lenet-nopad", 3, 32, 32, 10))->num_params(), 62006u);
}

TEST(NetworkGradientCheck, UnpaddedLeNetSampledCoordinates) {
  check_network(*make_network<double>(spec("lenet-nopad", 1, 28, 28, 10)), 2, 30, 55);
}

TEST(Architectures, FedAvgCnnParameterCount) {
  // 28×28 → conv 5×5 pad 2 → 28×28 → pool → 14×14 → conv 5×5 pad 2 → 14×14 → pool → 7×7.
  const size_t conv1 = 32 * 1 * 5 * 5 + 32, conv2 = 64 * 32 * 5 * 5 + 64;
  const size_t fc1 = 64 * 7 * 7 * 1024 + 1024, fc2 = 1024 * 10 + 10;
  const auto net = make_network<float>(spec("cnn", 1, 28, 28, 10));
  EXPECT_EQ(net->num_params(), conv1 + conv2 + fc1 + fc2);
  EXPECT_EQ(net->num_params(), 3274634u);
  const auto& t = net->param_tensors();
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t[0].name, "conv0.weight");
  EXPECT_EQ(t[2].name, "conv3.weight");
  EXPECT_EQ(t[4].name, "dense6.weight");
  EXPECT_EQ(t[4].offset, conv1 + conv2);
}

TEST(Architectures, LeNetFlopsPerSample) {
  const auto net = make_network<float>(spec("lenet", 1, 28, 28, 10));
  const double c1 = 6 * 28 * 28, p1 = 6 * 14 * 14, c2 = 16 * 10 * 10, p2 = 16 * 5 * 5;  // outputs per layer
  const double forward = (2 * c1 * 25 + c1) + c1 + 3 * p1 + (2 * c2 * 6 * 25 + c2) + c2 + 3 * p2 +
                         (2.0 * 400 * 120 + 120) + 120 + (2.0 * 120 * 84 + 84) + 84 + (2.0 * 84 * 10 + 10) +
                         4 * 10;
  EXPECT_DOUBLE_EQ(net->forward_flops_per_sample(), forward);
  // Backward: the loss gradient, then every layer; the first conv computes no input gradient.
  const double backward = 2 * 10 + (2 * c1 * 25 + c1) + c1 + 4 * p1 + (2 * 2 * c2 * 6 * 25 + c2) + c2 + 4 * p2 +
                          (2 * 2.0 * 400 * 120 + 120) + 120 + (2 * 2.0 * 120 * 84 + 84) + 84 +
                          (2 * 2.0 * 84 * 10 + 10);
  EXPECT_DOUBLE_EQ(net->backward_flops_per_sample(), backward);
}

TEST(Architectures, FedAvgCnnFlopsPerSample) {
  const auto net = make_network<float>(spec("cnn", 1, 28, 28, 10));
  const double c1 = 32 * 28 * 28, p1 = 32 * 14 * 14, c2 = 64 * 14 * 14, p2 = 64 * 7 * 7;
  const double forward = (2 * c1 * 25 + c1) + c1 + 3 * p1 + (2 * c2 * 32 * 25 + c2) + c2 + 3 * p2 +
                         (2.0 * 3136 * 1024 + 1024) + 1024 + (2.0 * 1024 * 10 + 10) + 4 * 10;
  EXPECT_DOUBLE_EQ(net->forward_flops_per_sample(), forward);
  const double backward = 2 * 10 + (2 * c1 * 25 + c1) + c1 + 4 * p1 + (2 * 2 * c2 * 32 * 25 + c2) + c2 + 4 * p2 +
                          (2 * 2.0 * 3136 * 1024 + 1024) + 1024 + (2 * 2.0 * 1024 * 10 + 10);
  EXPECT_DOUBLE_EQ(net->backward_flops_per_sample(), backward);
}

TEST(Architectures, DescriptionsAndLayerSequences) {
  EXPECT_EQ(make_network<float>(spec("logreg", 1, 28, 28, 10))->description(), "logreg 784-10");
  EXPECT_EQ(make_network<float>(spec("logreg", 1, 28, 28, 10))->num_params(), 784u * 10 + 10);
  EXPECT_EQ(make_mlp<float>(784, {256, 128}, 10)->description(), "mlp 784-256-128-10");
  EXPECT_EQ(make_network<float>(spec("mlp", 1, 28, 28, 10, {64}, Activation::Tanh))->description(),
            "mlp 784-64-10 tanh");
  const auto lenet = make_network<float>(spec("lenet", 1, 28, 28, 10));
  EXPECT_EQ(lenet->description(), "lenet 1x28x28-10");
  std::string kinds;
  for (size_t i = 0; i < lenet->num_layers(); ++i) kinds += lenet->layer(i).kind() + " ";
  EXPECT_EQ(kinds, "conv relu maxpool conv relu maxpool dense relu dense relu dense ");
  const auto cnn = make_network<float>(spec("cnn", 1, 28, 28, 10, {}, Activation::Gelu));
  kinds.clear();
  for (size_t i = 0; i < cnn->num_layers(); ++i) kinds += cnn->layer(i).kind() + " ";
  EXPECT_EQ(kinds, "conv gelu maxpool conv gelu maxpool dense gelu dense ");
}

TEST(Architectures, BadSpecificationsAreRejected) {
  EXPECT_THROW(make_network<float>(spec("resnet", 1, 28, 28, 10)), std::invalid_argument);
  EXPECT_THROW(make_network<float>(spec("cnn", 1, 28, 28, 10, {128})), std::invalid_argument);
  EXPECT_THROW(make_network<float>(spec("mlp", 1, 28, 28, 10, {128, 0})), std::invalid_argument);
  EXPECT_THROW(make_network<float>(spec("logreg", 1, 28, 28, 0)), std::invalid_argument);
  EXPECT_THROW(make_network<float>(spec("mlp", 0, 28, 28, 10)), std::invalid_argument);
  EXPECT_THROW(make_network<float>(spec("lenet", 1, 8, 8, 10)), std::invalid_argument);  // 4×4 after pooling < 5×5
  EXPECT_THROW(make_network<float>(spec("cnn", 1, 3, 3, 10)), std::invalid_argument);    // nothing left to pool
}

TEST(Architectures, LeNetLearnsAFixedBatch) {
  // Plain gradient descent on one batch must drive the loss down: a smoke test that the pieces fit.
  CpuOps<float> ops;
  const auto net = make_network<float>(spec("lenet", 1, 28, 28, 10));
  const int batch = 8;
  auto ws = net->make_workspace(ops, batch);
  std::vector<float> params(net->num_params()), grads(net->num_params());
  net->init_params(params.data(), 3);
  const std::vector<double> xd = random_values(static_cast<size_t>(batch) * net->input_size(), 60, 0.0, 1.0);
  const std::vector<float> x(xd.begin(), xd.end());
  const std::vector<int32_t> labels{0, 1, 2, 3, 4, 5, 6, 7};
  const double initial = net->evaluate(ops, ws, params.data(), x.data(), labels.data(), batch).loss / batch;
  for (int step = 0; step < 30; ++step) {
    net->loss_and_gradient(ops, ws, params.data(), x.data(), labels.data(), batch, grads.data());
    ops.axpy(-0.05f, grads.data(), params.data(), params.size());
  }
  const LossSums final_sums = net->evaluate(ops, ws, params.data(), x.data(), labels.data(), batch);
  EXPECT_LT(final_sums.loss / batch, 0.2 * initial);
  EXPECT_EQ(final_sums.correct, batch);
}

}  // namespace
}  // namespace dtsim::models
