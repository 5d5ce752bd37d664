#include "sim/config/run_inputs.hpp"

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_device.hpp"
#include "gpu/number_format.hpp"
#include "models/random.hpp"
#include "sim/config/data_setup.hpp"
#include "sim/config/key_warnings.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/qa_setup.hpp"
#include "sim/config/strategy.hpp"
#include "sim/config/workload_config.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {

namespace {

// training.max_steps cuts a run counted in steps short; one at or past the end of the run's epochs cuts
// nothing. Known only once the data fixes the steps per epoch. (The epochs a shorter cap overrides are not
// reported: cutting a scenario's run short is what the cap is for.)
void report_moot_length_key(const RunConfig& c, const RunLength& length, const KeyOrigins& at,
                            std::vector<IgnoredKey>& ignored) {
  if (strategy_descriptor(c.strategy).steps_are_rounds || c.max_steps <= 0) return;
  const int64_t epoch_steps = static_cast<int64_t>(c.epochs) * length.steps_per_epoch;
  if (c.max_steps >= epoch_steps)
    ignored.push_back({"training.max_steps",
                       "has no effect: the run's " + std::to_string(c.epochs) + " epochs end at step " +
                           std::to_string(epoch_steps) + ", no later than training.max_steps = " +
                           std::to_string(c.max_steps),
                       at.of("training.max_steps")});
}

// Synchronous training cuts the gradients into buckets of sync.bucket_size (strategies/sync/buckets.cpp); a
// model whose gradients fit in one has nothing to overlap with backward: its one bucket leaves when backward
// ends either way. For the same reason any bucket size at least as large as the gradients gives the same one
// bucket, so a size the user set there, where the default 25 MB does too, changes nothing. (Proxy runs bucket
// the workload's gradients instead.)
void report_single_bucket(const RunConfig& c, size_t params, const KeyOrigins& at,
                          std::vector<IgnoredKey>& ignored) {
  if (!reads_section(c.strategy, "sync") || c.workload.proxy || params == 0) return;
  const double bytes = static_cast<double>(params) * gpu::storage_bytes(c.precision.gradients);
  if (bytes > c.sync.bucket_bytes) return;
  const std::string gradients = "the model's gradients (" + format_quantity(bytes, Dimension::Bytes) + ")";
  if (at.set_by_user("sync.overlap"))
    ignored.push_back({"sync.overlap",
                       "has no effect: " + gradients + " fit one bucket of sync.bucket_size (" +
                           format_quantity(c.sync.bucket_bytes, Dimension::Bytes) + "), which leaves when backward ends",
                       at.of("sync.overlap")});
  if (at.set_by_user("sync.bucket_size") && bytes <= SyncConfig{}.bucket_bytes)
    ignored.push_back({"sync.bucket_size",
                       "has no effect: " + gradients + " fit one bucket of this size, as they fit one of the default " +
                           format_quantity(SyncConfig{}.bucket_bytes, Dimension::Bytes) + "; a size under " +
                           format_quantity(bytes, Dimension::Bytes) + " would split them",
                       at.of("sync.bucket_size")});
}

// A warmup is counted in steps once the data fixes the steps per epoch. One that rounds to no step, or to
// one step that starts at the peak rate (no training.warmup_start_lr) before a constant rate, leaves every
// step's rate as it is without it. (Under step or cosine decay a one-step warmup still shifts the decay by a
// step.)
void report_moot_warmup(const RunConfig& c, const RunLength& length, const KeyOrigins& at,
                        std::vector<IgnoredKey>& ignored) {
  const char* key = c.schedule.warmup_steps > 0 ? "training.warmup_steps" : "training.warmup_epochs";
  if (!at.set_by_user(key) || (c.schedule.warmup_steps <= 0 && c.schedule.warmup_epochs <= 0)) return;
  const models::LrScheduleSettings s = schedule_settings(c, length);
  const bool from_peak = !s.warmup_start_lr.has_value();
  const std::string per_epoch = " (" + std::to_string(length.steps_per_epoch) + " steps per epoch)";
  std::string why;
  if (s.warmup_steps == 0)
    why = "it rounds to no warmup step" + per_epoch;
  else if (s.warmup_steps == 1 && from_peak && s.decay == models::LrDecay::Constant)
    why = (c.schedule.warmup_steps > 0 ? "its one warmup step" : "it rounds to one warmup step" + per_epoch + ", which") +
          std::string(" runs at the peak rate, as without a warmup");
  if (why.empty()) return;
  ignored.push_back({key, "has no effect: " + why, at.of(key)});
  if (s.warmup_steps == 0 && at.set_by_user("training.warmup_start_lr"))
    ignored.push_back({"training.warmup_start_lr", std::string("has no effect: ") + key + " rounds to no warmup step" + per_epoch,
                       at.of("training.warmup_start_lr")});
}

}  // namespace

