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
