// The time of one matrix product on a GPU from its shape, not from its FLOPs alone.
//
// A GEMM kernel cuts its m × n output into tiles; each streaming multiprocessor (SM) computes one tile at a
// time, walking the whole k dimension. The tiles run in waves of `multiprocessors`; a last wave that fills
// only part of the GPU still takes a whole tile's time (wave quantisation), and a dimension that is not a
// multiple of the tile is padded (tile quantisation). A large product reaches the GPU's achievable rate
// (`large_product_flops`, measured on big square products); a small or skinny one falls off because its
// tiles are padded, because it leaves SMs idle, or because it is bound by the memory traffic of its operands.
//
// Like a library's heuristics the model picks, for each product, the fastest of a set of tiles (the largest
// and its halvings down to 64 × 64) and, when there are fewer tiles than SMs, splits k over several SMs
// (split-K), which then pay for writing and adding their partial sums. The largest tile is taken to be the one
// that just keeps an SM's tensor cores fed; a smaller tile reuses each loaded operand element fewer times
// (tm tn / (tm + tn) FLOPs per element and k step), and its SM runs slower in that proportion. No constant is
// fitted: docs/workloads.md measures the model against published product timings.
//
// Pure arithmetic, no simulated time: models/workload/compute_time.cpp charges it per layer.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace dtsim::models {

// One GPU's matrix engine as the model sees it.
class AttentionTable;

struct MatmulUnit {
  int multiprocessors = 0;        // SMs; 0 = no model (the roofline's FLOPs / rate is used instead)
  int tile_m = 128, tile_n = 256;  // the largest output tile a GEMM kernel uses
  double large_product_flops = 0;  // FLOP/s that large square products reach at the run's data type
  double memory_bandwidth = 0;     // bytes/s; 0 = operands cost nothing
  // Measured throughput of the fused attention kernel (FlashAttention) at the run's data type; null = none, and a
  // fused kernel's FLOPs then run at large_product_flops.
  std::shared_ptr<const AttentionTable> attention;
  bool enabled() const { return multiprocessors > 0; }
};

// A product C (m × n) = A (m × k) · B (k × n), `count` of them (a batched product: attention's heads).
struct ProductShape {
  double m = 0, n = 0, k = 0;
  double count = 1;
  double flops() const { return 2 * m * n * k * count; }
};

struct ProductTime {
  double seconds = 0;
  int tile_m = 0, tile_n = 0;
  int split_k = 1;       // how many SMs share each tile's k dimension
  double tiles = 0;      // tiles × split_k × count: the work items scheduled on the SMs
  double waves = 0;      // ceil(work items / SMs)
  double compute_seconds = 0;
  double memory_seconds = 0;
  // The share of the achievable rate this product reaches: FLOPs / (seconds × large_product_flops).
  double utilisation = 0;
};

// The time of one (batched) product whose operands and result are `element_bytes` wide. Throws
// std::invalid_argument for a unit without SMs or rate, or a shape with a negative side.
ProductTime product_time(const ProductShape& shape, double element_bytes, const MatmulUnit& unit);

// "128x256" → {128, 256}; throws std::invalid_argument naming what is wrong (both sides whole multiples of 16,
// at least 64, at most 512).
struct TileSize {
  int m = 0, n = 0;
};
TileSize parse_tile(const std::string& text);

}  // namespace dtsim::models
