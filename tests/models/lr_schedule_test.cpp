// Learning-rate schedules against their formulas, evaluated by hand at chosen steps.
#include <gtest/gtest.h>

#include <stdexcept>

#include <cmath>
#include <string>

#include "models/lr_schedule.hpp"

namespace dtsim::models {
namespace {

LrScheduleSettings base(double lr) {
  LrScheduleSettings s;
  s.base_lr = lr;
  s.base_batch = 256;
  s.global_batch = 256;
  return s;
}

TEST(LrSchedule, ConstantWithoutScalingIsTheBaseRate) {
  const LrSchedule schedule(base(0.05));
  EXPECT_DOUBLE_EQ(schedule.peak_lr(), 0.05);
  for (const int64_t step : {0, 1, 999, 1000000}) EXPECT_DOUBLE_EQ(schedule.lr(step), 0.05);
}

TEST(LrSchedule, LinearAndSqrtScalingFollowTheGlobalBatch) {
  LrScheduleSettings s = base(0.1);
  s.global_batch = 1024;  // 4× the base batch
  s.scaling = LrScaling::Linear;
  EXPECT_DOUBLE_EQ(LrSchedule(s).peak_lr(), 0.4);
  EXPECT_DOUBLE_EQ(LrSchedule(s).lr(7), 0.4);
  s.scaling = LrScaling::Sqrt;
  EXPECT_DOUBLE_EQ(LrSchedule(s).peak_lr(), 0.2);
  s.scaling = LrScaling::None;
  EXPECT_DOUBLE_EQ(LrSchedule(s).peak_lr(), 0.1);
  // A smaller global batch scales down.
  s.global_batch = 64;
  s.scaling = LrScaling::Linear;
  EXPECT_DOUBLE_EQ(LrSchedule(s).peak_lr(), 0.025);
  s.scaling = LrScaling::Sqrt;
  EXPECT_DOUBLE_EQ(LrSchedule(s).peak_lr(), 0.05);
}

TEST(LrSchedule, WarmupRampsLinearlyToThePeakOnItsLastStep) {
  LrScheduleSettings s = base(0.1);
  s.global_batch = 1024;
  s.scaling = LrScaling::Linear;  // peak 0.4
  s.warmup_steps = 5;
  const LrSchedule schedule(s);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.08);
  EXPECT_DOUBLE_EQ(schedule.lr(1), 0.16);
  EXPECT_DOUBLE_EQ(schedule.lr(2), 0.24);
  EXPECT_DOUBLE_EQ(schedule.lr(4), 0.4);
  EXPECT_DOUBLE_EQ(schedule.lr(5), 0.4);
  EXPECT_DOUBLE_EQ(schedule.lr(100), 0.4);
}

TEST(LrSchedule, GradualWarmupStartsAtTheSmallBatchRate) {
  // Goyal et al. 2017: from η at the first step to kη after the warmup, linearly (η = 0.1, k = 8, 5 steps).
  LrScheduleSettings s = base(0.1);
  s.global_batch = 2048;
  s.scaling = LrScaling::Linear;  // peak 0.8
  s.warmup_steps = 5;
  s.warmup_start_lr = 0.1;
  const LrSchedule schedule(s);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(2), 0.1 + 0.7 * 2 / 5);
  EXPECT_DOUBLE_EQ(schedule.lr(4), 0.1 + 0.7 * 4 / 5);
  EXPECT_DOUBLE_EQ(schedule.lr(5), 0.8);
  // From zero, the first step does not move the weights: the ramp is then exactly peak · step / warmup.
  s.warmup_start_lr = 0.0;
  EXPECT_DOUBLE_EQ(LrSchedule(s).lr(0), 0.0);
  EXPECT_DOUBLE_EQ(LrSchedule(s).lr(1), 0.16);
}

TEST(LrSchedule, AWarmupMustStartBelowItsPeak) {
  LrScheduleSettings s = base(0.1);
  s.warmup_steps = 5;
  s.warmup_start_lr = 0.2;
  EXPECT_THROW(LrSchedule{s}, std::invalid_argument);
  s.warmup_start_lr = -0.01;
  EXPECT_THROW(LrSchedule{s}, std::invalid_argument);
}

TEST(LrSchedule, StepDecayCountsFromTheEndOfTheWarmup) {
  LrScheduleSettings s = base(1.0);
  s.warmup_steps = 2;
  s.decay = LrDecay::Step;
  s.step_every = 3;
  s.step_gamma = 0.1;
  const LrSchedule schedule(s);
  EXPECT_DOUBLE_EQ(schedule.lr(0), 0.5);
  EXPECT_DOUBLE_EQ(schedule.lr(1), 1.0);
  EXPECT_DOUBLE_EQ(schedule.lr(2), 1.0);  // first step after warmup
  EXPECT_DOUBLE_EQ(schedule.lr(4), 1.0);
  EXPECT_NEAR(schedule.lr(5), 0.1, 1e-15);
  EXPECT_NEAR(schedule.lr(7), 0.1, 1e-15);
  EXPECT_NEAR(schedule.lr(8), 0.01, 1e-16);
  EXPECT_NEAR(schedule.lr(11), 0.001, 1e-17);
}

