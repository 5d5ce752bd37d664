// Accuracy the shipped scenarios must reach (the compute-core acceptance figures). The MLP runs in about
// 20 s each; LeNet and the CNN take minutes and live in long_accuracy_test.cpp (label: long).
#include <gtest/gtest.h>

#include "tests/cli/accuracy_support.hpp"

namespace {

TEST(Accuracy, CentralizedMlpReaches88PercentAndBf16StaysWithinHalfAPoint) {
  const auto fp32 = dtsim::testing::run_scenario("centralized_mlp");
  const auto bf16 = dtsim::testing::run_scenario(
      "centralized_mlp", "--set precision.weights=bf16 --set precision.activations=bf16 "
                         "--set precision.gradients=bf16 --set compute.math=bf16");
  const double a32 = fp32["final_test_accuracy"], a16 = bf16["final_test_accuracy"];
  EXPECT_GE(a32, 0.880);
  EXPECT_NEAR(a16, a32, 0.005);
  EXPECT_EQ(bf16["precision"]["gradients"], "bf16");
  // bf16 gradients are half the bytes; with one worker nothing is sent, but the peak is the bf16 one.
  EXPECT_LT(bf16["simulated_time_s"].get<double>(), fp32["simulated_time_s"].get<double>());
}

}  // namespace
