// Compiled with -ffp-contract=off (gpu/CMakeLists.txt): every line below rounds where it is written, whatever
// instruction-set level the rest of the build targets, so these functions give the same bits in every build.
#include "gpu/portable_math.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

namespace dtsim::portable {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ln 2 split so that k · kLn2High is exact for |k| < 2^11 (kLn2High has 32 significant bits); the two parts
// sum to ln 2 to about 1e-27.
constexpr double kLn2High = 6.93147180369123816490e-01;
constexpr double kLn2Low = 1.90821492927058770002e-10;
constexpr double kLog2e = 1.44269504088896338700e+00;
constexpr double kSqrt2 = 1.41421356237309514547e+00;
// π/2 in three parts of 33 significant bits each, so that k · part is exact for |k| < 2^20.
constexpr double kHalfPi1 = 1.57079632673412561417e+00;
constexpr double kHalfPi2 = 6.07710050630396597660e-11;
constexpr double kHalfPi3 = 2.02226624879595063154e-21;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;
constexpr double kTwoOverSqrtPi = 1.12837916709551255856e+00;
constexpr double kOneOverSqrtPi = 5.64189583547756279280e-01;

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double double_of(uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

double magnitude(double x) { return double_of(bits_of(x) & ~(uint64_t{1} << 63)); }
bool is_nan(double x) { return x != x; }
double with_sign_of(double magnitude_value, double sign_source) {
  return double_of((bits_of(magnitude_value) & ~(uint64_t{1} << 63)) | (bits_of(sign_source) & (uint64_t{1} << 63)));
}

// 2^k for a normal exponent, built from its bits (exact).
double power_of_two(int k) { return double_of(static_cast<uint64_t>(k + 1023) << 52); }

// y · 2^k with one rounding at most (only where the result is subnormal), for y in [0.5, 2] and k in
// [−1100, 1100].
double scale_by_power_of_two(double y, int k) {
  if (k > 1023) return y * power_of_two(1023) * power_of_two(k - 1023);
  if (k < -1022) return y * power_of_two(k + 54) * power_of_two(-54);
  return y * power_of_two(k);
}

// The nearest integer to x (halves away from zero), as a double; |x| < 2^52.
double nearest_integer(double x) {
  const double shifted = x < 0 ? x - 0.5 : x + 0.5;
  return static_cast<double>(static_cast<int64_t>(shifted));
}

// 1/n! for n = 0 … 19, each the correctly rounded quotient of exact integers (n! < 2^53 up to 18!).
constexpr double inverse_factorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i) f *= i;
  return 1.0 / f;
}

// Σ_{n=2}^{last} r^(n−2)/n!, by Horner's rule from the highest term.
double exp_tail(double r, int last) {
  double p = inverse_factorial(last);
  for (int n = last - 1; n >= 2; --n) p = p * r + inverse_factorial(n);
  return p;
}

// Splits x into k · ln 2 + r with |r| ≤ ln 2 / 2 (plus rounding); k is returned, r through `reduced`.
int reduce_by_ln2(double x, double& reduced) {
  const double k = nearest_integer(x * kLog2e);
  reduced = (x - k * kLn2High) - k * kLn2Low;
  return static_cast<int>(k);
}

// log(1 + f) for f = m − 1 with m in [√½, √2]: with s = f / (2 + f), log(1 + f) = 2 atanh(s)
// = f − (f²/2 − s·(f²/2 + R)) where R = Σ_{n≥1} 2 s^(2n) / (2n + 1); |s| ≤ 0.1716, so 12 terms leave
// less than 1e-19.
double log_of_reduced(double f) {
  const double s = f / (2.0 + f);
  const double z = s * s;
  double series = 2.0 / 25.0;
  for (int n = 11; n >= 1; --n) series = series * z + 2.0 / (2 * n + 1);
  const double r = z * series;
  const double half_f_squared = 0.5 * f * f;
  return f - (half_f_squared - s * (half_f_squared + r));
}

