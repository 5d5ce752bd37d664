// Gradient compression inside synchronous data parallelism: the bytes on the wire are the encoding's, worked
// out here by hand from the MLP's tensor sizes; a compressed step costs what the matching uncompressed
// collective of those bytes costs; an exact encoding leaves training bit-identical; bad combinations are
// errors at the key.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/config/run_config.hpp"
#include "sim/scenario/errors.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/sim/collectives_support.hpp"
#include "tests/sim/topology_support.hpp"
#include "tests/sim/training_support.hpp"

namespace dtsim::sim {
namespace {

using models::CompressorKind;
using testing::config_error_of;
using testing::contains;

// The quickstart MLP 784-256-128-10: weight and bias sizes in parameter order.
const std::vector<uint64_t> kTensorSizes = {784 * 256, 256, 256 * 128, 128, 128 * 10, 10};
constexpr uint64_t kParams = 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10;

struct Measured {
  double simulated_time = 0, steps = 0, communication = 0, idle = 0, bytes = 0;
  double last_error = 0, last_bytes_per_worker = 0, last_ratio = 0;  // the last metrics row
  double total_wire = 0, total_messages = 0;                          // summary totals
  std::vector<float> params;
};

Measured measure(const RunInputs& inputs) {
  const std::string out = dtsim::testing::run_in_child([&] {
    MetricsLog metrics;
    const RunResult r = run_training(inputs, metrics);
    const WorkerTime t = r.mean_time();
    const EvalPoint& last = r.points.back();
    const nlohmann::json& c = r.strategy_details.contains("compression") ? r.strategy_details["compression"]
                                                                           : nlohmann::json(nullptr);
    std::vector<double> head{r.simulated_time_s, static_cast<double>(r.steps), t.communication, t.idle,
                             static_cast<double>(r.bytes_sent), last.compression_error, last.wire_bytes_per_worker,
                             last.compression_ratio, c.is_null() ? -1.0 : c["wire_bytes"].get<double>(),
                             c.is_null() ? -1.0 : c["messages"].get<double>()};
    return dtsim::testing::to_bytes(head) + dtsim::testing::to_bytes(r.final_params);
  });
  const std::vector<double> h = dtsim::testing::from_bytes<double>(out.substr(0, 10 * sizeof(double)));
  Measured m{h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], {}};
  m.params = dtsim::testing::from_bytes<float>(out.substr(10 * sizeof(double)));
  return m;
}

// `workers` workers, `steps` steps, one bucket, no overlap: a step is compute, then its collectives.
RunInputs compressed_run(int workers, int64_t steps, CompressorKind kind,
                         const std::function<void(models::CompressionSettings&)>& adjust = nullptr) {
  return dtsim::testing::small_training_run(workers, 16, steps, [&](RunConfig& c) {
    c.sync.overlap = false;
    c.compression.settings.kind = kind;
    if (adjust) adjust(c.compression.settings);
  });
}

uint64_t ceil_log2(uint64_t d) {
  uint64_t bits = 0;
  while ((uint64_t{1} << bits) < d) ++bits;
  return bits;
}

// One worker's top-k message: k fp32 values and k indices of ⌈log2 d⌉ bits, in whole bytes, per tensor.
uint64_t topk_message_bytes(double ratio) {
  uint64_t total = 0;
  for (const uint64_t d : kTensorSizes) {
    const uint64_t k = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(ratio * static_cast<double>(d))));
    total += (k * (32 + ceil_log2(d)) + 7) / 8;
  }
  return total;
}

TEST(SyncCompression, TopKAllGathersTheHandComputedEncodingEveryStep) {
  const int n = 4;
  const int64_t steps = 6;
  const Measured m = measure(compressed_run(n, steps, CompressorKind::TopK));
  const uint64_t message = topk_message_bytes(0.01);
  // A ring all-gather of N equal parts: every rank forwards N − 1 parts.
  EXPECT_EQ(m.bytes, static_cast<double>(steps * (n - 1) * n * message));
  EXPECT_EQ(m.last_bytes_per_worker, static_cast<double>(message));
  EXPECT_NEAR(m.last_ratio, 4.0 * kParams / static_cast<double>(message), 1e-9);
  EXPECT_EQ(m.total_messages, static_cast<double>(steps * n)) << "one message per worker and step";
  EXPECT_EQ(m.total_wire, static_cast<double>(steps * n * message));
  // ‖x − top_k(x)‖² ≤ (1 − k/d)‖x‖² tensor by tensor, hence over the whole vector with the smallest k/d.
  double smallest_kept_fraction = 1.0;
  for (const uint64_t d : kTensorSizes) {
    const double k = std::max(1.0, std::round(0.01 * static_cast<double>(d)));
    smallest_kept_fraction = std::min(smallest_kept_fraction, k / static_cast<double>(d));
  }
  EXPECT_GT(m.last_error, 0.0);
  EXPECT_LE(m.last_error, std::sqrt(1.0 - smallest_kept_fraction));
}

