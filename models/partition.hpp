// Splitting a data set's sample indices among clients or workers: IID, Dirichlet label skew, k labels per
// client, lognormal quantity skew and disjoint label groups ("domains"). Every partitioner is seeded through
// Rng(seed, purpose, id) streams and depends only on the labels (or the sample count) it is given.
//
// Common contract:
// - shard k is the list of sample indices client k holds, sorted ascending, so a partition (and its hash)
//   depends on which samples go where and not on the order in which they were dealt;
// - no index appears twice, and every index appears once unless the partitioner documents that it drops a
//   class (k labels per client with clients·k < classes; label groups that leave labels out);
// - labels must lie in [0, num_classes) and there must be at least one client, else std::invalid_argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::models {

struct Partition {
  std::vector<std::vector<int32_t>> shards;  // one per client, sorted ascending
  std::string hash;                          // partition_hash(shards)
};

// "crc32:xxxxxxxx" over the number of shards and then, shard by shard, its size and its indices (each as a
// little-endian int32), so that moving a sample between shards or changing a size always changes the input.
std::string partition_hash(const std::vector<std::vector<int32_t>>& shards);

// Shuffles 0..num_samples−1 and deals equal consecutive shards; sizes differ by at most one (the first
// num_samples mod clients shards get the extra sample).
Partition partition_iid(int num_samples, int clients, uint64_t seed);

// Label skew of Hsu, Qi & Brown (2019): for each class c, proportions p_c ~ Dir(α·1_clients) and the class's
// shuffled samples are cut at the rounded cumulative proportions, so client k gets ≈ p_c[k]·n_c of them.
// Large α approaches IID; small α gives each client few classes. Small α can leave clients empty: with
// min_shard_size > 0 all proportions are redrawn (from a fresh stream) until every shard has at least that
// many samples, as in NIID-Bench (Li et al. 2022); std::invalid_argument if 1000 draws do not reach it.
Partition partition_dirichlet(const std::vector<int32_t>& labels, int num_classes, int clients, double alpha,
                              uint64_t seed, int min_shard_size = 0);

// "#C = k" label-quantity skew: every client holds exactly k distinct labels, and each label's samples are
// shuffled and split evenly among the clients holding it (in client order, the first ones get the extra
// sample). Which client holds which labels follows one of two rules:
// - Balanced (the pathological non-IID split of McMahan et al. 2017, made exact): labels are put in a seeded
//   random order π and client i holds π[(i·k + j) mod classes] for j = 0..k−1 (consecutive blocks of k around
//   the shuffled cycle). Holder counts differ by at most one between labels, so shards are nearly equal.
// - Random (NIID-Bench, Li et al. 2022): client i holds label i mod classes and k−1 further labels drawn
//   uniformly without replacement from the rest. Labels then have different numbers of holders, so a client
//   whose labels are popular gets a small shard and shard sizes differ (by up to a few times at k = 2).
// Labels held by nobody (possible when clients·k < classes, or by chance under Random with clients < classes)
// are dropped. std::invalid_argument when k < 1, k > classes, or a held label has fewer samples than holders
// (some client would then not really hold it).
enum class LabelAssignment { Balanced, Random };

Partition partition_labels_per_client(const std::vector<int32_t>& labels, int num_classes, int clients,
                                      int labels_per_client, uint64_t seed,
                                      LabelAssignment assignment = LabelAssignment::Balanced);

// Quantity skew: client k's share is w_k / Σw with w_k ~ lognormal(0, σ); labels are IID. Every client gets
// one sample first, then the remaining num_samples − clients are apportioned by largest remainder (ties to
// the lower client), so sizes sum to num_samples exactly. σ = 0 gives IID sizes (differing by at most one).
// std::invalid_argument when num_samples < clients or σ < 0.
Partition partition_lognormal_quantity(int num_samples, int clients, double sigma, uint64_t seed);

// A domain: the clients of a group share the samples of its labels, IID (shuffled, equal shards).
struct LabelGroup {
  std::string name;              // e.g. "medical"
  std::vector<int32_t> labels;   // e.g. {0, 1, 2, 3, 4}
  int clients = 1;
};

// Shards are in group order: group g's clients are shards [Σ_{h<g} clients_h, Σ_{h≤g} clients_h). Labels
// that belong to no group are dropped (a scenario may model only some domains); their samples are in no
// shard. std::invalid_argument when two groups share a label, a group repeats a label, has no label,
// has fewer than one client, or names a label outside [0, num_classes).
Partition partition_label_groups(const std::vector<int32_t>& labels, int num_classes,
                                 const std::vector<LabelGroup>& groups, uint64_t seed);

// A partition given as lists, e.g. one written by another framework: shard k holds the sample indices
// shards[k] (any order; they are sorted). Samples may be left out. std::invalid_argument, naming the shard
// and the index, when there is no shard, an index lies outside [0, num_samples), or an index appears twice
// (in one shard or in two).
Partition partition_from_shards(std::vector<std::vector<int32_t>> shards, int num_samples);

// histogram[k][c] = number of samples of class c in shard k.
std::vector<std::vector<int>> shard_label_histograms(const Partition& partition, const std::vector<int32_t>& labels,
                                                     int num_classes);

}  // namespace dtsim::models
