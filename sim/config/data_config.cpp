#include "sim/config/data_config.hpp"

#include <cstdint>

#include "sim/config/choice.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {

const models::NameTable<DatasetSource>& dataset_source_table() {
  static const models::NameTable<DatasetSource> table{{DatasetSource::FashionMnist, "fashion-mnist"},
                                                      {DatasetSource::Synthetic, "synthetic"},
                                                      {DatasetSource::SyntheticIid, "synthetic-iid"},
                                                      {DatasetSource::Qa, "qa"}};
  return table;
}

const models::NameTable<PartitionKind>& partition_kind_table() {
  static const models::NameTable<PartitionKind> table{
      {PartitionKind::None, "none"},           {PartitionKind::Iid, "iid"},       {PartitionKind::Dirichlet, "dirichlet"},
      {PartitionKind::Labels, "labels"},       {PartitionKind::Lognormal, "lognormal"},
      {PartitionKind::Groups, "groups"},       {PartitionKind::Natural, "natural"},
      {PartitionKind::File, "file"}};
  return table;
}

const models::NameTable<models::LabelAssignment>& label_assignment_table() {
  static const models::NameTable<models::LabelAssignment> table{{models::LabelAssignment::Balanced, "balanced"},
                                                                {models::LabelAssignment::Random, "random"}};
  return table;
}

namespace {

std::vector<int> parse_label_range(const std::string& text) {
  std::vector<int> labels;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    const size_t dash = item.find('-');
    const int64_t lo = parse_int(dash == std::string::npos ? item : item.substr(0, dash));
    const int64_t hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1));
    if (lo < 0 || hi < lo || hi > 100000) throw ValueError("bad label range '" + item + "'", "write e.g. 0-4 or 1,3,5");
    for (int64_t l = lo; l <= hi; ++l) labels.push_back(static_cast<int>(l));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return labels;
}

}  // namespace

