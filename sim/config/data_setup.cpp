#include "sim/config/data_setup.hpp"

#include <filesystem>
#include <stdexcept>

#include "models/random.hpp"
#include "models/synthetic.hpp"
#include "sim/config/partition_file.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

// data.partition = file: the file's shards, one per worker, each index inside the training set.
models::Partition read_file_partition(const RunConfig& c, const models::Dataset& train, const KeyOrigins& at) {
  std::vector<std::vector<int32_t>> shards = read_partition_file(c.data.partition_file);
  if (static_cast<int>(shards.size()) != c.workers)
    at.fail("data.partition_file",
            "'" + c.data.partition_file + "' lists " + std::to_string(shards.size()) + " shards but there are " +
                std::to_string(c.workers) + " workers",
            "set cluster.workers = " + std::to_string(shards.size()) + " or write one shard per worker");
  try {
    return models::partition_from_shards(std::move(shards), train.num_samples);
  } catch (const std::invalid_argument& e) {
    at.fail("data.partition_file", "'" + c.data.partition_file + "': " + e.what(),
            "indices count from 0 in the order dtsim loads the training set (" + std::to_string(train.num_samples) +
                " samples here)");
  }
}

models::Partition make_partition(const RunConfig& c, const models::Dataset& train,
                                 const std::vector<std::vector<int32_t>>& natural_shards, const KeyOrigins& at) {
  switch (c.data.partition) {
    case PartitionKind::Iid:
      return models::partition_iid(train.num_samples, c.workers, c.data_seed());
    case PartitionKind::Dirichlet:
      // Every worker must hold something to train on, hence a minimum shard of one sample.
      return models::partition_dirichlet(train.labels, train.num_classes, c.workers, c.data.dirichlet_alpha, c.data_seed(),
                                         /*min_shard_size=*/1);
    case PartitionKind::Labels:
      return models::partition_labels_per_client(train.labels, train.num_classes, c.workers,
                                                 c.data.labels_per_worker, c.data_seed(), c.data.labels_assignment);
    case PartitionKind::Lognormal:
      return models::partition_lognormal_quantity(train.num_samples, c.workers, c.data.lognormal_sigma, c.data_seed());
    case PartitionKind::Groups: {
      std::vector<models::LabelGroup> groups;
      for (const LabelGroup& g : c.data.label_groups)
        groups.push_back({g.name, std::vector<int32_t>(g.labels.begin(), g.labels.end()), g.workers});
      return models::partition_label_groups(train.labels, train.num_classes, groups, c.data_seed());
    }
    case PartitionKind::Natural:
      if (static_cast<int>(natural_shards.size()) != c.workers)
        throw std::invalid_argument("the synthetic data has " + std::to_string(natural_shards.size()) +
                                    " devices but there are " + std::to_string(c.workers) +
                                    " workers (set data.synthetic_devices = cluster.workers)");
      return {natural_shards, models::partition_hash(natural_shards)};
    case PartitionKind::File:
      return read_file_partition(c, train, at);
    case PartitionKind::None:
      break;
  }
  throw std::logic_error("make_partition: no partition to make");
}

// A QA set as a Dataset: tokens as features, the domain as the label.
models::Dataset qa_view(const models::QaDataset& qa, const char* name) {
  models::Dataset d;
  d.name = name;
  d.num_samples = qa.count;
  d.num_features = qa.seq_len();
  d.num_classes = 2;
  d.width = qa.seq_len();
  d.features.assign(qa.tokens.begin(), qa.tokens.end());
  for (const models::QaDomain domain : qa.domain) d.labels.push_back(static_cast<int32_t>(domain));
  d.content_hash = models::dataset_content_hash(d);
  return d;
}

}  // namespace