// sin and cos of r for |r| ≤ π/4 (Taylor series to r^17 and r^18: the next terms are below 1e-19).
double sin_kernel(double r) {
  const double z = r * r;
  double p = -inverse_factorial(19);
  for (int n = 8; n >= 1; --n) p = p * z + ((n % 2) ? -inverse_factorial(2 * n + 1) : inverse_factorial(2 * n + 1));
  return r + r * z * p;
}

double cos_kernel(double r) {
  const double z = r * r;
  double p = inverse_factorial(20);
  for (int n = 9; n >= 2; --n) p = p * z + ((n % 2) ? -inverse_factorial(2 * n) : inverse_factorial(2 * n));
  const double half_z = 0.5 * z;
  return 1.0 - (half_z - z * z * p);
}

// x = k·π/2 + r with |r| ≤ π/4; returns k mod 4 and r. |x| ≤ 2^60, so that k fits an int64_t.
int reduce_by_half_pi(double x, double& reduced) {
  const double k = nearest_integer(x * kTwoOverPi);
  reduced = ((x - k * kHalfPi1) - k * kHalfPi2) - k * kHalfPi3;
  return static_cast<int>(static_cast<int64_t>(k) & 3);  // two's complement: −1 & 3 = 3, as −1 ≡ 3 (mod 4)
}

// x² as an unevaluated sum hi + lo, exactly (Dekker's product with Veltkamp's split; needs no fused
// multiply-add, which this file never uses).
void exact_square(double x, double& hi, double& lo) {
  const double split = 134217729.0 * x;  // 2^27 + 1
  const double x_hi = split - (split - x);
  const double x_lo = x - x_hi;
  hi = x * x;
  lo = ((x_hi * x_hi - hi) + 2.0 * x_hi * x_lo) + x_lo * x_lo;
}

// (−1)^n / (n! (2n + 1)), the coefficients of erf's Maclaurin series in a², for n = 0 … 33.
constexpr double erf_coefficient(int n) {
  double factorial = 1.0;
  for (int i = 2; i <= n; ++i) factorial *= i;  // exact up to 18!, correctly rounded above
  return ((n % 2) ? -1.0 : 1.0) / (factorial * (2 * n + 1));
}

// erf(a) for 0 ≤ a < 1.5: (2/√π) Σ_{n≥0} (−1)^n a^(2n+1) / (n! (2n + 1)) by Horner's rule in a², terms 0 … last.
// At a = 1.5 the largest term is 0.5 against a sum of 0.86, so the alternation costs about one bit; 34 terms
// leave less than 1e-19 there, 10 terms below a = 1/4.
double erf_maclaurin(double a, int last) {
  const double z = a * a;
  double p = erf_coefficient(last);
  for (int n = last - 1; n >= 0; --n) p = p * z + erf_coefficient(n);
  return kTwoOverSqrtPi * (a * p);
}

// e^(−x²) for x ≥ 0, with x² carried exactly so that large x lose nothing to its rounding.
double gaussian(double x) {
  double hi, lo;
  exact_square(x, hi, lo);
  return exp(-hi) * (1.0 - lo);
}

// erfc(a) for a ≥ 1.5 from its continued fraction e^(−a²)/√π · 1/(a + ½/(a + 1/(a + (3/2)/(a + …)))),
// evaluated from a fixed depth upwards: 100 levels leave 1.5e-17 relative at a = 1.5, where it converges
// slowest, and 60 leave 1.8e-17 at a = 2 (against erfc in long double).
double erfc_continued_fraction(double a) {
  double tail = a;
  for (int n = a < 2.0 ? 100 : 60; n >= 1; --n) tail = a + (0.5 * n) / tail;
  return kOneOverSqrtPi * gaussian(a) / tail;
}

// erf(a) for a ≥ 0 by the slow, direct methods above: the table below is built from it.
double erf_direct(double a) { return a < 1.5 ? erf_maclaurin(a, 33) : 1.0 - erfc_continued_fraction(a); }

