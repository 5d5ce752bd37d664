// Weight initialisation schemes (models/initialization.hpp): the bounds against their closed forms, the
// drawn values against the uniform distribution's support and variance, and a network's layers each drawing
// at its own fan-in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "models/architectures.hpp"
#include "models/conv_layers.hpp"
#include "models/initialization.hpp"
#include "models/layer.hpp"

namespace dtsim::models {
namespace {

struct Moments {
  double mean = 0, variance = 0, max_abs = 0;
};

Moments moments(const float* v, size_t n) {
  Moments m;
  for (size_t i = 0; i < n; ++i) m.mean += v[i];
  m.mean /= static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    m.variance += (v[i] - m.mean) * (v[i] - m.mean);
    m.max_abs = std::max(m.max_abs, static_cast<double>(std::fabs(v[i])));
  }
  m.variance /= static_cast<double>(n);
  return m;
}

// Values drawn from U(−b, b): all inside, the largest within 1 % of b (the support is filled), variance b²/3.
// With n ≥ 2,400 draws the sample variance's relative standard error is √(0.8 / n) ≤ 1.8 %, so 8 % is a
// margin of more than four standard errors.
void expect_uniform(const float* v, size_t n, double b, const char* what) {
  ASSERT_GE(n, 2400u) << what;
  const Moments m = moments(v, n);
  EXPECT_LE(m.max_abs, b * (1 + 1e-6)) << what;
  EXPECT_GE(m.max_abs, 0.99 * b) << what;
  EXPECT_NEAR(m.variance, b * b / 3, 0.08 * b * b / 3) << what;
  EXPECT_NEAR(m.mean, 0.0, 4 * b / std::sqrt(3.0 * n)) << what;
}

TEST(Initialization, BoundsFollowTheirClosedForms) {
  const UniformInitBounds he = uniform_init_bounds(InitScheme::HeUniform, 150);
  EXPECT_DOUBLE_EQ(he.weight, std::sqrt(6.0 / 150));
  EXPECT_EQ(he.bias, 0.0);
  const UniformInitBounds torch = uniform_init_bounds(InitScheme::TorchDefault, 256);
  EXPECT_DOUBLE_EQ(torch.weight, 1.0 / 16);
  EXPECT_DOUBLE_EQ(torch.bias, 1.0 / 16);
  // PyTorch's kaiming_uniform_(a = √5): gain √(2 / (1 + a²)) times √(3 / fan_in) is 1/√fan_in.
  const double a = std::sqrt(5.0), fan_in = 84;
  EXPECT_NEAR(uniform_init_bounds(InitScheme::TorchDefault, fan_in).weight,
              std::sqrt(2.0 / (1 + a * a)) * std::sqrt(3.0 / fan_in), 1e-15);
  // He-uniform's variance is 2 / fan_in, torch-default's 1 / (3 fan_in): weights √6 times apart.
  EXPECT_NEAR(uniform_init_bounds(InitScheme::HeUniform, 84).weight /
                  uniform_init_bounds(InitScheme::TorchDefault, 84).weight,
              std::sqrt(6.0), 1e-12);
  EXPECT_THROW(uniform_init_bounds(InitScheme::TorchDefault, 0), std::invalid_argument);
}

TEST(Initialization, NamesRoundTrip) {
  EXPECT_EQ(init_scheme_names(), (std::vector<std::string>{"he-uniform", "torch-default"}));
  for (const std::string& name : init_scheme_names())
    EXPECT_EQ(to_string(*init_scheme_table().parse(name)), name);
  EXPECT_FALSE(init_scheme_table().parse("xavier").has_value());
}

TEST(Initialization, DenseDrawsWeightsAndBiasesAtItsFanIn) {
  const Dense<float> dense(256, 120);
  std::vector<float> p(dense.param_count(), 7.0f);
  Rng rng(3);
  dense.init_params(p.data(), rng, InitScheme::TorchDefault);
  const size_t weights = 256 * 120;
  expect_uniform(p.data(), weights, 1.0 / 16, "dense weights");
  // 120 biases: too few for a variance check, but every one inside the bound and no two alike.
  const std::set<float> biases(p.begin() + weights, p.end());
  EXPECT_EQ(biases.size(), 120u);
  for (const float b : biases) EXPECT_LE(std::fabs(b), 1.0 / 16);

  std::vector<float> he(dense.param_count(), 7.0f);
  Rng rng_he(3);
  dense.init_params(he.data(), rng_he, InitScheme::HeUniform);
  expect_uniform(he.data(), weights, std::sqrt(6.0 / 256), "he weights");
  for (size_t j = weights; j < he.size(); ++j) EXPECT_EQ(he[j], 0.0f);
}

TEST(Initialization, ConvolutionCountsChannelsTimesKernelAsItsFanIn) {
  const Conv2d<float> conv({6, 12, 12}, 16, 5, 5, 1, 0);
  std::vector<float> p(conv.param_count(), 7.0f);
  Rng rng(5);
  conv.init_params(p.data(), rng, InitScheme::TorchDefault);
  const size_t weights = 16 * 6 * 5 * 5;
  expect_uniform(p.data(), weights, 1.0 / std::sqrt(150.0), "conv weights");
  for (size_t c = weights; c < p.size(); ++c) {
    EXPECT_NE(p[c], 0.0f);
    EXPECT_LE(std::fabs(p[c]), 1.0 / std::sqrt(150.0));
  }
}

// lenet-nopad on 28×28: conv 1→6 (fan-in 25), conv 6→16 (150), dense 256→120, 120→84, 84→10. Every layer's
// weights draw at its own bound, under both schemes, and the default stays he-uniform.
TEST(Initialization, EveryLayerOfANetworkUsesTheSpecifiedScheme) {
  NetworkSpec spec;
  spec.arch = Architecture::LeNetNoPad;
  EXPECT_EQ(spec.init, InitScheme::HeUniform);
  const std::vector<double> fan_ins = {25, 150, 256, 120, 84};
  for (const InitScheme scheme : {InitScheme::HeUniform, InitScheme::TorchDefault}) {
    spec.init = scheme;
    const auto net = make_network<float>(spec);
    EXPECT_EQ(net->init_scheme(), scheme);
    std::vector<float> p(net->num_params());
    net->init_params(p.data(), 11);
    size_t layer_with_weights = 0;
    for (const ParamTensor& t : net->param_tensors()) {
      ASSERT_LT(layer_with_weights, fan_ins.size()) << t.name;
      const UniformInitBounds bound = uniform_init_bounds(scheme, fan_ins[layer_with_weights]);
      const Moments m = moments(p.data() + t.offset, t.size);
      if (t.is_bias) {
        EXPECT_LE(m.max_abs, bound.bias * (1 + 1e-6)) << t.name;
        if (scheme == InitScheme::HeUniform) {
          EXPECT_EQ(m.max_abs, 0.0) << t.name;
        }
        ++layer_with_weights;
      } else {
        EXPECT_LE(m.max_abs, bound.weight * (1 + 1e-6)) << t.name;
        EXPECT_GE(m.max_abs, 0.9 * bound.weight) << t.name;  // ≥ 150 draws: the top 10 % is reached
      }
    }
    EXPECT_EQ(layer_with_weights, fan_ins.size());
    std::vector<float> again(net->num_params());
    net->init_params(again.data(), 11);
    EXPECT_EQ(p, again);  // seeded
  }
}

}  // namespace
}  // namespace dtsim::models
