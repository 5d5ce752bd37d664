// dtsim's elementary functions (gpu/portable_math.hpp) against the C library's long double versions, an
// independent implementation with 11 more bits, over the domains dtsim uses; and C99 Annex F's special values.
// The bounds are what each function was measured to reach on a million points, rounded up: they say how far a
// result may be from the true value, not how close to glibc's (which is not the goal).
#include "gpu/portable_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

namespace dtsim::portable {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// |value − reference| in units of the last place of the reference rounded to double.
double ulps_from(double value, long double reference) {
  const double r = static_cast<double>(reference);
  if (std::isnan(r)) return std::isnan(value) ? 0.0 : kInf;
  if (value == r) return 0.0;
  double unit = std::nextafter(std::fabs(r), kInf) - std::fabs(r);
  if (r == 0.0) unit = std::numeric_limits<double>::denorm_min();
  return static_cast<double>(std::fabs(static_cast<long double>(value) - reference) / unit);
}

struct Domain {
  double low, high;
  bool logarithmic = false;
};

// The largest error over `points` draws from the domain (a fixed stream, so a failure repeats).
double worst_ulps(const std::function<double(double)>& f, const std::function<long double(long double)>& reference,
                  Domain d, int points = 200000) {
  std::mt19937_64 rng(7);
  double worst = 0.0;
  for (int i = 0; i < points; ++i) {
    const double u = static_cast<double>(rng() >> 11) * 0x1p-53;
    const double x = d.logarithmic ? std::exp(std::log(d.low) + u * (std::log(d.high) - std::log(d.low)))
                                   : d.low + u * (d.high - d.low);
    worst = std::max(worst, ulps_from(f(x), reference(x)));
  }
  return worst;
}

TEST(PortableMath, ExpIsWithinOneUlpFromUnderflowToOverflow) {
  EXPECT_LE(worst_ulps(portable::exp, [](long double x) { return expl(x); }, {-708.0, 709.7}), 1.0);
  EXPECT_LE(worst_ulps(portable::exp, [](long double x) { return expl(x); }, {-1.0, 1.0}), 1.0);
}

TEST(PortableMath, Expm1KeepsItsRelativeAccuracyNearZero) {
  EXPECT_LE(worst_ulps(portable::expm1, [](long double x) { return expm1l(x); }, {-1.0, 1.0}), 4.0);
  EXPECT_LE(worst_ulps(portable::expm1, [](long double x) { return expm1l(x); }, {1e-12, 1e-3, true}), 2.0);
  EXPECT_LE(worst_ulps(portable::expm1, [](long double x) { return expm1l(x); }, {-40.0, 700.0}), 4.0);
}

TEST(PortableMath, LogIsWithinOneAndAHalfUlpsOverTheWholeRange) {
  EXPECT_LE(worst_ulps(portable::log, [](long double x) { return logl(x); }, {1e-300, 1e300, true}), 1.5);
  EXPECT_LE(worst_ulps(portable::log, [](long double x) { return logl(x); }, {0.5, 2.0}), 1.5);
  // Subnormal inputs are scaled into the normal range first.
  const double smallest = std::numeric_limits<double>::denorm_min();
  EXPECT_LE(ulps_from(portable::log(smallest), logl(static_cast<long double>(smallest))), 1.0);
  EXPECT_LE(ulps_from(portable::log(3 * smallest), logl(3 * static_cast<long double>(smallest))), 1.0);
}

TEST(PortableMath, Log1pKeepsItsRelativeAccuracyNearZero) {
  EXPECT_LE(worst_ulps(portable::log1p, [](long double x) { return log1pl(x); }, {-0.999, 1.0}), 3.0);
  EXPECT_LE(worst_ulps(portable::log1p, [](long double x) { return log1pl(x); }, {1e-15, 1e-3, true}), 3.0);
  EXPECT_LE(worst_ulps(portable::log1p, [](long double x) { return log1pl(x); }, {1.0, 1e300, true}), 3.0);
}

TEST(PortableMath, SinAndCosAreWithinTwoUlpsForTheAnglesDtsimUses) {
  EXPECT_LE(worst_ulps(portable::sin, [](long double x) { return sinl(x); }, {-100.0, 100.0}), 2.0);
  EXPECT_LE(worst_ulps(portable::cos, [](long double x) { return cosl(x); }, {-100.0, 100.0}), 2.0);
  EXPECT_LE(worst_ulps(portable::sin, [](long double x) { return sinl(x); }, {0.0, 2 * M_PI}), 2.0);
  EXPECT_LE(worst_ulps(portable::cos, [](long double x) { return cosl(x); }, {0.0, M_PI}), 2.0);
}

TEST(PortableMath, TanhIsWithinThreeUlps) {
  EXPECT_LE(worst_ulps(portable::tanh, [](long double x) { return tanhl(x); }, {-25.0, 25.0}), 3.0);
  EXPECT_LE(worst_ulps(portable::tanh, [](long double x) { return tanhl(x); }, {1e-10, 0.5, true}), 3.0);
}

TEST(PortableMath, ErfIsWithinFiveUlpsOnEitherSideOfItsSwitchFromSeriesToContinuedFraction) {
  EXPECT_LE(worst_ulps(portable::erf, [](long double x) { return erfl(x); }, {-7.0, 7.0}), 5.0);
  EXPECT_LE(worst_ulps(portable::erf, [](long double x) { return erfl(x); }, {1.4, 1.6}), 5.0);
  EXPECT_LE(worst_ulps(portable::erf, [](long double x) { return erfl(x); }, {1e-12, 1e-2, true}), 3.0);
}

TEST(PortableMath, PowIsExactForSmallIntegerPowersAndCloseOtherwise) {
  EXPECT_EQ(portable::pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(portable::pow(0.5, 3.0), 0.125);
  EXPECT_EQ(portable::pow(3.0, 2.0), 9.0);
  EXPECT_EQ(portable::pow(2.0, -2.0), 0.25);
  EXPECT_EQ(portable::pow(-2.0, 3.0), -8.0);
  // Larger integer powers of a negative base go through exp and log with the sign of the power's parity.
  EXPECT_LE(ulps_from(portable::pow(-2.0, 100.0), 0x1p100L), 80.0);
  EXPECT_LE(ulps_from(portable::pow(-2.0, 101.0), -0x1p101L), 80.0);
  EXPECT_LT(portable::pow(-2.0, 101.0), 0.0);
  std::mt19937_64 rng(3);
  double worst = 0.0;
  for (int i = 0; i < 200000; ++i) {
    const double x = 1e-3 + static_cast<double>(rng() >> 11) * 0x1p-53 * 100.0;
    const double y = -3.0 + static_cast<double>(rng() >> 11) * 0x1p-53 * 6.0;
    worst = std::max(worst, ulps_from(portable::pow(x, y), powl(x, y)));
  }
  EXPECT_LE(worst, 25.0);  // the error grows with |y · log x| (up to 14 here)
  // Adam's bias correction 1 − β^t at large t: a relative 1e-12 of β^t is far below what it corrects.
  EXPECT_LE(ulps_from(portable::pow(0.999, 10000.0), powl(0.999L, 10000.0L)), 200.0);
}

TEST(PortableMath, SpecialValuesFollowAnnexF) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& f : std::vector<std::function<double(double)>>{portable::exp, portable::expm1, portable::log,
                                                                   portable::log1p, portable::sin, portable::cos,
                                                                   portable::tanh, portable::erf})
    EXPECT_TRUE(std::isnan(f(nan)));
  EXPECT_EQ(portable::exp(0.0), 1.0);
  EXPECT_EQ(portable::exp(-0.0), 1.0);
  EXPECT_EQ(portable::exp(kInf), kInf);
  EXPECT_EQ(portable::exp(-kInf), 0.0);
  EXPECT_EQ(portable::exp(710.0), kInf);
  EXPECT_EQ(portable::exp(-746.0), 0.0);
  EXPECT_GT(portable::exp(-744.0), 0.0);  // a subnormal result, not flushed
  EXPECT_EQ(portable::log(1.0), 0.0);
  EXPECT_EQ(portable::log(0.0), -kInf);
  EXPECT_EQ(portable::log(-0.0), -kInf);
  EXPECT_TRUE(std::isnan(portable::log(-1.0)));
  EXPECT_EQ(portable::log(kInf), kInf);
  EXPECT_EQ(portable::log1p(-1.0), -kInf);
  EXPECT_TRUE(std::isnan(portable::log1p(-2.0)));
  EXPECT_EQ(portable::expm1(-kInf), -1.0);
  for (const auto& odd : std::vector<std::function<double(double)>>{portable::expm1, portable::log1p, portable::sin,
                                                                     portable::tanh, portable::erf}) {
    EXPECT_EQ(odd(0.0), 0.0);
    EXPECT_TRUE(std::signbit(odd(-0.0)));  // −0 stays −0
  }
  EXPECT_EQ(portable::cos(0.0), 1.0);
  EXPECT_TRUE(std::isnan(portable::sin(kInf)));
  EXPECT_TRUE(std::isnan(portable::cos(-kInf)));
  EXPECT_EQ(portable::tanh(kInf), 1.0);
  EXPECT_EQ(portable::tanh(-kInf), -1.0);
  EXPECT_EQ(portable::erf(kInf), 1.0);
  EXPECT_EQ(portable::erf(-kInf), -1.0);
  EXPECT_EQ(portable::pow(nan, 0.0), 1.0);
  EXPECT_EQ(portable::pow(1.0, nan), 1.0);
  EXPECT_TRUE(std::isnan(portable::pow(-2.0, 0.5)));
  EXPECT_EQ(portable::pow(0.0, 2.5), 0.0);
  EXPECT_EQ(portable::pow(0.0, -2.5), kInf);
  EXPECT_EQ(portable::pow(0.5, kInf), 0.0);
  EXPECT_EQ(portable::pow(2.0, kInf), kInf);
}

TEST(PortableMath, ResultsDoNotDependOnTheCallingOrder) {
  // No hidden state: the same input gives the same bits before and after other calls.
  const double first = portable::erf(0.7) + portable::exp(-3.25) + portable::sin(5.5);
  for (int i = 0; i < 1000; ++i) portable::log(1.0 + i);
  EXPECT_EQ(first, portable::erf(0.7) + portable::exp(-3.25) + portable::sin(5.5));
}

}  // namespace
}  // namespace dtsim::portable
