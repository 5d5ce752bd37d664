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

TEST(ShardSampler, VisitsEveryShardSampleOncePerPass) {
  const std::vector<int32_t> shard{3, 9, 14, 20, 21, 40, 41};
  ShardSampler sampler(shard, 5, 2);
  std::vector<int32_t> drawn(21);
  sampler.next(10, drawn.data());
  sampler.next(11, drawn.data() + 10);  // crosses two pass boundaries
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<int32_t> one(drawn.begin() + 7 * pass, drawn.begin() + 7 * (pass + 1));
    std::sort(one.begin(), one.end());
    EXPECT_EQ(one, shard) << "pass " << pass;
  }
  EXPECT_NE(std::vector<int32_t>(drawn.begin(), drawn.begin() + 7), std::vector<int32_t>(drawn.begin() + 7, drawn.begin() + 14));
}

TEST(ShardSampler, BatchesLargerThanTheShardAndSeeding) {
  ShardSampler a({1, 2}, 1, 0), b({1, 2}, 1, 0);
  std::vector<int32_t> x(6), y(6), z(64), w(64);
  a.next(6, x.data());
  b.next(6, y.data());
  EXPECT_EQ(x, y);
  for (const int32_t v : x) EXPECT_TRUE(v == 1 || v == 2);
  ShardSampler big_a({0, 1, 2, 3, 4, 5, 6, 7}, 1, 0), big_c({0, 1, 2, 3, 4, 5, 6, 7}, 1, 1);
  big_a.next(64, z.data());
  big_c.next(64, w.data());
  EXPECT_NE(z, w) << "different workers draw different orders";
  EXPECT_THROW(ShardSampler({}, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::models
