// Loss scaling: the GradScaler state machine step by step, and unscaling with overflow detection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu/cpu_ops.hpp"
#include "models/loss_scaler.hpp"

namespace dtsim::models {
namespace {

LossScalerSettings dynamic(int64_t growth_interval) {
  LossScalerSettings s;
  s.mode = LossScaleMode::Dynamic;
  s.growth_interval = growth_interval;
  return s;
}

TEST(LossScaler, DefaultsAreGradScalers) {
  const LossScaler scaler;
  EXPECT_EQ(scaler.settings().mode, LossScaleMode::Dynamic);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.settings().growth_factor, 2.0);
  EXPECT_EQ(scaler.settings().backoff_factor, 0.5);
  EXPECT_EQ(scaler.settings().growth_interval, 2000);
  EXPECT_EQ(scaler.settings().min_scale, 1.0);
}

TEST(LossScaler, DynamicSkipsAndBacksOffOnOverflowAndGrowsAfterTheInterval) {
  LossScaler scaler(dynamic(3));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_TRUE(scaler.update(false));  // third good step in a row
  EXPECT_EQ(scaler.scale(), 131072.0);
  EXPECT_EQ(scaler.growths(), 1);

  EXPECT_FALSE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.overflows(), 1);
  EXPECT_EQ(scaler.skipped_steps(), 1);

  // An overflow restarts the count of good steps.
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_FALSE(scaler.update(true));
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_TRUE(scaler.update(false));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 65536.0);

  EXPECT_EQ(scaler.overflows(), 2);
  EXPECT_EQ(scaler.skipped_steps(), 2);
  EXPECT_EQ(scaler.growths(), 2);
}

TEST(LossScaler, DynamicScaleStopsAtMinScale) {
  LossScalerSettings s = dynamic(10);
  s.init_scale = 4.0;
  LossScaler scaler(s);
  const double expected[] = {2.0, 1.0, 1.0, 1.0};
  for (const double e : expected) {
    EXPECT_FALSE(scaler.update(true));
    EXPECT_EQ(scaler.scale(), e);
  }
  EXPECT_EQ(scaler.skipped_steps(), 4);
}

TEST(LossScaler, DynamicScaleDoesNotGrowToInfinity) {
  LossScalerSettings s = dynamic(1);
  s.init_scale = 1e308;
  LossScaler scaler(s);
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1e308);
  EXPECT_EQ(scaler.growths(), 0);
}

TEST(LossScaler, StaticNeverChangesButStillSkipsOverflows) {
  LossScalerSettings s;
  s.mode = LossScaleMode::Static;
  s.init_scale = 1024.0;
  s.growth_interval = 1;
  LossScaler scaler(s);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(scaler.update(false));
  EXPECT_FALSE(scaler.update(true));
  EXPECT_FALSE(scaler.update(true));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1024.0);
  EXPECT_EQ(scaler.overflows(), 2);
  EXPECT_EQ(scaler.skipped_steps(), 2);
  EXPECT_EQ(scaler.growths(), 0);
}

TEST(LossScaler, NoneNeverSkipsButCountsOverflows) {
  LossScalerSettings s;
  s.mode = LossScaleMode::None;
  LossScaler scaler(s);
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_TRUE(scaler.update(true));
  EXPECT_TRUE(scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1.0);
  EXPECT_EQ(scaler.overflows(), 1);
  EXPECT_EQ(scaler.skipped_steps(), 0);
}

TEST(LossScaler, RejectsBadSettingsAndParsesModes) {
  LossScalerSettings s;
  s.init_scale = 0.0;
  EXPECT_THROW(LossScaler{s}, std::invalid_argument);
  s = {};
  s.growth_factor = 1.0;
  EXPECT_THROW(LossScaler{s}, std::invalid_argument);
  s = {};
  s.backoff_factor = 1.0;
  EXPECT_THROW(LossScaler{s}, std::invalid_argument);
  s = {};
  s.growth_interval = 0;
  EXPECT_THROW(LossScaler{s}, std::invalid_argument);
  s = {};
  s.init_scale = 0.5;  // below min_scale 1
  EXPECT_THROW(LossScaler{s}, std::invalid_argument);
  s.mode = LossScaleMode::Static;  // min_scale only bounds the dynamic scale
  EXPECT_NO_THROW(LossScaler{s});

  EXPECT_EQ(parse_loss_scale_mode("none"), LossScaleMode::None);
  EXPECT_EQ(parse_loss_scale_mode("static"), LossScaleMode::Static);
  EXPECT_EQ(parse_loss_scale_mode("dynamic"), LossScaleMode::Dynamic);
  EXPECT_THROW(parse_loss_scale_mode("auto"), std::invalid_argument);
  EXPECT_STREQ(to_string(LossScaleMode::Static), "static");
}

TEST(UnscaleAndCheck, FiniteGradientsAreDividedByTheScale) {
  gpu::CpuOps<double> ops;
  std::vector<double> g{0.5 * 65536, -65536.0, 3.0};
  EXPECT_FALSE(unscale_and_check<double>(ops, g.data(), g.size(), 65536.0));
  EXPECT_EQ(g, (std::vector<double>{0.5, -1.0, 3.0 / 65536}));
  EXPECT_FALSE(unscale_and_check<double>(ops, g.data(), g.size(), 1.0));
  EXPECT_EQ(g, (std::vector<double>{0.5, -1.0, 3.0 / 65536}));
}

TEST(UnscaleAndCheck, AnyNonFiniteGradientIsAnOverflow) {
  gpu::CpuOps<float> ops;
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    std::vector<float> g{1.0f, bad, 2.0f};
    EXPECT_TRUE(unscale_and_check<float>(ops, g.data(), g.size(), 1024.0));
  }
  // Unscaling by a scale below 1 can itself overflow fp32.
  std::vector<float> big{3e38f};
  EXPECT_TRUE(unscale_and_check<float>(ops, big.data(), 1, 0.5));
  EXPECT_THROW(unscale_and_check<float>(ops, big.data(), 1, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