TEST(SyncCompression, Fp16AllreducesTwoBytesPerValue) {
  const int n = 4;
  const int64_t steps = 4;
  const Measured half = measure(compressed_run(n, steps, CompressorKind::Fp16));
  const Measured full = measure(compressed_run(n, steps, CompressorKind::None));
  // A ring allreduce of S bytes sends 2(N − 1)/N · S per rank.
  EXPECT_NEAR(half.bytes, steps * 2.0 * (n - 1) * 2.0 * kParams, 2.0 * n * n * steps);
  EXPECT_NEAR(full.bytes, steps * 2.0 * (n - 1) * 4.0 * kParams, 2.0 * n * n * steps);
  EXPECT_EQ(half.last_ratio, 2.0);
  EXPECT_LT(half.last_error, 1e-3) << "fp16 keeps 11 significant bits";
  EXPECT_TRUE(std::isnan(full.last_error)) << "an uncompressed run has no compression columns";
}

TEST(SyncCompression, PowerSgdAllreducesPThenQ) {
  const int n = 4, rank = 2;
  const int64_t steps = 3;
  const Measured m = measure(compressed_run(n, steps, CompressorKind::PowerSgd, [&](models::CompressionSettings& s) {
    s.powersgd_rank = rank;
  }));
  // Weights are inputs × outputs: P is inputs × r, Q outputs × r; the biases travel with P, uncompressed.
  const double p_bytes = 4.0 * rank * (784 + 256 + 128) + 4.0 * (256 + 128 + 10);
  const double q_bytes = 4.0 * rank * (256 + 128 + 10);
  EXPECT_NEAR(m.bytes, steps * 2.0 * (n - 1) * (p_bytes + q_bytes), 4.0 * n * n * steps);
  EXPECT_EQ(m.last_bytes_per_worker, p_bytes + q_bytes);
}

TEST(SyncCompression, AnExactEncodingTrainsBitForBitLikeNoCompression) {
  // Top-k with k = d sends every value unchanged: only the wire (an all-gather of values and indices) differs.
  const Measured exact = measure(compressed_run(4, 5, CompressorKind::TopK, [](models::CompressionSettings& s) {
    s.ratio = 1.0;
  }));
  const Measured plain = measure(compressed_run(4, 5, CompressorKind::None));
  ASSERT_EQ(exact.params.size(), plain.params.size());
  EXPECT_EQ(exact.params, plain.params);
  EXPECT_EQ(exact.last_error, 0.0);
  EXPECT_GT(exact.bytes, plain.bytes) << "values plus 18-bit indices, all-gathered, cost more than fp32 allreduced";
}

TEST(SyncCompression, ErrorFeedbackChangesTheTrajectoryButNotTheBytes) {
  const auto run = [](bool ef) {
    return measure(compressed_run(4, 5, CompressorKind::TopK, [&](models::CompressionSettings& s) {
      s.error_feedback = ef;
    }));
  };
  const Measured with = run(true), without = run(false);
  EXPECT_EQ(with.bytes, without.bytes);
  EXPECT_NE(with.params, without.params);
}

TEST(SyncCompression, BucketsSplitTheMessagesButNotTheBytesOrTheNumerics) {
  // 100 kB buckets: the first weight matrix (784 KB) alone, the rest together; overlapped with backward.
  const auto run = [](double bucket_bytes) {
    RunInputs in = compressed_run(4, 4, CompressorKind::TopK, [](models::CompressionSettings& s) {
      s.error_feedback = true;
    });
    in.config.sync.overlap = true;
    in.config.sync.bucket_bytes = bucket_bytes;
    return measure(in);
  };
  const Measured one = run(25e6), several = run(100e3);
  EXPECT_EQ(several.bytes, one.bytes) << "each tensor's message travels once, whatever the bucket";
  EXPECT_EQ(several.params, one.params) << "the decoded average does not depend on the buckets";
  EXPECT_NE(several.simulated_time, one.simulated_time) << "but the all-gathers are split and overlapped";
}

// The simulated time of a compressed step's communication is that of the uncompressed collective of the same
// bytes on the same platform.
TEST(SyncCompressionTiming, ACompressedStepCostsTheCollectiveOfItsBytes) {
  const int n = 4;
  const int64_t steps = 3;
  const FabricSpec fabric{"test-fabric", 25e9, 1e-6, 0.0, 1.0};  // small_training_run's
  const Measured topk = measure(compressed_run(n, steps, CompressorKind::TopK));
  testing::Case gather;
  gather.kind = CollectiveKind::AllGather;
  gather.ranks = n;
  gather.bytes = static_cast<uint64_t>(n) * topk_message_bytes(0.01);
  const double gather_seconds = testing::simulate_on_star(gather, fabric).seconds;
  EXPECT_EQ(topk.idle, 0.0) << "identical workers";
  EXPECT_NEAR(topk.communication / steps, gather_seconds, 1e-9 * gather_seconds);

  const Measured fp16 = measure(compressed_run(n, steps, CompressorKind::Fp16));
  testing::Case reduce;
  reduce.ranks = n;
  reduce.bytes = 2 * kParams;
  const double reduce_seconds = testing::simulate_on_star(reduce, fabric).seconds;
  EXPECT_NEAR(fp16.communication / steps, reduce_seconds, 1e-9 * reduce_seconds);
}

