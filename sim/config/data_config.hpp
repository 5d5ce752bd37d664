// The [data] section: which dataset, how much of it, and how its training samples are split over the
// workers. Its keys, its typed config and its name tables live in data_config.cpp.
#pragma once

#include <string>
#include <vector>

#include "models/name_table.hpp"
#include "models/partition.hpp"

namespace dtsim::sim {

class Scenario;

enum class DatasetSource { FashionMnist, Synthetic, SyntheticIid, Qa };
const models::NameTable<DatasetSource>& dataset_source_table();
inline const char* to_string(DatasetSource d) { return dataset_source_table().name(d); }

enum class PartitionKind { None, Iid, Dirichlet, Labels, Lognormal, Groups, Natural, File };
const models::NameTable<PartitionKind>& partition_kind_table();
inline const char* to_string(PartitionKind p) { return partition_kind_table().name(p); }

const models::NameTable<models::LabelAssignment>& label_assignment_table();

// One named group of the label-group partition: which labels it owns and how many workers hold them.
struct LabelGroup {
  std::string name;
  std::vector<int> labels;
  int workers = 0;
};

struct DataConfig {
  DatasetSource dataset = DatasetSource::FashionMnist;
  std::string path;       // Fashion-MNIST's folder
  int train_samples = 0;  // 0 = all
  int test_samples = 0;
  double synthetic_alpha = 0.0;
  double synthetic_beta = 0.0;
  int synthetic_devices = 30;
  PartitionKind partition = PartitionKind::None;
  double dirichlet_alpha = 0.5;
  int labels_per_worker = 2;
  models::LabelAssignment labels_assignment = models::LabelAssignment::Balanced;
  double lognormal_sigma = 1.0;
  std::vector<LabelGroup> label_groups;
  std::string partition_file;  // file partition: the JSON file's path (relative paths resolved as read)
  double qa_medical_fraction = 0.5;  // qa: share of training examples from the medical domain
  double feature_noise = 0.0;         // NIID-Bench's feature imbalance: the last worker's noise std (0 = none)

  // Generated data (FedProx's synthetic sets or the QA task) rather than Fashion-MNIST's files.
  bool synthetic() const { return dataset != DatasetSource::FashionMnist; }
  // FedProx's Synthetic(alpha, beta): generated per device, which the natural partition follows.
  bool fedprox_synthetic() const {
    return dataset == DatasetSource::Synthetic || dataset == DatasetSource::SyntheticIid;
  }
};

// Reads the [data] section (and only it); throws InputError at the key for a bad label group.
DataConfig make_data_config(const Scenario& scenario);

// Parses data.label_groups ("medical:0-4:4; finance:5-9:4"); throws ValueError with a reason.
std::vector<LabelGroup> parse_label_groups(const std::string& text);

}  // namespace dtsim::sim
