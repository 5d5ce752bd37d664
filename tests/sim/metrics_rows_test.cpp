// metrics.csv rows and the divergence rule: closed cases written out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"
#include "sim/strategies/metrics.hpp"
#include "sim/strategies/recorder.hpp"

namespace dtsim::sim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

EvalPoint point() {
  EvalPoint p;
  p.step = 12;
  p.epoch = 0.5;
  p.sim_time_s = 0.25;
  p.lr = 0.1;
  p.train_loss = 1.5;
  p.train_loss_measured = true;
  p.test_loss = 2.0;
  p.test_accuracy = 0.75;
  p.bytes_sent = 4096;
  return p;
}

TEST(MetricsRows, AFiniteRowHasAnEmptyFlagColumn) {
  EXPECT_EQ(MetricsLog::csv_row(point()), "12,0.5000,0.25,0.1,1.500000,2.000000,0.750000,4096,,,,,,");
  EXPECT_EQ(MetricsLog::csv_header().substr(MetricsLog::csv_header().rfind(',') + 1), "nonfinite");
}

TEST(MetricsRows, NonFiniteValuesAreEmptyCellsNamedInTheFlagColumn) {
  EvalPoint p = point();
  p.train_loss = kNaN;
  p.test_loss = kInf;
  p.test_accuracy = -kInf;
  EXPECT_EQ(MetricsLog::csv_row(p), "12,0.5000,0.25,0.1,,,,4096,,,,,,train_loss|test_loss|test_accuracy");
}

TEST(MetricsRows, NoTrainingLossYetIsEmptyButNotFlagged) {
  EvalPoint p = point();
  p.train_loss = kNaN;
  p.train_loss_measured = false;
  EXPECT_EQ(MetricsLog::csv_row(p), "12,0.5000,0.25,0.1,,2.000000,0.750000,4096,,,,,,");
}

TEST(MetricsRows, CompressionCellsAreFlaggedOneByOne) {
  EvalPoint p = point();
  p.compression_error = 0.25;
  p.wire_bytes_per_worker = kInf;
  p.compression_ratio = 8.0;
  EXPECT_EQ(MetricsLog::csv_row(p), "12,0.5000,0.25,0.1,1.500000,2.000000,0.750000,4096,0.250000,,8.0000,,,"
                                    "wire_bytes_per_worker");
}

TEST(MetricsRows, StalenessCellsFollowTheCompressionCells) {
  EvalPoint p = point();
  p.staleness_mean = 2.5;
  p.staleness_max = 7;
  EXPECT_EQ(MetricsLog::csv_row(p), "12,0.5000,0.25,0.1,1.500000,2.000000,0.750000,4096,,,,2.5000,7,");
  p.staleness_max = kInf;
  EXPECT_EQ(MetricsLog::csv_row(p), "12,0.5000,0.25,0.1,1.500000,2.000000,0.750000,4096,,,,2.5000,,staleness_max");
}

TEST(DivergenceRule, NonFiniteLossesAlwaysDiverge) {
  DivergenceRule rule(100.0);
  EXPECT_EQ(rule.check_train_loss(kNaN), "the training loss is NaN");
  EXPECT_EQ(rule.check_train_loss(kInf), "the training loss is infinite");
  EXPECT_EQ(rule.check_train_loss(-kInf), "the training loss is infinite");
}

TEST(DivergenceRule, ALossAboveFactorTimesTheFirstDiverges) {
  DivergenceRule rule(10.0);
  EXPECT_EQ(rule.check_train_loss(2.5), "") << "the first loss sets the reference";
  EXPECT_EQ(rule.check_train_loss(25.0), "") << "exactly 10 x 2.5 is not above it";
  EXPECT_NE(rule.check_train_loss(25.01), "");
  EXPECT_EQ(rule.check_train_loss(0.1), "");
}

