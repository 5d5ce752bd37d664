#include "partition.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "models/random.hpp"

namespace dtsim::models {
namespace {

void require_clients(int clients) {
  if (clients < 1) throw std::invalid_argument("a partition needs at least one client");
}

void require_labels_in_range(const std::vector<int32_t>& labels, int num_classes) {
  if (num_classes < 1) throw std::invalid_argument("a partition needs at least one class");
  for (const int32_t y : labels)
    if (y < 0 || y >= num_classes) throw std::invalid_argument("a label lies outside [0, num_classes)");
}

std::vector<int32_t> iota_indices(int n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The sample indices of each class, in ascending order.
std::vector<std::vector<int32_t>> indices_by_class(const std::vector<int32_t>& labels, int num_classes) {
  std::vector<std::vector<int32_t>> by_class(num_classes);
  for (size_t i = 0; i < labels.size(); ++i) by_class[labels[i]].push_back(static_cast<int32_t>(i));
  return by_class;
}

// Appends `items` to the shards `targets` in near-equal consecutive runs: sizes differ by at most one, the
// first items.size() mod targets.size() targets get the extra item.
void deal_evenly(const std::vector<int32_t>& items, const std::vector<int>& targets,
                 std::vector<std::vector<int32_t>>& shards) {
  const size_t k = targets.size(), base = items.size() / k, extra = items.size() % k;
  size_t at = 0;
  for (size_t t = 0; t < k; ++t) {
    const size_t take = base + (t < extra ? 1 : 0);
    auto& shard = shards[targets[t]];
    shard.insert(shard.end(), items.begin() + at, items.begin() + at + take);
    at += take;
  }
}

std::vector<int> range_of_clients(int first, int count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), first);
  return v;
}

Partition finish(std::vector<std::vector<int32_t>> shards) {
  for (auto& shard : shards) std::sort(shard.begin(), shard.end());
  Partition p;
  p.hash = partition_hash(shards);
  p.shards = std::move(shards);
  return p;
}

// One Dirichlet cut of every class; returns the shards (unsorted).
std::vector<std::vector<int32_t>> dirichlet_cut(const std::vector<std::vector<int32_t>>& shuffled_by_class,
                                                int clients, double alpha, Rng& proportions_rng) {
  std::vector<std::vector<int32_t>> shards(clients);
  const std::vector<double> concentration(clients, alpha);
  for (const auto& members : shuffled_by_class) {
    const std::vector<double> p = proportions_rng.dirichlet(concentration);
    const auto n = static_cast<double>(members.size());
    double cumulative = 0;
    size_t begin = 0;
    for (int k = 0; k < clients; ++k) {
      cumulative += p[k];
      // Rounded cumulative cut points never decrease, and the last one is the class size whatever the
      // floating-point sum of p says.
      size_t end = k + 1 == clients ? members.size() : static_cast<size_t>(std::floor(n * cumulative + 0.5));
      end = std::clamp(end, begin, members.size());
      shards[k].insert(shards[k].end(), members.begin() + begin, members.begin() + end);
      begin = end;
    }
  }
  return shards;
}

}  // namespace

std::string partition_hash(const std::vector<std::vector<int32_t>>& shards) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto feed = [&crc](uint64_t value) {
    const auto v = static_cast<uint32_t>(value);
    const Bytef bytes[4] = {static_cast<Bytef>(v), static_cast<Bytef>(v >> 8), static_cast<Bytef>(v >> 16),
                            static_cast<Bytef>(v >> 24)};
    crc = crc32_z(crc, bytes, sizeof bytes);
  };
  feed(shards.size());
  for (const auto& shard : shards) {
    feed(shard.size());
    for (const int32_t i : shard) feed(static_cast<uint32_t>(i));
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc));
  return std::string("crc32:") + buf;
}

Partition partition_from_shards(std::vector<std::vector<int32_t>> shards, int num_samples) {
  require_clients(static_cast<int>(shards.size()));
  if (num_samples < 0) throw std::invalid_argument("negative sample count");
  // owner[i] = 1 + the shard holding sample i, 0 while no shard does.
  std::vector<int> owner(static_cast<size_t>(num_samples), 0);
  for (size_t k = 0; k < shards.size(); ++k)
    for (const int32_t i : shards[k]) {
      if (i < 0 || i >= num_samples)
        throw std::invalid_argument("shard " + std::to_string(k) + " holds sample " + std::to_string(i) +
                                    ", outside the training set's 0.." + std::to_string(num_samples - 1));
      int& o = owner[static_cast<size_t>(i)];
      if (o != 0)
        throw std::invalid_argument("sample " + std::to_string(i) + " is in shard " + std::to_string(o - 1) +
                                    (o - 1 == static_cast<int>(k) ? " twice" : " and in shard " + std::to_string(k)));
      o = static_cast<int>(k) + 1;
    }
  return finish(std::move(shards));
}

