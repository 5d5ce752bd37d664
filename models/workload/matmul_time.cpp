#include "models/workload/matmul_time.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dtsim::models {
namespace {

constexpr int kSmallestTileSide = 64;
// Split-K gives each SM at least this much of k: below it the partial sums cost more than they save.
constexpr double kSmallestSplitK = 256;

// The halvings of `side` down to the smallest tile side, largest first.
std::vector<int> halvings(int side) {
  std::vector<int> sides;
  for (int s = side; s >= kSmallestTileSide; s /= 2) sides.push_back(s);
  return sides;
}

// Operand reuse of a tile: the FLOPs per element it loads per step of k (2 tm tn against tm + tn).
double reuse(double tm, double tn) { return tm * tn / (tm + tn); }

ProductTime with_tile(const ProductShape& p, double e, const MatmulUnit& u, int tm, int tn, int split) {
  ProductTime t;
  t.tile_m = tm;
  t.tile_n = tn;
  t.split_k = split;
  t.tiles = std::ceil(p.m / tm) * std::ceil(p.n / tn) * split * p.count;
  t.waves = std::ceil(t.tiles / u.multiprocessors);
  // A library's largest tile is the one that keeps an SM's tensor cores fed; a smaller tile loads more operand
  // bytes per FLOP, and its SM runs slower in proportion to the lost reuse.
  const double feed = std::min(1.0, reuse(tm, tn) / reuse(u.tile_m, u.tile_n));
  const double per_sm_flops = feed * u.large_product_flops / u.multiprocessors;
  t.compute_seconds = t.waves * 2.0 * tm * tn * std::ceil(p.k / split) / per_sm_flops;
  if (u.memory_bandwidth > 0) {
    double bytes = e * (p.m * p.k + p.k * p.n + p.m * p.n) * p.count;
    if (split > 1) bytes += 2.0 * 4.0 * split * p.m * p.n * p.count;  // fp32 partial sums written, then added
    t.memory_seconds = bytes / u.memory_bandwidth;
  }
  t.seconds = std::max(t.compute_seconds, t.memory_seconds);
  t.utilisation = t.seconds > 0 ? p.flops() / (t.seconds * u.large_product_flops) : 0;
  return t;
}

}  // namespace

ProductTime product_time(const ProductShape& p, double element_bytes, const MatmulUnit& u) {
  if (!u.enabled() || !(u.large_product_flops > 0) || !(u.memory_bandwidth >= 0))
    throw std::invalid_argument("a matrix unit needs SMs, a positive rate and a bandwidth not below 0");
  if (!(p.m >= 0 && p.n >= 0 && p.k >= 0 && p.count >= 0))
    throw std::invalid_argument("a product's sides and count must not be negative");
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.count == 0) return {};
  ProductTime best;
  bool first = true;
  // The profile's tile first, so that a tie keeps it.
  for (const int a : halvings(u.tile_m))
    for (const int b : halvings(u.tile_n))
      for (const bool transposed : {false, true}) {
        const int tm = transposed ? b : a, tn = transposed ? a : b;
        const double work = std::ceil(p.m / tm) * std::ceil(p.n / tn) * p.count;
        // Split k only while there are SMs left idle, each slice keeping a useful length of k.
        const int most = work >= u.multiprocessors
                             ? 1
                             : static_cast<int>(std::max(1.0, std::min(std::floor(u.multiprocessors / work),
                                                                       std::floor(p.k / kSmallestSplitK))));
        for (int split = 1; split <= most; split *= 2) {
          const ProductTime t = with_tile(p, element_bytes, u, tm, tn, split);
          if (first || t.seconds < best.seconds) best = t;  // ties keep the earlier: the larger tile, no split
          first = false;
        }
      }
  return best;
}

TileSize parse_tile(const std::string& text) {
  const auto x = text.find('x');
  auto side = [&](const std::string& s) {
    if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("'" + text + "' is not a tile such as 128x256 (rows x columns)");
    const int v = std::stoi(s);
    if (v < kSmallestTileSide || v > 512 || v % 16 != 0)
      throw std::invalid_argument("tile side " + s + " must be a multiple of 16 from 64 to 512");
    return v;
  };
  if (x == std::string::npos) throw std::invalid_argument("'" + text + "' is not a tile such as 128x256 (rows x columns)");
  return {side(text.substr(0, x)), side(text.substr(x + 1))};
}

}  // namespace dtsim::models
