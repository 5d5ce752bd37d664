#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "models/batch_schedule.hpp"

namespace dtsim::models {
namespace {

TEST(BatchSchedule, EveryEpochVisitsDistinctSamplesAndDropsTheRemainder) {
  BatchSchedule s(103, 10, 42);
  EXPECT_EQ(s.steps_per_epoch(), 10);
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::set<int32_t> seen;
    for (int step = 0; step < 10; ++step) {
      const int32_t* b = s.batch(epoch * 10 + step);
      for (int i = 0; i < 10; ++i) {
        EXPECT_GE(b[i], 0);
        EXPECT_LT(b[i], 103);
        seen.insert(b[i]);
      }
    }
    EXPECT_EQ(seen.size(), 100u) << "epoch " << epoch;
  }
}

TEST(BatchSchedule, EpochsAreReshuffledAndSeeded) {
  BatchSchedule a(50, 50, 1), b(50, 50, 1), c(50, 50, 2);
  const std::vector<int32_t> a0(a.batch(0), a.batch(0) + 50);
  const std::vector<int32_t> a1(a.batch(1), a.batch(1) + 50);
  const std::vector<int32_t> b0(b.batch(0), b.batch(0) + 50);
  const std::vector<int32_t> c0(c.batch(0), c.batch(0) + 50);
  EXPECT_EQ(a0, b0);
  EXPECT_NE(a0, a1);
  EXPECT_NE(a0, c0);
}

TEST(BatchSchedule, WorkerOffsetsCutTheGlobalBatchInOrder) {
  BatchSchedule s(64, 16, 3);
  const int32_t* whole = s.batch(2);
  const std::vector<int32_t> copy(whole, whole + 16);
  for (int w = 0; w < 4; ++w)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(s.batch(2, w * 4)[i], copy[w * 4 + i]);
}

TEST(BatchSchedule, RejectsBatchesLargerThanTheData) {
  EXPECT_THROW(BatchSchedule(10, 11, 1), std::invalid_argument);
  EXPECT_THROW(BatchSchedule(10, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