// The untrained model's test loss, when it is known first, is the reference: local SGD's first training loss
// is a mean over H steps and can be taken after the blow-up (H = 4 read a first loss of 14,555).
TEST(DivergenceRule, TheUntrainedModelsLossIsTheReferenceWhenKnownFirst) {
  DivergenceRule rule(10.0);
  rule.note_initial_loss(2.5);
  EXPECT_EQ(rule.check_train_loss(20.0), "");
  EXPECT_EQ(rule.check_train_loss(24.0), "") << "not a new reference";
  EXPECT_EQ(rule.check_train_loss(25.5), "the training loss 25.5 exceeds 10 x max(1, the untrained model's loss 2.5)");
  DivergenceRule late(10.0);
  EXPECT_EQ(late.check_train_loss(3.0), "");
  late.note_initial_loss(0.5);  // after a training loss: too late to be the reference
  EXPECT_NE(late.check_train_loss(31.0), "");
  EXPECT_EQ(late.check_train_loss(29.0), "");
  DivergenceRule unknown(10.0);
  unknown.note_initial_loss(kNaN);  // a step-0 evaluation without a finite loss sets nothing
  EXPECT_EQ(unknown.check_train_loss(3.0), "");
  EXPECT_NE(unknown.check_train_loss(30.5), "");
}

TEST(DivergenceRule, ASmallFirstLossCountsAsOne) {
  DivergenceRule rule(10.0);
  EXPECT_EQ(rule.check_train_loss(0.01), "");
  EXPECT_EQ(rule.check_train_loss(9.9), "") << "the reference is max(1, 0.01) = 1";
  EXPECT_NE(rule.check_train_loss(10.5), "");
}

TEST(DivergenceRule, ANonFiniteTestLossDiverges) {
  const DivergenceRule rule;
  EvalPoint p = point();
  EXPECT_EQ(rule.check_evaluation(p), "");
  p.test_loss = kNaN;
  EXPECT_NE(rule.check_evaluation(p), "");
}

TEST(MetricsLog, ReportsTheFirstDivergenceOnce) {
  MetricsLog log;
  int calls = 0;
  log.watch_divergence(DivergenceRule(100.0), [&calls](const Divergence&) { ++calls; });
  log.check_train_loss(1, 0.5, 2.0);
  EXPECT_FALSE(log.divergence().has_value());
  log.check_train_loss(2, 1.0, kNaN);
  log.check_train_loss(3, 1.5, kNaN);
  ASSERT_TRUE(log.divergence().has_value());
  EXPECT_EQ(log.divergence()->step, 2);
  EXPECT_EQ(log.divergence()->sim_time_s, 1.0);
  EXPECT_EQ(calls, 1);
}

TEST(Printable, EscapesControlCharactersOnly) {
  EXPECT_EQ(printable("plain text, é"), "plain text, é");
  EXPECT_EQ(printable(std::string("a\x1b[31mb\r\n", 9)), "a\\x1b[31mb\\x0d\\x0a");
  EXPECT_EQ(printable(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
}

// Evaluation points: k per cycle of n steps, at the first step at or past each j·n/k.
std::vector<int64_t> due_steps(EvaluationCadence c, int64_t last) {
  std::vector<int64_t> due;
  for (int64_t s = 0; s <= last; ++s)
    if (c.due(s)) due.push_back(s);
  return due;
}

TEST(EvaluationCadence, SpreadsTheAskedNumberOverEveryCycle) {
  // 3 in 16 steps: 16/3 = 5.33, so steps 6, 11, 16, and again 22, 27, 32: three an epoch, not the four an
  // interval rounded down to 5 gives (5, 10, 15 and 16's end).
  EXPECT_EQ(due_steps({16, 3}, 32), (std::vector<int64_t>{6, 11, 16, 22, 27, 32}));
  // Whole intervals as before: every 117th step.
  EXPECT_EQ(due_steps({234, 2}, 468), (std::vector<int64_t>{117, 234, 351, 468}));
  // More evaluations than steps: every step, once.
  EXPECT_EQ(due_steps({3, 10}, 4), (std::vector<int64_t>{1, 2, 3, 4}));
  // n-softsync: 16 steps × 8 workers of gradients, 5 per update, 2 evaluations an epoch: 25.6 updates per
  // epoch, one every 12.8 updates, at 13, 26, 39, 52.
  EXPECT_EQ(due_steps({16 * 8, 2 * 5}, 52), (std::vector<int64_t>{13, 26, 39, 52}));
  // Factors whose product is past 64 bits.
  const EvaluationCadence big{100000000000LL, 100000000000LL};
  EXPECT_TRUE(big.due(1000000000LL));
  EXPECT_FALSE(EvaluationCadence({7, 1}).due(0));
}

}  // namespace
}  // namespace dtsim::sim