// erf on [1/4, 6) as Taylor polynomials of degree kErfDegree around the centres of intervals 1/16 wide, built
// once from erf_direct. The derivatives are erf⁽ⁿ⁾(c) = (2/√π) (−1)ⁿ⁻¹ Hₙ₋₁(c) e^(−c²) (Hermite polynomials,
// from their recurrence); with |h| ≤ 1/32 the first term left out is below 1e-19. Evaluating one interval's
// polynomial costs a dozen multiply-adds, where the direct methods cost up to 100 divisions (GELU calls erf
// for every activation, forward and backward).
constexpr int kErfDegree = 12;
constexpr int kErfIntervalsPerUnit = 16;
constexpr double kErfTableStart = 0.25;
constexpr double kErfTableEnd = 6.0;
constexpr int kErfIntervals = static_cast<int>(kErfTableEnd * kErfIntervalsPerUnit);

struct ErfTable {
  double coefficients[kErfIntervals][kErfDegree + 1];
  ErfTable() {
    for (int k = 0; k < kErfIntervals; ++k) {
      const double c = (k + 0.5) / kErfIntervalsPerUnit;
      double* coefficient = coefficients[k];
      coefficient[0] = erf_direct(c);
      const double scale = kTwoOverSqrtPi * gaussian(c);
      double hermite = 1.0, hermite_before = 0.0;  // Hₙ₋₁ and Hₙ₋₂, starting at n = 1
      double factorial = 1.0;
      for (int n = 1; n <= kErfDegree; ++n) {
        factorial *= n;
        coefficient[n] = ((n % 2) ? 1.0 : -1.0) * scale * hermite / factorial;
        const double next = 2.0 * c * hermite - 2.0 * (n - 1) * hermite_before;  // Hₙ = 2c Hₙ₋₁ − 2(n−1) Hₙ₋₂
        hermite_before = hermite;
        hermite = next;
      }
    }
  }
};

double erf_from_table(double a) {
  static const ErfTable table;
  const int k = static_cast<int>(a * kErfIntervalsPerUnit);
  const double h = a - (k + 0.5) / kErfIntervalsPerUnit;
  const double* coefficient = table.coefficients[k];
  double p = coefficient[kErfDegree];
  for (int n = kErfDegree - 1; n >= 0; --n) p = p * h + coefficient[n];
  return p;
}

}  // namespace

double exp(double x) {
  if (is_nan(x)) return x;
  if (x > 7.09782712893383973096e+02) return kInfinity;
  if (x < -7.45133219101941108420e+02) return 0.0;
  if (magnitude(x) < 0x1p-54) return 1.0 + x;
  double r;
  const int k = reduce_by_ln2(x, r);
  return scale_by_power_of_two(1.0 + (r + r * r * exp_tail(r, 13)), k);
}

double expm1(double x) {
  if (is_nan(x) || x == 0.0) return x;
  if (x > 7.09782712893383973096e+02) return kInfinity;
  if (x < -38.0) return -1.0;  // e^x is below half an ulp of 1
  if (magnitude(x) <= 0.5 * kLn2High) return x + x * x * exp_tail(x, 15);
  return exp(x) - 1.0;
}

double log(double x) {
  if (is_nan(x)) return x;
  if (x < 0.0) return kNaN;
  if (x == 0.0) return -kInfinity;
  if (x == kInfinity) return x;
  int exponent = 0;
  if (x < std::numeric_limits<double>::min()) {  // subnormal: make it normal first
    x *= 0x1p54;
    exponent = -54;
  }
  const uint64_t b = bits_of(x);
  exponent += static_cast<int>((b >> 52) & 0x7ff) - 1023;
  double m = double_of((b & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));  // in [1, 2)
  if (m > kSqrt2) {
    m *= 0.5;
    ++exponent;
  }
  const double k = exponent;
  return k * kLn2High + (log_of_reduced(m - 1.0) + k * kLn2Low);
}

