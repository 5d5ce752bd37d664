// Loading or generating a run's datasets and splitting the training set over the workers.
#pragma once

#include <optional>

#include "models/dataset.hpp"
#include "models/partition.hpp"
#include "models/qa/qa_task.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// The QA task's examples (data.dataset = qa). The run's train and test Datasets are views of them: each example's
// tokens as its features and its domain (0 medical, 1 finance) as its label, which is what the partitions split;
// the answers live here.
struct QaData {
  models::QaDataset train;
  models::QaDataset test;
};

// Examples generated when data.train_samples or data.test_samples is 0.
constexpr int kQaDefaultTrainExamples = 20000;
constexpr int kQaDefaultTestExamples = 2000;

struct TrainingData {
  models::Dataset train;
  models::Dataset test;
  std::optional<QaData> qa;
  // Each worker's own shard of the training set; empty when workers cut every global batch of one shared
  // shuffled order (data.partition = none), which is what centralised training sees.
  std::optional<models::Partition> partition;
};

// Every user-fixable problem (a missing dataset file, a partition that cannot be made) is an InputError at
// the responsible key, located through `origins`.
TrainingData prepare_data(const RunConfig& config, const KeyOrigins& origins);

// Number of training samples the workers draw from (those in some shard when the data is partitioned).
int usable_training_samples(const TrainingData& data);

}  // namespace dtsim::sim