std::vector<LabelGroup> parse_label_groups(const std::string& text) {
  std::vector<LabelGroup> groups;
  std::vector<bool> taken;
  size_t start = 0;
  const std::string all = trim(text);
  while (!all.empty() && start <= all.size()) {
    const size_t semi = all.find(';', start);
    const std::string item = trim(all.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    start = semi == std::string::npos ? all.size() + 1 : semi + 1;
    if (item.empty()) continue;
    const size_t c1 = item.find(':'), c2 = item.rfind(':');
    if (c1 == std::string::npos || c1 == c2 || item.find(':', c1 + 1) != c2)
      throw ValueError("group '" + item + "' is not name:labels:workers (three fields)", "write e.g. medical:0-4:4");
    LabelGroup g;
    g.name = trim(item.substr(0, c1));
    for (const LabelGroup& other : groups)
      if (other.name == g.name)
        throw ValueError("two groups are named '" + g.name + "'", "give each group its own name");
    g.labels = parse_label_range(item.substr(c1 + 1, c2 - c1 - 1));
    const int64_t workers = parse_int(item.substr(c2 + 1));
    if (g.name.empty() || workers < 1) throw ValueError("group '" + item + "' needs a name and at least one worker", "");
    g.workers = static_cast<int>(workers);
    for (const int l : g.labels) {
      if (static_cast<size_t>(l) >= taken.size()) taken.resize(l + 1, false);
      if (taken[l]) throw ValueError("label " + std::to_string(l) + " is in two groups", "label sets must be disjoint");
      taken[l] = true;
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

DataConfig make_data_config(const Scenario& s) {
  DataConfig d;
  d.dataset = choice_value(dataset_source_table(), s, "data.dataset");
  d.path = s.text("data.path");
  d.train_samples = static_cast<int>(s.integer("data.train_samples"));
  d.test_samples = static_cast<int>(s.integer("data.test_samples"));
  d.synthetic_alpha = s.real("data.synthetic_alpha");
  d.synthetic_beta = s.real("data.synthetic_beta");
  d.synthetic_devices = static_cast<int>(s.integer("data.synthetic_devices"));
  d.partition = choice_value(partition_kind_table(), s, "data.partition");
  d.dirichlet_alpha = s.real("data.dirichlet_alpha");
  d.labels_per_worker = static_cast<int>(s.integer("data.labels_per_worker"));
  d.labels_assignment = choice_value(label_assignment_table(), s, "data.labels_assignment");
  d.lognormal_sigma = s.real("data.lognormal_sigma");
  d.partition_file = s.file_path("data.partition_file");
  if (d.partition == PartitionKind::File && d.partition_file.empty())
    s.fail("data.partition", "file needs a partition file, and data.partition_file is empty",
           "set data.partition_file to a JSON file holding {\"shards\": [[...], ...]}");
  d.qa_medical_fraction = s.real("data.qa_medical_fraction");
  d.feature_noise = s.real("data.feature_noise");
  if (d.feature_noise > 0 && d.dataset == DatasetSource::Qa)
    s.fail("data.feature_noise", "the QA task's inputs are token ids, which noise would not perturb but corrupt",
           "remove data.feature_noise, or use Fashion-MNIST or a synthetic dataset");
  try {
    d.label_groups = parse_label_groups(s.text("data.label_groups"));
  } catch (const ValueError& e) {
    s.fail("data.label_groups", e.what(), e.hint());
  }
  if (d.partition == PartitionKind::Groups && d.label_groups.empty())
    // Blamed on data.partition: the key the user set (label_groups has no line of its own when unset).
    s.fail("data.partition", "groups needs label groups, and data.label_groups is empty",
           "set data.label_groups, e.g. 'medical:0-4:4; finance:5-9:4'");
  if (d.partition == PartitionKind::Labels && d.labels_per_worker > 10 && d.dataset == DatasetSource::FashionMnist)
    s.fail("data.labels_per_worker", "Fashion-MNIST has only 10 labels");
  if (d.partition == PartitionKind::Natural && !d.fedprox_synthetic())
    s.fail("data.partition", "'natural' follows the devices of the synthetic datasets only",
           d.dataset == DatasetSource::Qa
               ? "split the QA task by domain with data.partition = groups, e.g. data.label_groups = "
                 "'medical:0:2; finance:1:2'"
               : "use iid, dirichlet, labels, lognormal or groups with Fashion-MNIST");
  return d;
}

// ---- keys ------------------------------------------------------------------------------------------------
using namespace key_builders;

void add_data_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      choice("data.dataset", "fashion-mnist", dataset_source_table().names(),
             "Training and test data: Fashion-MNIST, FedProx Synthetic(alpha, beta) and its IID variant, or qa (the "
             "synthetic two-domain question answering task, for model.arch = transformer; label 0 = medical, 1 = "
             "finance, which the partitions split)"),
      text("data.path", "/usr/share/datasets/fashion-mnist",
           "Folder holding Fashion-MNIST's files (Debian package dataset-fashion-mnist)"),
      integer("data.train_samples", "0", at_least(0),
              "Use only the first N training samples; 0 = all (qa: N examples are generated; 0 = 20,000)"),
      integer("data.test_samples", "0", at_least(0),
              "Evaluate on the first N test samples only; 0 = all (qa: N held-out examples, half of each domain; 0 = "
              "2,000)"),
      real("data.synthetic_alpha", "0", at_least(0),
           "Synthetic: spread of each device's mean of its teacher's weights and biases; shared by every class, it "
           "changes no label (as in FedProx's generator) and is reported as having no effect"),
      real("data.synthetic_beta", "0", at_least(0), "Synthetic: how much the local input distributions differ"),
      integer("data.synthetic_devices", "30", between(1, 100000), "Synthetic: number of devices generating data"),
      choice("data.partition", "none", partition_kind_table().names(),
             "How training samples are split over workers: none = one global shuffled order cut into per-worker "
             "shards every step (equals centralised training); iid, dirichlet (over labels), labels (k labels per "
             "worker), lognormal (quantity skew), groups (label groups), natural (synthetic devices), file (the "
             "shards listed in data.partition_file)"),
      real("data.dirichlet_alpha", "0.5", positive(), "Dirichlet partition: concentration (small = skewed labels)"),
      integer("data.labels_per_worker", "2", between(1, 1000), "Labels partition: distinct labels per worker"),
      choice("data.labels_assignment", "balanced", label_assignment_table().names(),
             "Labels partition: which worker holds which labels. balanced = consecutive blocks of a shuffled "
             "label cycle (every label held by about as many workers, near-equal shards); random = worker i "
             "holds label i mod classes plus labels drawn at random (NIID-Bench's #C=k, uneven shards)"),
      real("data.lognormal_sigma", "1", at_least(0), "Lognormal partition: sigma of the shard-size distribution"),
      text("data.partition_file", "",
           "File partition: a JSON file {\"shards\": [[indices], ...]}, one array of training-set indices per "
           "worker, e.g. a split drawn by another framework (analysis/flower_partition.py writes Flower's); a "
           "relative path in a scenario file is relative to its folder", true),
      real("data.feature_noise", "0", between(0, 10),
           "NIID-Bench's noise-based feature imbalance: worker w's training inputs get fresh Gaussian noise of "
           "standard deviation feature_noise * w / (workers - 1) at every step (pixels are in [0, 1]), and the "
           "test set becomes the workers' noisy copies of it, one after the other; 0 = none"),
      real("data.qa_medical_fraction", "0.5", between(0, 1),
           "qa: share of the training examples drawn from the medical domain (the rest are finance)"),
      text("data.label_groups", "", "Groups partition: 'name:labels:workers' items separated by ';', e.g. "
           "'medical:0-4:4; finance:5-9:4' (label sets must be disjoint)", true),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
