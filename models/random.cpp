#include "random.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpu/portable_math.hpp"

namespace dtsim::models {

uint64_t derive_seed(uint64_t seed, std::string_view purpose, uint64_t id) {
  // FNV-1a over the purpose string, then mixed with the seed and the id.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : purpose) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return mix64(mix64(seed ^ mix64(h)) ^ mix64(id + 0x632be59bd9b4e019ULL));
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    s = mix64(x);
  }
}

uint64_t Rng::next_u64() {
  const auto rotl = [](uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

uint64_t Rng::below(uint64_t n) {
  // Lemire's nearly-divisionless method: multiply-high, reject the small biased zone.
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();  // log(0) is not allowed
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * portable::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * portable::sin(theta);
  has_spare_ = true;
  return r * portable::cos(theta);
}

}  // namespace dtsim::models

namespace dtsim::models {
namespace {

// Marsaglia & Tsang, "A simple method for generating gamma variables" (ACM TOMS 2000), for shape >= 1:
// with d = shape − 1/3 and c = 1/√(9d), d·(1 + c·Z)³ is accepted with the exact Gamma density after a cheap
// squeeze test, so the expected number of normal draws stays below 1.05 for every shape >= 1.
double marsaglia_tsang(Rng& rng, double shape) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double z = rng.normal();
    double v = 1.0 + c * z;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1.0 - 0.0331 * (z * z) * (z * z)) return d * v;
    if (u > 0.0 && portable::log(u) < 0.5 * z * z + d * (1.0 - v + portable::log(v))) return d * v;
  }
}

// U in (0, 1]: the boost raises U to the power 1/shape and takes its log, neither of which may see 0.
double uniform_open_at_zero(Rng& rng) { return 1.0 - rng.uniform(); }

void require_positive_shape(double shape) {
  if (!(shape > 0.0) || !std::isfinite(shape))
    throw std::invalid_argument("gamma shape and Dirichlet concentrations must be finite and > 0");
}

}  // namespace

double Rng::lognormal(double log_mean, double log_sd) { return portable::exp(log_mean + log_sd * normal()); }

double Rng::gamma(double shape) {
  require_positive_shape(shape);
  if (shape >= 1.0) return marsaglia_tsang(*this, shape);
  const double boosted = marsaglia_tsang(*this, shape + 1.0);
  return boosted * portable::pow(uniform_open_at_zero(*this), 1.0 / shape);
}

std::vector<double> Rng::dirichlet(const std::vector<double>& concentration) {
  if (concentration.empty()) throw std::invalid_argument("Dirichlet needs at least one concentration");
  // Same draws, in the same order, as gamma(); only the arithmetic moves to log space.
  std::vector<double> log_draw(concentration.size());
  for (size_t i = 0; i < concentration.size(); ++i) {
    const double shape = concentration[i];
    require_positive_shape(shape);
    if (shape >= 1.0) {
      log_draw[i] = portable::log(marsaglia_tsang(*this, shape));
    } else {
      const double boosted = marsaglia_tsang(*this, shape + 1.0);
      log_draw[i] = portable::log(boosted) + portable::log(uniform_open_at_zero(*this)) / shape;
    }
  }
  const double largest = *std::max_element(log_draw.begin(), log_draw.end());
  double total = 0.0;
  for (double& x : log_draw) {
    x = portable::exp(x - largest);  // the largest becomes 1, so the total is in [1, n] and never 0
    total += x;
  }
  for (double& x : log_draw) x /= total;
  return log_draw;
}

}  // namespace dtsim::models
