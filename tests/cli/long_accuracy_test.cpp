// The convolutional baselines: minutes of real compute each on two cores (label: long; make test-all).
#include <gtest/gtest.h>

#include "tests/cli/accuracy_support.hpp"

namespace {

TEST(LongAccuracy, CentralizedLenetReaches89Point5Percent) {
  EXPECT_GE(dtsim::testing::run_scenario("centralized_lenet")["final_test_accuracy"].get<double>(), 0.895);
}

TEST(LongAccuracy, CentralizedCnnReaches91Percent) {
  EXPECT_GE(dtsim::testing::run_scenario("centralized_cnn")["final_test_accuracy"].get<double>(), 0.910);
}

}  // namespace
