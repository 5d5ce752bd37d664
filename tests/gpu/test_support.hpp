// Helpers shared by the CUDA backend tests: random inputs, comparisons and the CPU reference's availability.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim::gpu::testing_support {

inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Values from a handful of levels, so that maxima tie often (pooling routing, arg-max).
inline std::vector<float> coarse_floats(size_t n, unsigned seed, int levels = 4) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(0, levels - 1);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(dist(gen)) * 0.5f - 1.0f;
  return v;
}

inline bool same_special(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return true;
}

// Relative error in the max norm: max |actual − expected| / max |expected| over the finite entries; NaN and ±inf
// must sit at the same places in both. The max norm keeps sums with cancellation (small entries made of large
// terms) from dominating, which is the meaning of "agree to fp32 relative error" used throughout.
inline ::testing::AssertionResult close_to(const std::vector<float>& actual, const std::vector<float>& expected,
                                           double tolerance) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  double scale = 0.0;
  for (const float e : expected)
    if (std::isfinite(e)) scale = std::max(scale, std::fabs(static_cast<double>(e)));
  if (scale == 0.0) scale = 1.0;
  double worst = 0.0;
  size_t worst_at = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!same_special(actual[i], expected[i])) {
      return ::testing::AssertionFailure() << "element " << i << ": " << actual[i] << " vs " << expected[i];
    }
    if (!std::isfinite(expected[i])) continue;
    const double err = std::fabs(static_cast<double>(actual[i]) - expected[i]) / scale;
    if (err > worst) {
      worst = err;
      worst_at = i;
    }
  }
  if (worst <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << worst << " > " << tolerance << " at element " << worst_at
                                       << ": " << actual[worst_at] << " vs " << expected[worst_at];
}

inline ::testing::AssertionResult close_to(double actual, double expected, double tolerance) {
  if (std::isnan(actual) || std::isnan(expected)) {
    if (std::isnan(actual) && std::isnan(expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << actual << " vs " << expected;
  }
  const double scale = std::max(std::fabs(expected), 1e-300);
  if (std::fabs(actual - expected) <= tolerance * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " vs " << expected << " (relative error "
                                       << std::fabs(actual - expected) / scale << ")";
}

// Bit-for-bit equality (NaN payloads included): for ops whose contract leaves no room for rounding differences.
inline ::testing::AssertionResult bit_identical(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << "element " << i << ": " << actual[i] << " vs " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs `call` on the CPU reference and returns true, or returns false when that op is still a stub: the CPU
// convolution, pooling, layer norm and embedding (cpu_ops_nn.cpp) are being written in parallel and throw
// std::logic_error("… not implemented yet") until then. Tests then rely on the naive reference in
// nn_reference.hpp alone, and say so once per op on stderr. Contract violations (std::invalid_argument) propagate.
template <class Call>
bool cpu_reference_ran(const char* op, Call&& call) {
  try {
    call();
    return true;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::logic_error& e) {
    if (std::string(e.what()).find("not implemented") == std::string::npos) throw;
    static std::set<std::string> noted;
    if (noted.insert(op).second) {
      std::cerr << "[   NOTE   ] CpuOps " << op << " is not implemented yet: compared with the naive reference only\n";
    }
    return false;
  }
}

}  // namespace dtsim::gpu::testing_support