TrainingData prepare_data(const RunConfig& c, const KeyOrigins& at) {
  TrainingData data;
  std::vector<std::vector<int32_t>> natural_shards;
  if (c.data.dataset == DatasetSource::FashionMnist) {
    std::error_code ec;
    if (!fs::exists(c.data.path, ec))
      at.fail("data.path", "no folder '" + c.data.path + "'",
              "install the Debian package dataset-fashion-mnist (it fills /usr/share/datasets/fashion-mnist) or fix data.path");
    if (!fs::is_directory(c.data.path, ec))
      at.fail("data.path", "'" + c.data.path + "' is not a folder", "name the folder that holds Fashion-MNIST's four .gz files");
    try {
      data.train = models::load_fashion_mnist(c.data.path, models::Split::Train, c.data.train_samples);
      data.test = models::load_fashion_mnist(c.data.path, models::Split::Test, c.data.test_samples);
    } catch (const models::DatasetError& e) {
      at.fail("data.path", e.what(), "install the Debian package dataset-fashion-mnist or fix data.path");
    }
    // Asking for more samples than the files hold is refused rather than silently cut to what is there.
    if (c.data.train_samples > data.train.num_samples)
      at.fail("data.train_samples",
              std::to_string(c.data.train_samples) + " asked for, but the training set holds " +
                  std::to_string(data.train.num_samples),
              "use at most " + std::to_string(data.train.num_samples) + ", or 0 for all");
    if (c.data.test_samples > data.test.num_samples)
      at.fail("data.test_samples",
              std::to_string(c.data.test_samples) + " asked for, but the test set holds " +
                  std::to_string(data.test.num_samples),
              "use at most " + std::to_string(data.test.num_samples) + ", or 0 for all");
  } else if (c.data.dataset == DatasetSource::Qa) {
    const models::QaTaskSpec spec;
    const int train = c.data.train_samples > 0 ? c.data.train_samples : kQaDefaultTrainExamples;
    const int test = c.data.test_samples > 0 ? c.data.test_samples : kQaDefaultTestExamples;
    QaData qa;
    qa.train = models::make_qa_dataset(spec, c.data.qa_medical_fraction, train,
                                       models::derive_seed(c.data_seed(), "qa-train"));
    // The held-out questions: half of each domain, whatever the training mix, so both are always scored.
    qa.test = models::make_qa_dataset(spec, 0.5, test, models::derive_seed(c.data_seed(), "qa-test"));
    data.train = qa_view(qa.train, "qa-train");
    data.test = qa_view(qa.test, "qa-test");
    data.qa = std::move(qa);
  } else {
    models::SyntheticSettings s;
    s.alpha = c.data.synthetic_alpha;
    s.beta = c.data.synthetic_beta;
    s.iid = c.data.dataset == DatasetSource::SyntheticIid;
    s.devices = c.data.synthetic_devices;
    s.seed = c.data_seed();
    try {
      models::FederatedData generated = models::make_fedprox_synthetic(s);
      data.train = std::move(generated.train);
      data.test = std::move(generated.test);
      natural_shards = std::move(generated.train_by_device);
    } catch (const std::invalid_argument& e) {
      at.fail("data.dataset", e.what());
    }
  }
  if (c.data.partition != PartitionKind::None) {
    try {
      data.partition = make_partition(c, data.train, natural_shards, at);
    } catch (const std::invalid_argument& e) {
      // A group partition fails on its groups (a label the data does not have): blamed where they are written.
      at.fail(c.data.partition == PartitionKind::Groups ? "data.label_groups" : "data.partition",
              std::string("cannot split the training set: ") + e.what());
    }
    for (size_t w = 0; w < data.partition->shards.size(); ++w)
      if (data.partition->shards[w].empty())
        at.fail("data.partition", "worker " + std::to_string(w) + " receives no training sample",
                "use fewer workers or a less skewed split");
  }
  return data;
}

int usable_training_samples(const TrainingData& data) {
  if (!data.partition) return data.train.num_samples;
  size_t n = 0;
  for (const auto& shard : data.partition->shards) n += shard.size();
  return static_cast<int>(n);
}

}  // namespace dtsim::sim
