// The shape-aware matrix-product model against hand-computed waves, tiles, split-K and memory bounds.
#include "models/workload/matmul_time.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dtsim::models {
namespace {

// 132 SMs (an H100 SXM) at exactly 1 TFLOP/s each, so that a tile's time is 2 tm tn k picoseconds.
MatmulUnit unit(int tile_m = 128, int tile_n = 256, double bandwidth = 0) {
  MatmulUnit u;
  u.multiprocessors = 132;
  u.tile_m = tile_m;
  u.tile_n = tile_n;
  u.large_product_flops = 132e12;
  u.memory_bandwidth = bandwidth;
  return u;
}

TEST(MatmulTime, OneFullWaveOfLargeTilesReachesTheAchievableRate) {
  // 12 × 11 tiles of 128 × 256 = 132: one wave, every SM busy for one tile's k loop.
  const ProductShape p{12 * 128, 11 * 256, 4096};
  const ProductTime t = product_time(p, 2, unit());
  EXPECT_EQ(t.tile_m, 128);
  EXPECT_EQ(t.tile_n, 256);
  EXPECT_EQ(t.split_k, 1);
  EXPECT_DOUBLE_EQ(t.tiles, 132);
  EXPECT_DOUBLE_EQ(t.waves, 1);
  EXPECT_NEAR(t.seconds, 2.0 * 128 * 256 * 4096 / 1e12, 1e-15);
  EXPECT_NEAR(t.utilisation, 1.0, 1e-12);
}

TEST(MatmulTime, OneRowMoreTakesASecondWave) {
  // 13 tile rows: 143 tiles of 128 × 256, two waves. The alternatives are no faster: 128 × 128 needs 286 tiles,
  // three waves of half the area at 3/4 of the rate (reuse 64 against 85.3), also twice one wave; 64 × 64 tiles
  // (1,100, nine waves of an eighth at 3/8 of the rate) take three times one wave.
  const ProductShape p{12 * 128 + 1, 11 * 256, 4096};
  const ProductTime t = product_time(p, 2, unit());
  const double one_wave = 2.0 * 128 * 256 * 4096 / 1e12;
  EXPECT_NEAR(t.seconds, 2 * one_wave, 1e-15);
  EXPECT_EQ(t.tile_m * t.tile_n, 128 * 256);
  EXPECT_DOUBLE_EQ(t.waves, 2);
  // Half the second wave is idle: the product reaches 1537 / (2 × 1536) of the rate.
  EXPECT_NEAR(t.utilisation, 1537.0 / (2 * 1536), 1e-12);
}

TEST(MatmulTime, ASmallProductIsPaddedToWholeTilesAndPicksTheFastest) {
  // 100 × 100 with k = 256 (too short to split). One 128 × 256 tile: 2 × 128 × 256 × 256 ps = 16.8 us; one
  // 128 × 128 tile at 3/4 of the rate: 11.2 us; two 64 × 128 tiles at 1/2: 8.4 us; four 64 × 64 tiles at 3/8,
  // side by side: 2 × 64 × 64 × 256 / 0.375 ps = 5.59 us, the fastest.
  const ProductTime t = product_time({100, 100, 256}, 2, unit());
  EXPECT_EQ(t.tile_m, 64);
  EXPECT_EQ(t.tile_n, 64);
  EXPECT_EQ(t.split_k, 1);
  EXPECT_DOUBLE_EQ(t.tiles, 4);
  EXPECT_NEAR(t.seconds, 2.0 * 64 * 64 * 256 / 0.375e12, 1e-15);
  EXPECT_NEAR(t.utilisation, 2.0 * 100 * 100 * 256 / (t.seconds * 132e12), 1e-12);
}

TEST(MatmulTime, FewTilesWithALongKSplitItOverIdleSms) {
  // One 128 × 128 output tile (a 128 × 128 unit) with k = 132 × 256: without a split one SM walks all of k,
  // 2 × 128² × 33792 ps = 1.107 ms. Split-K over 128 SMs (the largest power of two up to 132) gives each
  // 264 of k: 2 × 128² × 264 ps = 8.65 us. Four 64 × 64 tiles at half the rate, split 32, are slower (17.3 us).
  const ProductShape p{128, 128, 132 * 256};
  const ProductTime t = product_time(p, 2, unit(128, 128));
  EXPECT_EQ(t.tile_m, 128);
  EXPECT_EQ(t.split_k, 128);
  EXPECT_DOUBLE_EQ(t.waves, 1);
  EXPECT_NEAR(t.seconds, 2.0 * 128 * 128 * 264 / 1e12, 1e-15);
  // 128 of 132 SMs busy.
  EXPECT_NEAR(t.utilisation, 128.0 / 132, 1e-12);
}

TEST(MatmulTime, ASkinnyProductIsBoundByItsOperandsBytes) {
  // 8192 × 16 × 4096 in 2-byte elements (a LoRA adapter's x A): A alone is 64 MiB. At 0.5 TB/s the bytes take
  // 2 (8192 × 4096 + 4096 × 16 + 8192 × 16) / 0.5e12 s = 135 us; 128 tiles of 64 × 64 (one wave at 3/8 of
  // the rate) would compute it in 2 × 64² × 4096 / 0.375 ps = 89.5 us, so the bytes set the time.
  const ProductShape p{8192, 16, 4096};
  const ProductTime t = product_time(p, 2, unit(128, 256, 0.5e12));
  const double bytes = 2.0 * (8192.0 * 4096 + 4096.0 * 16 + 8192.0 * 16);
  EXPECT_NEAR(t.memory_seconds, bytes / 0.5e12, 1e-15);
  EXPECT_DOUBLE_EQ(t.seconds, t.memory_seconds);
  EXPECT_LE(t.compute_seconds, t.memory_seconds);
}

TEST(MatmulTime, SplitPartialSumsAreChargedAsFp32Traffic) {
  // The split-K case again, with a bandwidth: 128 slices each write and read back a 128 × 128 fp32 partial sum.
  const ProductShape p{128, 128, 132 * 256};
  const double bandwidth = 2e12;
  const ProductTime t = product_time(p, 2, unit(128, 128, bandwidth));
  ASSERT_GT(t.split_k, 1);
  const double operands = 2.0 * (128.0 * 33792 * 2 + 128.0 * 128);
  const double partials = 2.0 * 4 * t.split_k * 128.0 * 128;
  EXPECT_NEAR(t.memory_seconds, (operands + partials) / bandwidth, 1e-15);
}

TEST(MatmulTime, ABatchedProductSchedulesEveryMemberSTiles) {
  // 66 heads of one 128 × 256 tile each, then 132: one wave either way; 133 need two.
  const MatmulUnit u = unit();
  EXPECT_DOUBLE_EQ(product_time({128, 256, 1024, 132}, 2, u).waves, 1);
  const ProductTime two = product_time({128, 256, 1024, 133}, 2, u);
  EXPECT_NEAR(two.seconds, 2 * 2.0 * 128 * 256 * 1024 / 1e12, 1e-15);
  EXPECT_DOUBLE_EQ(product_time({128, 256, 1024, 133}, 2, u).tiles, 133);
}

TEST(MatmulTime, EmptyProductsTakeNoTimeAndBadInputThrows) {
  EXPECT_EQ(product_time({0, 128, 128}, 2, unit()).seconds, 0);
  EXPECT_EQ(product_time({128, 128, 128, 0}, 2, unit()).seconds, 0);
  EXPECT_THROW(product_time({-1, 128, 128}, 2, unit()), std::invalid_argument);
  EXPECT_THROW(product_time({128, 128, 128}, 2, MatmulUnit{}), std::invalid_argument);
  MatmulUnit no_rate = unit();
  no_rate.large_product_flops = 0;
  EXPECT_THROW(product_time({128, 128, 128}, 2, no_rate), std::invalid_argument);
}

TEST(MatmulTime, TilesParseAsRowsByColumns) {
  const TileSize t = parse_tile("128x256");
  EXPECT_EQ(t.m, 128);
  EXPECT_EQ(t.n, 256);
  for (const char* bad : {"", "128", "128x", "x256", "128*256", "32x256", "128x1024", "100x128", "-128x256", "128x256x64"})
    EXPECT_THROW(parse_tile(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace dtsim::models