TEST(CompressionKeys, AreReadIntoTheSettings) {
  const RunConfig c = make_run_config(parse_scenario(
      "test.ini",
      "[compression]\nkind = topk\nratio = 0.05\nerror_feedback = true\nstart_step = 10\nstart_epoch = 2\n"
      "min_tensor_size = 300\nindices = int32\nsampled_threshold = true\n",
      {}, testing::kProfiles));
  EXPECT_TRUE(c.compression.active());
  EXPECT_EQ(c.compression.settings.kind, CompressorKind::TopK);
  EXPECT_EQ(c.compression.settings.ratio, 0.05);
  EXPECT_TRUE(c.compression.settings.error_feedback);
  EXPECT_TRUE(c.compression.settings.sampled_threshold);
  EXPECT_EQ(c.compression.settings.min_tensor_size, 300u);
  EXPECT_EQ(c.compression.settings.indices, models::IndexEncoding::Int32);
  EXPECT_EQ(c.compression.settings.sign_of_zero, models::SignOfZero::Plus);
  EXPECT_EQ(make_run_config(parse_scenario("test.ini", "[training]\nmomentum = 0\n[compression]\nkind = signum\n"
                                           "sign_of_zero = zero\n", {}, testing::kProfiles))
                .compression.settings.sign_of_zero,
            models::SignOfZero::Zero);
  // Signum with the optimizer's momentum too (the default 0.9) would be momentum twice.
  try {
    (void)make_run_config(parse_scenario("test.ini", "[compression]\nkind = signum\n", {}, testing::kProfiles));
    ADD_FAILURE() << "signum with training.momentum = 0.9 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("set training.momentum = 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c.compression.resolved(100).start_step, 200) << "the later of 10 steps and 2 epochs of 100 steps";
  EXPECT_EQ(c.compression.resolved(3).start_step, 10);
  EXPECT_FALSE(make_run_config(parse_scenario("test.ini", "", {}, testing::kProfiles)).compression.active());
}

TEST(CompressionKeys, BadCombinationsAreErrorsAtTheKey) {
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\nmajority_vote = true\n"), "compression.majority_vote"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = sign\npredivide = true\n"), "compression.predivide"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = qsgd\nunbiased = true\n"), "compression.unbiased"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = randomk\nsampled_threshold = true\n"),
                       "compression.sampled_threshold"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nerror_feedback = true\n"), "compression.error_feedback"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\ndownloads = true\n"), "compression.downloads"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = fp16\n[precision]\nweights = fp16\nactivations = fp16\n"
                                    "gradients = fp16\nloss_scaling = dynamic\n"),
                       "precision.loss_scaling"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\n[faults]\nevents = worker 1 down at 1s\n"),
                       "compression.kind"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\nratio = 0\n"), "compression.ratio"));
  EXPECT_EQ(config_error_of("[compression]\nkind = sign\nmajority_vote = true\nerror_feedback = true\n"), "");
  // sign_of_zero = zero belongs to the sign family; the default (plus) is what every kind does anyway.
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\nsign_of_zero = zero\n"), "compression.sign_of_zero"));
  EXPECT_EQ(config_error_of("[compression]\nkind = scaled-sign\nsign_of_zero = zero\n"), "");
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = sign\nsign_of_zero = minus\n"), "compression.sign_of_zero"));
  // Momentum correction moves the optimizer's momentum into the workers: it needs EF, a sparsifier and no
  // optimizer momentum.
  const std::string corrected = "[compression]\nkind = topk\nerror_feedback = true\nmomentum_correction = 0.9\n";
  EXPECT_TRUE(contains(config_error_of(corrected), "compression.momentum_correction")) << "training.momentum is 0.9";
  EXPECT_EQ(config_error_of(corrected + "[training]\nmomentum = 0\n"), "");
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = topk\nmomentum_correction = 0.9\n[training]\nmomentum = 0\n"),
                       "compression.momentum_correction"));
  EXPECT_TRUE(contains(config_error_of("[compression]\nkind = qsgd\nerror_feedback = true\nmomentum_correction = 0.9\n"
                                    "[training]\nmomentum = 0\n"),
                       "compression.momentum_correction"));
}

}  // namespace
}  // namespace dtsim::sim
