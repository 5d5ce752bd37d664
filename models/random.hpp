// Deterministic random streams. Every stream is derived from (scenario seed, purpose, id), so the values an
// actor draws never depend on the order in which the simulator happens to schedule actors. The generators
// and the distributions are written out here rather than taken from <random>, whose distributions are
// implementation-defined: the same seed must give the same run with any standard library.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace dtsim::models {

// splitmix64 finaliser: a bijective mix with good avalanche, used to combine seeds.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Seed of the stream for `purpose` (e.g. "data-order") and `id` (e.g. an epoch or a worker rank).
uint64_t derive_seed(uint64_t seed, std::string_view purpose, uint64_t id = 0);

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  Rng(uint64_t seed, std::string_view purpose, uint64_t id = 0) : Rng(derive_seed(seed, purpose, id)) {}

  uint64_t next_u64();
  double uniform();                           // [0, 1) with 53 random bits
  double uniform(double lo, double hi);       // [lo, hi)
  uint64_t below(uint64_t n);                 // uniform integer in [0, n), unbiased (Lemire's method)
  double normal();                            // standard normal (Box–Muller, both values used)
  double lognormal(double log_mean, double log_sd);  // exp(log_mean + log_sd · normal()), as numpy's lognormal

  // Gamma(shape, scale 1), shape > 0: Marsaglia & Tsang (2000) squeeze-and-reject for shape >= 1; for shape < 1
  // their boost Gamma(shape) = Gamma(shape + 1) · U^(1/shape). Very small shapes can underflow to 0 (the
  // true value is below the smallest double); dirichlet() below does not suffer from this.
  double gamma(double shape);
  // One draw from Dirichlet(concentration), every entry > 0: normalised Gamma(concentration_i) draws. The
  // draws are combined in log space, so that tiny concentrations (0.001) still give a finite vector that sums
  // to 1 instead of 0/0.
  std::vector<double> dirichlet(const std::vector<double>& concentration);

  template <class T>
  void shuffle(std::vector<T>& v) {  // Fisher–Yates
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace dtsim::models
