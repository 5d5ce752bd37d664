// Helpers shared by the CPU reference's gradient tests: seeded inputs, central differences and the relative
// error of a whole gradient.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace dtsim::gpu::finite_differences {

inline std::vector<double> random_vector(size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// ‖a − b‖ / max(‖a‖, ‖b‖).
inline double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return std::sqrt(diff) / std::max({std::sqrt(na), std::sqrt(nb), 1e-300});
}

// Central differences of f with respect to every entry of x (which f reads), step h.
inline std::vector<double> numeric_gradient(std::vector<double>& x, const std::function<double()>& f,
                                            double h = 1e-6) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + h;
    const double up = f();
    x[i] = saved - h;
    const double down = f();
    x[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// Σ y ⊙ weights: a scalar loss whose gradient with respect to y is `weights`.
inline double weighted_sum(const std::vector<double>& y, const std::vector<double>& weights) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * weights[i];
  return s;
}

}  // namespace dtsim::gpu::finite_differences
