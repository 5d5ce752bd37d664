// The timing loop of dtsim calibrate: how often it calls and waits, and that its measurements of the CPU backend
// are times (positive and finite). What the times are is the machine's business: no test asserts a speed.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gpu/calibration.hpp"
#include "gpu/cpu_ops.hpp"

namespace {

using dtsim::gpu::TimingBudget;

TEST(Calibration, WarmsUpThenRunsEveryBatchAndWaitsAfterEach) {
  int calls = 0, waits = 0;
  const double seconds =
      dtsim::gpu::best_seconds_per_call([&] { ++calls; }, [&] { ++waits; }, TimingBudget{1e-4, 3});
  // One warm-up call and its wait, then 3 batches of at least one call, each ended by a wait.
  EXPECT_GE(calls, 4);
  EXPECT_GE(waits, 4);
  EXPECT_GT(seconds, 0.0);
  EXPECT_TRUE(std::isfinite(seconds));
}

TEST(Calibration, RefusesABudgetWithoutBatchesOrTime) {
  const auto nothing = [] {};
  EXPECT_THROW(dtsim::gpu::best_seconds_per_call(nothing, nothing, TimingBudget{1e-3, 0}), std::invalid_argument);
  EXPECT_THROW(dtsim::gpu::best_seconds_per_call(nothing, nothing, TimingBudget{0.0, 3}), std::invalid_argument);
}

TEST(Calibration, MeasuresTheCpuBackendsProductsAndStreams) {
  dtsim::gpu::CpuOps<float> ops;
  const TimingBudget quick{1e-3, 2};
  const double product = dtsim::gpu::time_gemm(ops, 16, 24, 32, quick);
  const double stream = dtsim::gpu::time_axpy(ops, 4096, quick);
  const double empty = dtsim::gpu::time_empty_call(ops, quick);
  for (const double t : {product, stream, empty}) {
    EXPECT_GT(t, 0.0);
    EXPECT_TRUE(std::isfinite(t));
  }
  EXPECT_THROW(dtsim::gpu::time_gemm(ops, 0, 4, 4, quick), std::invalid_argument);
  EXPECT_THROW(dtsim::gpu::time_axpy(ops, 0, quick), std::invalid_argument);
}

}  // namespace
