#include "sim/config/data_setup.hpp"

#include <stdexcept>

#include "models/synthetic.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

models::Partition make_partition(const RunConfig& c, const models::Dataset& train,
                                 const std::vector<std::vector<int32_t>>& natural_shards) {
  const std::string& kind = c.data.partition;
  if (kind == "iid") return models::partition_iid(train.num_samples, c.workers, c.seed);
  // Every worker must hold something to train on, hence a minimum shard of one sample.
  if (kind == "dirichlet")
    return models::partition_dirichlet(train.labels, train.num_classes, c.workers, c.data.dirichlet_alpha, c.seed,
                                       /*min_shard_size=*/1);
  if (kind == "labels")
    return models::partition_labels_per_client(train.labels, train.num_classes, c.workers, c.data.labels_per_worker,
                                               c.seed);
  if (kind == "lognormal")
    return models::partition_lognormal_quantity(train.num_samples, c.workers, c.data.lognormal_sigma, c.seed);
  if (kind == "groups") {
    std::vector<models::LabelGroup> groups;
    for (const LabelGroup& g : c.data.label_groups)
      groups.push_back({g.name, std::vector<int32_t>(g.labels.begin(), g.labels.end()), g.workers});
    return models::partition_label_groups(train.labels, train.num_classes, groups, c.seed);
  }
  if (kind == "natural") {
    if (static_cast<int>(natural_shards.size()) != c.workers)
      throw std::invalid_argument("the synthetic data has " + std::to_string(natural_shards.size()) +
                                  " devices but there are " + std::to_string(c.workers) +
                                  " workers (set data.synthetic_devices = cluster.workers)");
    return {natural_shards, models::partition_hash(natural_shards)};
  }
  throw std::logic_error("unknown partition '" + kind + "'");
}

}  // namespace

TrainingData prepare_data(const Scenario& scenario, const RunConfig& c) {
  TrainingData data;
  std::vector<std::vector<int32_t>> natural_shards;
  if (c.dataset == "fashion-mnist") {
    try {
      data.train = models::load_fashion_mnist(c.data_path, models::Split::Train, c.train_samples);
      data.test = models::load_fashion_mnist(c.data_path, models::Split::Test, c.test_samples);
    } catch (const models::DatasetError& e) {
      scenario.fail("data.path", e.what(), "install the Debian package dataset-fashion-mnist or fix data.path");
    }
  } else {
    models::SyntheticSettings s;
    s.alpha = c.data.synthetic_alpha;
    s.beta = c.data.synthetic_beta;
    s.iid = c.dataset == "synthetic-iid";
    s.devices = c.data.synthetic_devices;
    s.seed = c.seed;
    try {
      models::FederatedData generated = models::make_fedprox_synthetic(s);
      data.train = std::move(generated.train);
      data.test = std::move(generated.test);
      natural_shards = std::move(generated.train_by_device);
    } catch (const std::invalid_argument& e) {
      scenario.fail("data.dataset", e.what());
    }
  }
  if (c.data.partition != "none") {
    try {
      data.partition = make_partition(c, data.train, natural_shards);
    } catch (const std::invalid_argument& e) {
      scenario.fail("data.partition", std::string("cannot split the training set: ") + e.what());
    }
    for (size_t w = 0; w < data.partition->shards.size(); ++w)
      if (data.partition->shards[w].empty())
        scenario.fail("data.partition", "worker " + std::to_string(w) + " receives no training sample",
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
