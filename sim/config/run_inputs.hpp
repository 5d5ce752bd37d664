// What a run starts from: its typed configuration, its datasets and their split over the workers, and
// its length in steps. Strategies read it; the app layer prepares it.
#pragma once

#include <optional>

#include "models/dataset.hpp"
#include "models/feature_noise.hpp"
#include "models/partition.hpp"
#include "models/workload/workload.hpp"
#include "sim/config/data_setup.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/run_config.hpp"

namespace dtsim::sim {

class Scenario;

struct RunInputs {
  RunConfig config;
  models::Dataset train;
  models::Dataset test;
  std::optional<models::Partition> partition;  // per-worker shards, when data.partition is not none
  RunLength length;
  std::vector<IgnoredKey> ignored_keys;  // keys the user set that this run does not read
  std::vector<IgnoredKey> warnings;      // keys that act, but likely not as meant (key_warnings.hpp)
  KeyOrigins origins;                    // where each key was set, for what only the run itself can tell
  std::optional<models::Workload> proxy;  // workload.proxy: the workload whose compute and traffic are charged
  std::optional<QaData> qa;  // data.dataset = qa: the examples behind train and test, with their answers
};

// Builds the run configuration, loads or generates its datasets, partitions them and checks the numerics
// settings. Every user-fixable problem (a missing dataset file, a batch larger than the data, settings the
// optimizer rejects) is an InputError pointing at the responsible key.
RunInputs prepare_run(const Scenario& scenario);

// data.feature_noise as the models layer takes it: per worker, seeded from the data seed.
models::FeatureNoise feature_noise(const RunConfig& config);

// The compression settings the run uses, resolved from RunConfig::compression once when the simulation is
// set up: start_step raised to compression.start_epoch epochs of this run (rounds, for a strategy whose
// steps are rounds).
models::CompressionSettings resolved_compression(const RunInputs& inputs);

}  // namespace dtsim::sim
