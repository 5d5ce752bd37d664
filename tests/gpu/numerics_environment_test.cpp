// The pinned parts of the numerics (gpu/numerics_environment.hpp): the floating-point environment, Eigen's GEMM
// blocking and the fingerprint that describes them.
#include "gpu/numerics_environment.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>
#include <xmmintrin.h>

#include "gpu/cpu_ops.hpp"

namespace dtsim::gpu {
namespace {

TEST(NumericsEnvironment, PinClearsFlushToZeroAndDenormalsAreZeroAndSubnormalsSurvive) {
  _mm_setcsr(_mm_getcsr() | (1u << 15) | (1u << 6));  // what a library built with -ffast-math does at load
  volatile double tiny = 1e-310;
  EXPECT_EQ(tiny * 0.5, 0.0) << "flush-to-zero should be in force before the pin";
  const FloatingPointEnvironment found = pin_floating_point_environment();
  EXPECT_TRUE(found.flush_to_zero);
  EXPECT_TRUE(found.denormals_are_zero);
  EXPECT_FALSE(found.is_ieee_default());
  EXPECT_EQ(describe(found), "flush-to-zero, denormals-are-zero");
  EXPECT_TRUE(current_floating_point_environment().is_ieee_default());
  EXPECT_EQ(tiny * 0.5, 5e-311);
  volatile float tiny_float = 1e-40f;
  EXPECT_GT(tiny_float * 0.5f, 0.0f);
}

TEST(NumericsEnvironment, PinRestoresRoundToNearest) {
  _mm_setcsr((_mm_getcsr() & ~(3u << 13)) | (1u << 13));  // round down
  // 1/10 = 0x3FB999999999999A to nearest; rounded down its last digit is 9.
  volatile double tenth = 1.0;
  tenth = tenth / 10.0;
  const double rounded_down = tenth;
  EXPECT_FALSE(pin_floating_point_environment().round_to_nearest);
  volatile double again = 1.0;
  again = again / 10.0;
  EXPECT_LT(rounded_down, static_cast<double>(again));
  EXPECT_EQ(static_cast<double>(again), 0.1);
}

TEST(NumericsEnvironment, TheFirstGemmPinsEigensCacheSizes) {
  CpuOps<float> ops;
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  ops.gemm(Transpose::No, Transpose::No, 1.0f, {a.data(), 64, 64}, {b.data(), 64, 64}, 0.0f, {c.data(), 64, 64});
  EXPECT_EQ(Eigen::l1CacheSize(), kPinnedGemmBlocking.l1_bytes);
  EXPECT_EQ(Eigen::l2CacheSize(), kPinnedGemmBlocking.l2_bytes);
  EXPECT_EQ(Eigen::l3CacheSize(), kPinnedGemmBlocking.l3_bytes);
  EXPECT_EQ(c[0], 64.0f);
}

TEST(NumericsEnvironment, BlockingDecidesTheRoundingOfALongInnerDimension) {
  // Why the blocking is pinned: the same product accumulated in blocks of another size rounds differently.
  // A 1 × k · k × 1 product with k = 4096 is split by Eigen into inner blocks whose size follows L1.
  const int k = 4096;
  std::vector<float> a(k), b(k);
  for (int i = 0; i < k; ++i) {
    a[static_cast<size_t>(i)] = 1.0f + static_cast<float>(i % 97) * 1e-3f;
    b[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1013) * 1e-4f - 0.05f;
  }
  const auto product = [&](std::ptrdiff_t l1) {
    Eigen::setCpuCacheSizes(l1, kPinnedGemmBlocking.l2_bytes, kPinnedGemmBlocking.l3_bytes);
    Eigen::Matrix<float, 8, Eigen::Dynamic, Eigen::RowMajor> lhs(8, k);
    Eigen::Matrix<float, Eigen::Dynamic, 8> rhs(k, 8);
    for (int r = 0; r < 8; ++r)
      for (int i = 0; i < k; ++i) {
        lhs(r, i) = a[static_cast<size_t>((i + r) % k)];
        rhs(i, r) = b[static_cast<size_t>((i * (r + 1)) % k)];
      }
    Eigen::Matrix<float, 8, 8> out = lhs * rhs;
    return std::vector<float>(out.data(), out.data() + 64);
  };
  const std::vector<float> pinned = product(kPinnedGemmBlocking.l1_bytes);
  const std::vector<float> small_l1 = product(4 * 1024);
  EXPECT_EQ(pinned, product(kPinnedGemmBlocking.l1_bytes)) << "the same blocking must give the same bits";
  EXPECT_NE(pinned, small_l1) << "another L1 size should change the accumulation order";
  Eigen::setCpuCacheSizes(kPinnedGemmBlocking.l1_bytes, kPinnedGemmBlocking.l2_bytes, kPinnedGemmBlocking.l3_bytes);
}

TEST(NumericsFingerprint, NamesTheBuildsLevelAndItsFeatures) {
  const NumericsFingerprint f = numerics_fingerprint("cpu");
  EXPECT_EQ(f.isa_level, DTSIM_ISA_LEVEL_NAME);
  const auto has = [&f](const char* feature) {
    return std::find(f.cpu_features.begin(), f.cpu_features.end(), feature) != f.cpu_features.end();
  };
  if (f.isa_level == "x86-64-v3") {
    for (const char* needed : {"sse4.2", "popcnt", "avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "lzcnt", "movbe"})
      EXPECT_TRUE(has(needed)) << needed;
    EXPECT_FALSE(has("avx512f")) << "a portable v3 build must not use AVX-512";
  }
  if (f.isa_level == "x86-64-v2") {
    EXPECT_FALSE(has("avx"));
  }
  EXPECT_EQ(f.native(), f.isa_level == "native");
  EXPECT_EQ(f.eigen_version, std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                 std::to_string(EIGEN_MINOR_VERSION));
  EXPECT_EQ(f.gemm_blocking.l1_bytes, kPinnedGemmBlocking.l1_bytes);
  EXPECT_EQ(f.backend, "cpu");
}

TEST(NumericsFingerprint, IdIsSixteenHexDigitsStableAndChangesWithEveryField) {
  const NumericsFingerprint f = numerics_fingerprint("cpu");
  const std::string id = f.id();
  ASSERT_EQ(id.size(), 16u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(id, numerics_fingerprint("cpu").id());
  std::vector<NumericsFingerprint> changed(8, f);
  changed[0].isa_level = "native";
  changed[1].cpu_features.push_back("avx512f");
  changed[2].compiler += "x";
  changed[3].eigen_version = "3.4.1";
  changed[4].gemm_blocking.l1_bytes *= 2;
  changed[5].elementary_functions = "glibc";
  changed[6].floating_point = "flush-to-zero";
  changed[7].backend = "cuda (NVIDIA H100)";
  for (const NumericsFingerprint& c : changed) EXPECT_NE(c.id(), id);
}

}  // namespace
}  // namespace dtsim::gpu
