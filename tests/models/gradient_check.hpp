// Shared helpers of the gradient checks: backward passes against central finite differences in double.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/layer.hpp"
#include "tests/gpu/finite_differences.hpp"

namespace dtsim::models::gradcheck {

// Seeded uniform values in [lo, hi).
inline std::vector<double> random_values(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  return gpu::finite_differences::random_vector(n, seed, lo, hi);
}

// A shuffled ramp of values 0.01 apart: finite differences with h ≪ 0.01 never change which value of a
// pooling window is the largest.
inline std::vector<double> distinct_values(size_t n, unsigned seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01 * static_cast<double>(i) - 0.005 * static_cast<double>(n);
  std::mt19937 gen(seed);
  std::shuffle(v.begin(), v.end(), gen);
  return v;
}

// ‖a − b‖ / max(‖a‖, ‖b‖): the relative error of a whole gradient.
using gpu::finite_differences::relative_error;

// Central difference of f with respect to x[i].
inline double numeric_partial(std::vector<double>& x, size_t i, const std::function<double()>& f, double h = 1e-6) {
  const double saved = x[i];
  x[i] = saved + h;
  const double up = f();
  x[i] = saved - h;
  const double down = f();
  x[i] = saved;
  return (up - down) / (2 * h);
}

// Central differences of f with respect to every entry of x.
using gpu::finite_differences::numeric_gradient;

// For a single layer, the scalar L = Σ out ⊙ w (fixed random weights w) has dL/dout = w, so backward with
// dout = w must return dL/dparams and dL/din. `params` empty means random parameters; `check_input` false
// skips the input gradient (for inputs that are not differentiable, such as embedding ids).
inline void check_layer(const Layer<double>& layer, std::vector<double> input, unsigned seed,
                        std::vector<double> params = {}, bool check_input = true) {
  gpu::CpuOps<double> ops;
  const int batch = static_cast<int>(input.size()) / layer.input_size();
  ASSERT_EQ(static_cast<size_t>(batch) * layer.input_size(), input.size());
  if (params.empty()) params = random_values(layer.param_count(), seed);
  ASSERT_EQ(params.size(), layer.param_count());
  const std::vector<double> weights = random_values(static_cast<size_t>(batch) * layer.output_size(), seed + 1);
  std::vector<double> out(weights.size());
  std::vector<double> scratch(layer.scratch_size(ops, batch));

  const auto objective = [&] {
    layer.forward(ops, params.data(), {input.data(), batch, layer.input_size()},
                  {out.data(), batch, layer.output_size()}, scratch.data());
    double s = 0;
    for (size_t i = 0; i < out.size(); ++i) s += out[i] * weights[i];
    return s;
  };
  objective();
  std::vector<double> dparams(params.size(), std::nan("")), din(input.size(), std::nan(""));
  layer.backward(ops, params.data(), {input.data(), batch, layer.input_size()},
                 {out.data(), batch, layer.output_size()}, {weights.data(), batch, layer.output_size()},
                 {din.data(), batch, layer.input_size()}, dparams.data(), scratch.data());

  if (!params.empty()) {
    EXPECT_LT(relative_error(dparams, numeric_gradient(params, objective)), 1e-6) << layer.kind();
  }
  if (check_input) {
    EXPECT_LT(relative_error(din, numeric_gradient(input, objective)), 1e-6) << layer.kind();
  }

  // Without an input gradient the parameter gradient is the same, bit for bit.
  std::vector<double> dparams_only(params.size(), std::nan(""));
  layer.backward(ops, params.data(), {input.data(), batch, layer.input_size()},
                 {out.data(), batch, layer.output_size()}, {weights.data(), batch, layer.output_size()}, {},
                 dparams_only.data(), scratch.data());
  EXPECT_EQ(dparams_only, dparams) << layer.kind();
}

}  // namespace dtsim::models::gradcheck