double log1p(double x) {
  if (is_nan(x)) return x;
  if (x < -1.0) return kNaN;
  if (x == -1.0) return -kInfinity;
  if (magnitude(x) < 0x1p-54) return x;
  if (x > 0x1p53) return log(x);  // 1 + x rounds to x
  const double u = 1.0 + x;
  // log(u) is exact for the rounded u; x / (u − 1) corrects for the rounding of 1 + x (Goldberg's trick).
  return log(u) * (x / (u - 1.0));
}

double pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (is_nan(x) || is_nan(y)) return kNaN;
  // A small integer power by repeated squaring: exact where the powers are representable (2^10, 0.5^3, 3^2).
  // Squaring doubles a relative error, so larger powers go through exp and log instead.
  if (magnitude(y) <= 64.0 && static_cast<double>(static_cast<int>(y)) == y) {
    unsigned n = static_cast<unsigned>(magnitude(y));
    double result = 1.0, base = x;
    for (;;) {
      if (n & 1) result *= base;
      n >>= 1;
      if (n == 0) break;
      base *= base;
    }
    return y < 0 ? 1.0 / result : result;
  }
  const bool odd_integer_power = magnitude(y) < 0x1p53 && static_cast<double>(static_cast<int64_t>(y)) == y &&
                                 (static_cast<int64_t>(y) & 1) != 0;
  const bool integer_power = magnitude(y) >= 0x1p53 || static_cast<double>(static_cast<int64_t>(y)) == y;
  if (x < 0.0) {  // (−x)^y with the sign of an odd power; a non-integer power of a negative number is NaN
    if (!integer_power) return kNaN;
    const double positive = pow(-x, y);
    return odd_integer_power ? -positive : positive;
  }
  if (x == 0.0) return y > 0 ? 0.0 : kInfinity;
  if (x == kInfinity) return y > 0 ? kInfinity : 0.0;
  if (y == kInfinity) return x > 1.0 ? kInfinity : 0.0;
  if (y == -kInfinity) return x > 1.0 ? 0.0 : kInfinity;
  return exp(y * log(x));
}

// Beyond 2^60 the reduction would need more of π than three parts hold; no such angle occurs in dtsim, so
// sin and cos return NaN there rather than a value that only looks meaningful.
constexpr double kLargestAngle = 0x1p60;

double sin(double x) {
  if (is_nan(x) || magnitude(x) > kLargestAngle) return kNaN;
  if (magnitude(x) < 0x1p-27) return x;  // sin x = x to within half an ulp (and keeps −0)
  double r;
  switch (reduce_by_half_pi(x, r)) {
    case 0: return sin_kernel(r);
    case 1: return cos_kernel(r);
    case 2: return -sin_kernel(r);
    default: return -cos_kernel(r);
  }
}

double cos(double x) {
  if (is_nan(x) || magnitude(x) > kLargestAngle) return kNaN;
  double r;
  switch (reduce_by_half_pi(x, r)) {
    case 0: return cos_kernel(r);
    case 1: return -sin_kernel(r);
    case 2: return -cos_kernel(r);
    default: return sin_kernel(r);
  }
}

double tanh(double x) {
  if (is_nan(x) || x == 0.0) return x;
  const double a = magnitude(x);
  if (a > 22.0) return with_sign_of(1.0, x);  // 1 − tanh(22) is below half an ulp of 1
  // tanh a = (e^(2a) − 1) / (e^(2a) + 1), with expm1 so that small a keep their relative accuracy.
  const double e = expm1(2.0 * a);
  return with_sign_of(e / (e + 2.0), x);
}

double erf(double x) {
  if (is_nan(x) || x == 0.0) return x;
  const double a = magnitude(x);
  if (a >= 6.0) return with_sign_of(1.0, x);  // erfc(6) ≈ 2e-17 is below half an ulp of 1
  const double value = a < kErfTableStart ? erf_maclaurin(a, 9) : erf_from_table(a);
  return with_sign_of(value, x);
}

}  // namespace dtsim::portable