RunInputs prepare_run(const Scenario& scenario) {
  RunInputs in;
  in.config = make_run_config(scenario);
  // From here on, nothing reads the scenario: only where its keys were set, for errors and warnings.
  const KeyOrigins at = scenario.origins();
  in.origins = at;
  in.ignored_keys = find_ignored_keys(in.config, at);
  in.warnings = find_key_warnings(in.config, at);
  const RunConfig& c = in.config;
  TrainingData data = prepare_data(c, at);
  const int usable = usable_training_samples(data);
  // Federated clients each draw batches from their own shard: only one client's batch must fit.
  const bool own_batch = strategy_descriptor(c.strategy).per_worker_batch;
  const int64_t batch = own_batch ? c.batch_per_worker : c.global_batch();
  // A client's batch capped at its shard can be any size: a very large one asks for full-batch local steps.
  // (Strategies with one global batch count their steps per epoch from it, so they keep the limit.)
  const bool capped = own_batch && c.cap_batch_at_shard && data.partition.has_value();
  // Four keys make the rule: blamed at the one the command line set (a --vary of the workers), else the file's.
  if (batch > usable && !capped) {
    const std::string accumulated =
        c.accumulation() > 1 ? " × " + std::to_string(c.accumulation()) + " accumulation steps" : std::string();
    at.fail_at_set(own_batch ? std::vector<std::string>{"training.batch_per_worker", "data.train_samples"}
                             : std::vector<std::string>{"training.batch_per_worker", "cluster.workers",
                                                        "sync.accumulation_steps", "data.train_samples"},
                   (own_batch ? "batch " + std::to_string(batch)
                              : "global batch " + std::to_string(batch) + " (" + std::to_string(c.workers) +
                                    " workers × " + std::to_string(c.batch_per_worker) + accumulated + ")") +
                       " exceeds the " + std::to_string(usable) + " training samples",
                   c.accumulation() > 1 ? "lower it, accumulate fewer steps, or use fewer workers or more data"
                                        : "lower it, or use fewer workers or more data");
  }
  in.length = run_length(c, usable);
  report_moot_length_key(c, in.length, at, in.ignored_keys);
  report_moot_warmup(c, in.length, at, in.ignored_keys);
  if (c.workload.proxy) {
    in.proxy = load_named_workload(c.workload);
    check_workload_shards(c, *in.proxy, at);
  }
  report_single_bucket(c, check_numerics(c, in.length, data.train, at), at, in.ignored_keys);
  if (data.qa) check_qa_run(c, *data.qa, at);
  if (c.device == gpu::Device::Cuda) {
    const gpu::CudaStatus cuda = gpu::probe_cuda();
    if (!cuda.usable) at.fail("compute.device", "cannot use CUDA: " + cuda.reason, "use auto or cpu");
  }
  if (c.cap_batch_at_shard && data.partition && at.set_by_user("training.cap_batch_at_shard")) {
    // Whether a cap applies depends on the shards, which exist only now.
    size_t smallest = SIZE_MAX;
    for (const auto& shard : data.partition->shards) smallest = std::min(smallest, shard.size());
    if (smallest >= static_cast<size_t>(c.batch_per_worker))
      in.ignored_keys.push_back({"training.cap_batch_at_shard",
                                 "has no effect: the smallest shard holds " + std::to_string(smallest) +
                                     " samples, at least the batch of " + std::to_string(c.batch_per_worker),
                                 at.of("training.cap_batch_at_shard")});
  }
  in.train = std::move(data.train);
  in.test = std::move(data.test);
  if (const models::FeatureNoise noise = feature_noise(c); noise.active()) {
    // NIID-Bench tests on every worker's noisy copy of the test set; keep the copies to about 300 MB.
    constexpr long kMostNoisyTestSamples = 100000;
    const long copies = static_cast<long>(noise.clients) * in.test.num_samples;
    if (copies > kMostNoisyTestSamples)
      at.fail("data.feature_noise",
              "its test set is one noisy copy of the " + std::to_string(in.test.num_samples) + " test samples per worker, " +
                  std::to_string(copies) + " in all, more than " + std::to_string(kMostNoisyTestSamples),
              "lower data.test_samples to " + std::to_string(kMostNoisyTestSamples / noise.clients) + " or fewer");
    in.test = models::noisy_test_copies(in.test, noise);
  }
  in.partition = std::move(data.partition);
  in.qa = std::move(data.qa);
  return in;
}

models::FeatureNoise feature_noise(const RunConfig& config) {
  return {config.data.feature_noise, config.workers, models::derive_seed(config.data_seed(), "feature-noise")};
}

models::CompressionSettings resolved_compression(const RunInputs& inputs) {
  const bool rounds = strategy_descriptor(inputs.config.strategy).steps_are_rounds;
  return inputs.config.compression.resolved(rounds ? 1 : inputs.length.steps_per_epoch);
}

}  // namespace dtsim::sim