Partition partition_iid(int num_samples, int clients, uint64_t seed) {
  require_clients(clients);
  if (num_samples < 0) throw std::invalid_argument("negative sample count");
  std::vector<int32_t> order = iota_indices(num_samples);
  Rng(seed, "partition-iid").shuffle(order);
  std::vector<std::vector<int32_t>> shards(clients);
  deal_evenly(order, range_of_clients(0, clients), shards);
  return finish(std::move(shards));
}

Partition partition_dirichlet(const std::vector<int32_t>& labels, int num_classes, int clients, double alpha,
                              uint64_t seed, int min_shard_size) {
  require_clients(clients);
  require_labels_in_range(labels, num_classes);
  if (!(alpha > 0) || !std::isfinite(alpha)) throw std::invalid_argument("Dirichlet alpha must be finite and > 0");
  if (min_shard_size < 0 || static_cast<int64_t>(min_shard_size) * clients > static_cast<int64_t>(labels.size()))
    throw std::invalid_argument("Dirichlet min_shard_size must be >= 0 and fit clients × min_shard_size samples");

  std::vector<std::vector<int32_t>> by_class = indices_by_class(labels, num_classes);
  for (int c = 0; c < num_classes; ++c) Rng(seed, "partition-dirichlet-order", c).shuffle(by_class[c]);

  constexpr int max_draws = 1000;
  for (int draw = 0; draw < max_draws; ++draw) {
    Rng proportions(seed, "partition-dirichlet", static_cast<uint64_t>(draw));
    std::vector<std::vector<int32_t>> shards = dirichlet_cut(by_class, clients, alpha, proportions);
    const bool big_enough = std::all_of(shards.begin(), shards.end(), [&](const std::vector<int32_t>& s) {
      return s.size() >= static_cast<size_t>(min_shard_size);
    });
    if (big_enough) return finish(std::move(shards));
  }
  throw std::invalid_argument("Dirichlet partition: 1000 draws left some shard below min_shard_size");
}

namespace {

// holders[c] = the clients holding label c, ascending, under the balanced rule.
std::vector<std::vector<int>> balanced_holders(int num_classes, int clients, int k, uint64_t seed) {
  std::vector<int32_t> cycle = iota_indices(num_classes);
  Rng(seed, "partition-label-assignment").shuffle(cycle);
  std::vector<std::vector<int>> holders(num_classes);
  for (int i = 0; i < clients; ++i)
    for (int j = 0; j < k; ++j) {
      const int64_t position = (static_cast<int64_t>(i) * k + j) % num_classes;
      holders[cycle[position]].push_back(i);
    }
  return holders;
}

// The same under NIID-Bench's rule: label i mod classes, then k − 1 other labels drawn without replacement
// (a partial Fisher–Yates shuffle of the remaining labels, from the client's own stream).
std::vector<std::vector<int>> random_holders(int num_classes, int clients, int k, uint64_t seed) {
  std::vector<std::vector<int>> holders(num_classes);
  for (int i = 0; i < clients; ++i) {
    const int own = i % num_classes;
    std::vector<int32_t> others;
    for (int c = 0; c < num_classes; ++c)
      if (c != own) others.push_back(c);
    Rng rng(seed, "partition-label-draw", static_cast<uint64_t>(i));
    holders[own].push_back(i);
    for (int j = 0; j + 1 < k; ++j) {
      const size_t pick = j + static_cast<size_t>(rng.below(others.size() - j));
      std::swap(others[j], others[pick]);
      holders[others[j]].push_back(i);
    }
  }
  return holders;
}

}  // namespace

Partition partition_labels_per_client(const std::vector<int32_t>& labels, int num_classes, int clients,
                                      int labels_per_client, uint64_t seed, LabelAssignment assignment) {
  require_clients(clients);
  require_labels_in_range(labels, num_classes);
  if (labels_per_client < 1 || labels_per_client > num_classes)
    throw std::invalid_argument("labels per client must be between 1 and the number of classes");

  const std::vector<std::vector<int>> holders =
      assignment == LabelAssignment::Balanced ? balanced_holders(num_classes, clients, labels_per_client, seed)
                                              : random_holders(num_classes, clients, labels_per_client, seed);

  std::vector<std::vector<int32_t>> by_class = indices_by_class(labels, num_classes);
  std::vector<std::vector<int32_t>> shards(clients);
  for (int c = 0; c < num_classes; ++c) {
    if (holders[c].empty()) continue;  // dropped: nobody holds this label
    if (by_class[c].size() < holders[c].size())
      throw std::invalid_argument("label " + std::to_string(c) + " has fewer samples than clients holding it");
    Rng(seed, "partition-label-order", c).shuffle(by_class[c]);
    deal_evenly(by_class[c], holders[c], shards);
  }
  return finish(std::move(shards));
}