TEST(LrSchedule, CosineDecaysFromThePeakToMinLrAtTotalSteps) {
  LrScheduleSettings s = base(1.0);
  s.warmup_steps = 10;
  s.decay = LrDecay::Cosine;
  s.total_steps = 110;
  s.min_lr = 0.1;
  const LrSchedule schedule(s);
  EXPECT_DOUBLE_EQ(schedule.lr(9), 1.0);
  EXPECT_DOUBLE_EQ(schedule.lr(10), 1.0);
  // Quarter way: 0.1 + 0.9·½(1 + cos(π/4)); half way: 0.1 + 0.9·½.
  EXPECT_NEAR(schedule.lr(35), 0.1 + 0.45 * (1 + std::sqrt(0.5)), 1e-15);
  EXPECT_NEAR(schedule.lr(60), 0.55, 1e-15);
  EXPECT_NEAR(schedule.lr(85), 0.1 + 0.45 * (1 - std::sqrt(0.5)), 1e-15);
  EXPECT_GT(schedule.lr(109), 0.1);
  EXPECT_NEAR(schedule.lr(109), 0.1 + 0.45 * (1 + std::cos(M_PI * 0.99)), 1e-15);
  EXPECT_DOUBLE_EQ(schedule.lr(110), 0.1);
  EXPECT_DOUBLE_EQ(schedule.lr(100000), 0.1);
}

TEST(LrSchedule, CosineWithoutWarmupStartsAtThePeakAndEndsAtZero) {
  LrScheduleSettings s = base(0.1);
  s.global_batch = 512;
  s.scaling = LrScaling::Sqrt;  // peak 0.1·√2
  s.decay = LrDecay::Cosine;
  s.total_steps = 4;
  const LrSchedule schedule(s);
  const double peak = 0.1 * std::sqrt(2.0);
  EXPECT_DOUBLE_EQ(schedule.lr(0), peak);
  EXPECT_NEAR(schedule.lr(2), peak / 2, 1e-16);
  EXPECT_NEAR(schedule.lr(3), peak * 0.5 * (1 - std::sqrt(0.5)), 1e-16);
  EXPECT_EQ(schedule.lr(4), 0.0);
}

void expect_rejected(const LrScheduleSettings& s, const std::string& fragment) {
  try {
    LrSchedule schedule(s);
    ADD_FAILURE() << "accepted; expected an error mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LrSchedule, RejectsInconsistentSettings) {
  LrScheduleSettings s = base(0.0);
  expect_rejected(s, "base_lr");
  s = base(std::nan(""));
  expect_rejected(s, "base_lr");
  s = base(0.1);
  s.warmup_steps = -1;
  expect_rejected(s, "warmup_steps");
  s = base(0.1);
  s.scaling = LrScaling::Linear;
  s.base_batch = 0;
  expect_rejected(s, "base_batch");
  s = base(0.1);
  s.decay = LrDecay::Step;
  expect_rejected(s, "step_every");
  s.step_every = 10;
  s.step_gamma = 0.0;
  expect_rejected(s, "step_gamma");
  s.step_gamma = 1.5;
  expect_rejected(s, "step_gamma");
  s = base(0.1);
  s.decay = LrDecay::Cosine;
  s.warmup_steps = 100;
  s.total_steps = 100;
  expect_rejected(s, "total_steps");
  s.total_steps = 200;
  s.min_lr = 0.2;
  expect_rejected(s, "min_lr");
  s = base(0.1);
  s.min_lr = 0.01;  // constant decay never reaches it
  expect_rejected(s, "min_lr");
  // Scaling None does not need the batch sizes.
  s = base(0.1);
  s.base_batch = 0;
  s.global_batch = 0;
  EXPECT_NO_THROW(LrSchedule{s});
  EXPECT_THROW(LrSchedule(base(0.1)).lr(-1), std::invalid_argument);
}

TEST(LrSchedule, ParsesItsEnums) {
  EXPECT_EQ(parse_lr_scaling("none"), LrScaling::None);
  EXPECT_EQ(parse_lr_scaling("linear"), LrScaling::Linear);
  EXPECT_EQ(parse_lr_scaling("sqrt"), LrScaling::Sqrt);
  EXPECT_EQ(parse_lr_decay("constant"), LrDecay::Constant);
  EXPECT_EQ(parse_lr_decay("step"), LrDecay::Step);
  EXPECT_EQ(parse_lr_decay("cosine"), LrDecay::Cosine);
  EXPECT_THROW(parse_lr_scaling("Linear"), std::invalid_argument);
  EXPECT_THROW(parse_lr_decay("exponential"), std::invalid_argument);
  EXPECT_STREQ(to_string(LrScaling::Sqrt), "sqrt");
  EXPECT_STREQ(to_string(LrDecay::Cosine), "cosine");
}

}  // namespace
}  // namespace dtsim::models