Partition partition_lognormal_quantity(int num_samples, int clients, double sigma, uint64_t seed) {
  require_clients(clients);
  if (!(sigma >= 0) || !std::isfinite(sigma)) throw std::invalid_argument("lognormal sigma must be finite and >= 0");
  if (num_samples < clients) throw std::invalid_argument("lognormal quantity skew needs a sample per client");

  Rng weights_rng(seed, "partition-quantity-weights");
  std::vector<double> weight(clients);
  for (double& w : weight) w = weights_rng.lognormal(0.0, sigma);
  const double total_weight = std::accumulate(weight.begin(), weight.end(), 0.0);

  // Largest-remainder apportionment of what is left after the guaranteed sample per client.
  const int64_t spare = static_cast<int64_t>(num_samples) - clients;
  std::vector<int64_t> size(clients);
  std::vector<double> remainder(clients);
  int64_t assigned = 0;
  for (int k = 0; k < clients; ++k) {
    const double quota = static_cast<double>(spare) * weight[k] / total_weight;
    size[k] = std::min<int64_t>(static_cast<int64_t>(std::floor(quota)), spare);
    remainder[k] = quota - static_cast<double>(size[k]);
    assigned += size[k];
  }
  std::vector<int> by_remainder = range_of_clients(0, clients);
  std::stable_sort(by_remainder.begin(), by_remainder.end(),
                   [&](int a, int b) { return remainder[a] > remainder[b]; });
  // Rounding can only leave fewer than `clients` samples over, but cycle in case floating point disagrees.
  for (int64_t left = spare - assigned, r = 0; left > 0; --left, ++r) ++size[by_remainder[r % clients]];
  while (assigned > spare) {  // never expected: floors cannot exceed the total; kept so sizes always sum right
    auto largest = std::max_element(size.begin(), size.end());
    --*largest;
    --assigned;
  }

  std::vector<int32_t> order = iota_indices(num_samples);
  Rng(seed, "partition-quantity-order").shuffle(order);
  std::vector<std::vector<int32_t>> shards(clients);
  size_t at = 0;
  for (int k = 0; k < clients; ++k) {
    const auto take = static_cast<size_t>(size[k] + 1);
    shards[k].assign(order.begin() + at, order.begin() + at + take);
    at += take;
  }
  return finish(std::move(shards));
}

Partition partition_label_groups(const std::vector<int32_t>& labels, int num_classes,
                                 const std::vector<LabelGroup>& groups, uint64_t seed) {
  require_labels_in_range(labels, num_classes);
  if (groups.empty()) throw std::invalid_argument("label-group partition needs at least one group");
  std::vector<int> owner(num_classes, -1);
  int total_clients = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const LabelGroup& group = groups[g];
    if (group.clients < 1) throw std::invalid_argument("label group '" + group.name + "' needs at least one client");
    if (group.labels.empty()) throw std::invalid_argument("label group '" + group.name + "' has no label");
    for (const int32_t c : group.labels) {
      if (c < 0 || c >= num_classes)
        throw std::invalid_argument("label group '" + group.name + "' names label " + std::to_string(c) +
                                    ", outside the dataset's labels 0 to " + std::to_string(num_classes - 1));
      if (owner[c] != -1)
        throw std::invalid_argument("label " + std::to_string(c) + " is in label groups '" + groups[owner[c]].name +
                                    "' and '" + group.name + "'; groups must be disjoint");
      owner[c] = static_cast<int>(g);
    }
    total_clients += group.clients;
  }

  std::vector<std::vector<int32_t>> members(groups.size());
  for (size_t i = 0; i < labels.size(); ++i)
    if (owner[labels[i]] != -1) members[owner[labels[i]]].push_back(static_cast<int32_t>(i));

  std::vector<std::vector<int32_t>> shards(total_clients);
  int first_client = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    Rng(seed, "partition-group-order", g).shuffle(members[g]);
    deal_evenly(members[g], range_of_clients(first_client, groups[g].clients), shards);
    first_client += groups[g].clients;
  }
  return finish(std::move(shards));
}

std::vector<std::vector<int>> shard_label_histograms(const Partition& partition, const std::vector<int32_t>& labels,
                                                     int num_classes) {
  std::vector<std::vector<int>> histogram(partition.shards.size(), std::vector<int>(num_classes, 0));
  for (size_t k = 0; k < partition.shards.size(); ++k)
    for (const int32_t i : partition.shards[k]) {
      if (i < 0 || static_cast<size_t>(i) >= labels.size())
        throw std::out_of_range("partition index outside the label vector");
      const int32_t y = labels[i];
      if (y < 0 || y >= num_classes) throw std::invalid_argument("a label lies outside [0, num_classes)");
      ++histogram[k][y];
    }
  return histogram;
}

}  // namespace dtsim::models
