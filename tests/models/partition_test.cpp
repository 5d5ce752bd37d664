// Partitioners: exact cover of the samples, seeded determinism, and the statistical shape each one promises,
// with tolerances derived from the distributions involved.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/partition.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

constexpr int kClasses = 10;

// Labels with unequal class sizes, so that no partitioner can rely on balance.
std::vector<int32_t> skewed_labels(int n) {
  Rng rng(2024, "test-labels");
  std::vector<int32_t> labels(n);
  for (int32_t& y : labels) {
    // Class c has weight c + 1: P(c) = 2(c + 1) / (C(C + 1)).
    const auto r = static_cast<int>(rng.below(kClasses * (kClasses + 1) / 2));
    int c = 0, cumulative = 1;
    while (r >= cumulative) cumulative += ++c + 1;
    y = c;
  }
  return labels;
}

std::vector<int32_t> balanced_labels(int n) {
  std::vector<int32_t> labels(n);
  for (int i = 0; i < n; ++i) labels[i] = i % kClasses;
  return labels;
}

// The shards, concatenated and sorted; also checks that each shard is sorted and has no repeat.
std::vector<int32_t> union_of(const Partition& p) {
  std::vector<int32_t> all;
  for (const auto& shard : p.shards) {
    EXPECT_TRUE(std::is_sorted(shard.begin(), shard.end()));
    all.insert(all.end(), shard.begin(), shard.end());
  }
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int32_t> all_indices(int n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The samples whose label is in `kept`, ascending.
std::vector<int32_t> indices_with_labels(const std::vector<int32_t>& labels, const std::set<int32_t>& kept) {
  std::vector<int32_t> v;
  for (size_t i = 0; i < labels.size(); ++i)
    if (kept.count(labels[i])) v.push_back(static_cast<int32_t>(i));
  return v;
}

double total_variation(const std::vector<int>& counts, const std::vector<double>& reference) {
  const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
  double tv = 0;
  for (size_t c = 0; c < counts.size(); ++c) tv += std::abs(counts[c] / n - reference[c]);
  return tv / 2;
}

double largest_share(const std::vector<int>& counts) {
  const double n = std::accumulate(counts.begin(), counts.end(), 0.0);
  return *std::max_element(counts.begin(), counts.end()) / n;
}

int nonzero_labels(const std::vector<int>& counts) {
  return static_cast<int>(std::count_if(counts.begin(), counts.end(), [](int x) { return x > 0; }));
}

struct NamedPartitioner {
  std::string name;
  std::function<Partition(uint64_t seed)> make;
};

std::vector<NamedPartitioner> every_partitioner(const std::vector<int32_t>& labels) {
  const int n = static_cast<int>(labels.size());
  return {
      {"iid", [n](uint64_t s) { return partition_iid(n, 7, s); }},
      {"dirichlet(0.3)", [&labels](uint64_t s) { return partition_dirichlet(labels, kClasses, 7, 0.3, s); }},
      {"dirichlet(0.1, min 20)",
       [&labels](uint64_t s) { return partition_dirichlet(labels, kClasses, 7, 0.1, s, 20); }},
      {"labels-per-client(2)",
       [&labels](uint64_t s) { return partition_labels_per_client(labels, kClasses, 7, 2, s); }},
      {"lognormal(1.0)", [n](uint64_t s) { return partition_lognormal_quantity(n, 7, 1.0, s); }},
      {"label-groups",
       [&labels](uint64_t s) {
         const std::vector<LabelGroup> groups{{"medical", {0, 1, 2, 3, 4}, 3}, {"finance", {5, 6, 7, 8, 9}, 4}};
         return partition_label_groups(labels, kClasses, groups, s);
       }},
  };
}

TEST(Partition, EveryPartitionerCoversEachSampleOnceAndIsSeeded) {
  const std::vector<int32_t> labels = skewed_labels(5000);
  for (const NamedPartitioner& p : every_partitioner(labels)) {
    SCOPED_TRACE(p.name);
    const Partition a = p.make(11), b = p.make(11), c = p.make(12);
    EXPECT_EQ(a.shards.size(), 7u);
    EXPECT_EQ(union_of(a), all_indices(5000));
    EXPECT_EQ(union_of(c), all_indices(5000));
    EXPECT_EQ(a.shards, b.shards);
    EXPECT_EQ(a.hash, b.hash);
    EXPECT_NE(a.shards, c.shards);
    EXPECT_NE(a.hash, c.hash);
    EXPECT_EQ(a.hash, partition_hash(a.shards));
  }
}

TEST(Partition, HashFollowsTheDocumentedByteLayout) {
  // {{0, 2}, {1}}: shard count 2, then size 2, 0, 2, then size 1, 1; each a little-endian uint32.
  const unsigned char bytes[] = {2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), bytes, sizeof bytes);
  char expected[32];
  std::snprintf(expected, sizeof expected, "crc32:%08lx", static_cast<unsigned long>(crc));
  EXPECT_EQ(partition_hash({{0, 2}, {1}}), expected);
  // Moving one sample, or only a shard boundary, changes the hash.
  EXPECT_NE(partition_hash({{0, 2}, {1}}), partition_hash({{0}, {1, 2}}));
  EXPECT_NE(partition_hash({{0, 1}, {2}}), partition_hash({{0}, {1, 2}}));
  EXPECT_NE(partition_hash({{0, 1, 2}}), partition_hash({{0, 1, 2}, {}}));
}

TEST(Partition, IidGivesShardsWithinOneSampleOfEachOther) {
  for (const int clients : {1, 3, 7, 64}) {
    const Partition p = partition_iid(1000, clients, 5);
    ASSERT_EQ(p.shards.size(), static_cast<size_t>(clients));
    EXPECT_EQ(union_of(p), all_indices(1000));
    size_t lo = 1000, hi = 0;
    for (const auto& s : p.shards) {
      lo = std::min(lo, s.size());
      hi = std::max(hi, s.size());
    }
    EXPECT_LE(hi - lo, 1u) << clients;
  }
  // More clients than samples: some shards are empty, none holds two.
  const Partition tiny = partition_iid(3, 5, 1);
  EXPECT_EQ(union_of(tiny), all_indices(3));
  EXPECT_THROW(partition_iid(10, 0, 1), std::invalid_argument);
}

TEST(Partition, DirichletWithLargeAlphaApproachesIid) {
  // K clients, C balanced classes of m samples. Client k's slice of class c is p_ck·m with p_c ~ Dir(α·1_K),
  // so p_ck ~ Beta(α, (K−1)α) and δ_ck = K·p_ck − 1 has sd s = √((K−1)/(Kα+1)). To first order client k's
  // label distribution is (1 + δ_ck − δ̄_k)/C, whose total variation from uniform is ½·mean_c|δ_ck − δ̄_k|:
  // expectation ≈ ½·√(2/π)·s ≈ 0.4s, sd ≈ s/(2√C)·√(1 − 2/π) ≈ 0.1s. Tolerance s (≈ 6 sd above the mean),
  // plus C/(2·n_k) for the rounding of the cut points (at most one sample per class and client).
  const int clients = 10, n = 100000;
  const double alpha = 1000;
  const std::vector<int32_t> labels = balanced_labels(n);
  const std::vector<double> uniform(kClasses, 1.0 / kClasses);
  const double s = std::sqrt((clients - 1.0) / (clients * alpha + 1.0));
  for (const uint64_t seed : {1, 2, 3}) {
    const Partition p = partition_dirichlet(labels, kClasses, clients, alpha, seed);
    EXPECT_EQ(union_of(p), all_indices(n));
    const auto histograms = shard_label_histograms(p, labels, kClasses);
    for (int k = 0; k < clients; ++k) {
      const double size = static_cast<double>(p.shards[k].size());
      EXPECT_LT(total_variation(histograms[k], uniform), s + kClasses / (2 * size))
          << "seed " << seed << " client " << k;
    }
  }
}

TEST(Partition, DirichletWithSmallAlphaConcentratesLabels) {
  // Each class's proportions ~ Dir(α·1_K). For Kα = 0.5 the largest proportion is ≈ 0.76 on average (the
  // Poisson–Dirichlet(θ = 0.5) limit), so most clients are dominated by one class; IID would give a largest
  // label share of ≈ 1/C = 0.1. The mean over non-empty clients (and 20 seeds) of the largest label share
  // must exceed 0.5, and it must fall as α grows.
  const int clients = 10, n = 20000;
  const std::vector<int32_t> labels = balanced_labels(n);
  std::vector<double> mean_largest;
  for (const double alpha : {0.05, 0.5, 5.0, 1000.0}) {
    double sum = 0;
    int count = 0;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const Partition p = partition_dirichlet(labels, kClasses, clients, alpha, seed);
      for (const auto& h : shard_label_histograms(p, labels, kClasses))
        if (std::accumulate(h.begin(), h.end(), 0) > 0) {
          sum += largest_share(h);
          ++count;
        }
    }
    mean_largest.push_back(sum / count);
  }
  EXPECT_GT(mean_largest[0], 0.5);
  for (size_t i = 1; i < mean_largest.size(); ++i) EXPECT_LT(mean_largest[i], mean_largest[i - 1]) << i;
  EXPECT_LT(mean_largest.back(), 0.1 + 0.05);
}

TEST(Partition, DirichletMinShardSizeRedrawsUntilEveryShardIsBigEnough) {
  // Find a seed whose first draw leaves a shard below 30 samples (mean 100), then ask for 30.
  const std::vector<int32_t> labels = balanced_labels(2000);
  const auto smallest = [](const Partition& p) {
    size_t m = SIZE_MAX;
    for (const auto& s : p.shards) m = std::min(m, s.size());
    return m;
  };
  uint64_t seed = 0;
  while (seed < 100 && smallest(partition_dirichlet(labels, kClasses, 20, 0.5, seed)) >= 30) ++seed;
  ASSERT_LT(seed, 100u) << "no seed gave a small shard; the test needs one";
  const Partition p = partition_dirichlet(labels, kClasses, 20, 0.5, seed, 30);
  EXPECT_EQ(union_of(p), all_indices(2000));
  EXPECT_GE(smallest(p), 30u);
  // With α = 0.001 each class lands on one client (a second client gets ≥ 1 sample of a class with
  // probability ≈ 0.006), so 10 classes cannot fill 20 clients: every redraw fails.
  EXPECT_THROW(partition_dirichlet(labels, kClasses, 20, 0.001, 3, 1), std::invalid_argument);
  EXPECT_THROW(partition_dirichlet(labels, kClasses, 20, 0.5, 3, 101), std::invalid_argument);  // 20·101 > 2000
  EXPECT_THROW(partition_dirichlet(labels, kClasses, 20, 0.0, 3), std::invalid_argument);
  EXPECT_THROW(partition_dirichlet({0, 1, 10}, kClasses, 2, 1.0, 3), std::invalid_argument);
}

TEST(Partition, LabelsPerClientGivesExactlyKLabelsSpreadEvenly) {
  const std::vector<int32_t> labels = skewed_labels(20000);
  for (const int k : {1, 2, 3, 10})
    for (const int clients : {5, 7, 10, 23}) {
      SCOPED_TRACE("k " + std::to_string(k) + " clients " + std::to_string(clients));
      const Partition p = partition_labels_per_client(labels, kClasses, clients, k, 9);
      const auto histograms = shard_label_histograms(p, labels, kClasses);
      std::vector<std::vector<int>> holders_counts(kClasses);  // per label, the count each holder got
      for (const auto& h : histograms) {
        EXPECT_EQ(nonzero_labels(h), k);
        for (int c = 0; c < kClasses; ++c)
          if (h[c] > 0) holders_counts[c].push_back(h[c]);
      }
      std::set<int32_t> held;
      size_t fewest_holders = clients, most_holders = 0;
      for (int c = 0; c < kClasses; ++c) {
        if (holders_counts[c].empty()) continue;
        held.insert(c);
        fewest_holders = std::min(fewest_holders, holders_counts[c].size());
        most_holders = std::max(most_holders, holders_counts[c].size());
        const auto [lo, hi] = std::minmax_element(holders_counts[c].begin(), holders_counts[c].end());
        EXPECT_LE(*hi - *lo, 1) << "label " << c;  // each label's samples are split evenly among its holders
      }
      if (clients * k >= kClasses) {
        EXPECT_EQ(held.size(), static_cast<size_t>(kClasses));
        EXPECT_LE(most_holders - fewest_holders, 1u);
        EXPECT_EQ(union_of(p), all_indices(20000));
      } else {
        EXPECT_EQ(held.size(), static_cast<size_t>(clients * k));
        EXPECT_EQ(union_of(p), indices_with_labels(labels, held));
      }
    }
}

TEST(Partition, LabelsPerClientDropsUnheldLabelsAndRejectsImpossibleRequests) {
  const std::vector<int32_t> labels = balanced_labels(1000);
  const Partition p = partition_labels_per_client(labels, kClasses, 3, 2, 4);  // 6 of 10 labels held
  EXPECT_EQ(union_of(p).size(), 600u);
  EXPECT_THROW(partition_labels_per_client(labels, kClasses, 3, 0, 4), std::invalid_argument);
  EXPECT_THROW(partition_labels_per_client(labels, kClasses, 3, 11, 4), std::invalid_argument);
  // 10 samples, one per label, 20 clients with 5 labels each: every label has 10 holders but one sample.
  EXPECT_THROW(partition_labels_per_client(balanced_labels(10), kClasses, 20, 5, 4), std::invalid_argument);
}

TEST(Partition, RandomLabelAssignmentHoldsOwnLabelPlusDistinctDrawsAndSplitsEachLabelEvenly) {
  const std::vector<int32_t> labels = skewed_labels(20000);
  for (const int k : {1, 2, 3, 10})
    for (const int clients : {4, 10, 23}) {
      SCOPED_TRACE("k " + std::to_string(k) + " clients " + std::to_string(clients));
      const Partition p = partition_labels_per_client(labels, kClasses, clients, k, 5, LabelAssignment::Random);
      const auto histograms = shard_label_histograms(p, labels, kClasses);
      std::vector<int> holders(kClasses, 0);
      for (int i = 0; i < clients; ++i) {
        EXPECT_EQ(nonzero_labels(histograms[i]), k);
        EXPECT_GT(histograms[i][i % kClasses], 0) << "client " << i << " lacks its own label";
        for (int c = 0; c < kClasses; ++c) holders[c] += histograms[i][c] > 0 ? 1 : 0;
      }
      // Each label's n_c samples are split among its h_c holders in runs of ⌊n_c/h_c⌋ or one more.
      const auto per_class = shard_label_histograms(Partition{{all_indices(20000)}, ""}, labels, kClasses)[0];
      std::set<int32_t> held;
      for (int c = 0; c < kClasses; ++c) {
        if (holders[c] == 0) continue;
        held.insert(c);
        for (int i = 0; i < clients; ++i) {
          if (histograms[i][c] == 0) continue;
          EXPECT_GE(histograms[i][c], per_class[c] / holders[c]);
          EXPECT_LE(histograms[i][c], per_class[c] / holders[c] + 1);
        }
      }
      EXPECT_EQ(union_of(p), indices_with_labels(labels, held));
      if (clients >= kClasses) {
        EXPECT_EQ(held.size(), static_cast<size_t>(kClasses));  // i mod C covers every label
      }
      // Seeded: the same seed gives the same shards, another seed other ones.
      EXPECT_EQ(partition_labels_per_client(labels, kClasses, clients, k, 5, LabelAssignment::Random).hash, p.hash);
      if (k > 1 && k < kClasses) {  // k = 1 draws nothing: each held label goes whole to its one holder
        EXPECT_NE(partition_labels_per_client(labels, kClasses, clients, k, 6, LabelAssignment::Random).hash, p.hash);
      }
    }
}

TEST(Partition, RandomLabelAssignmentDrawsHolderCountsAsNiidBenchDoes) {
  // 10 clients, 10 labels, k = 2: label c has its own client plus each of the 9 others with probability 1/9,
  // so P(c has exactly one holder) = (8/9)^9 = 0.3464 and P(three or more) = 1 − (8/9)^9 − 9·(1/9)(8/9)^8
  // = 0.2639. Over 2000 seeds (20,000 labels, correlated only within a seed) the frequencies' standard
  // errors are below 0.004; the tolerance is 0.02. The balanced rule gives every label exactly two holders.
  const std::vector<int32_t> labels = balanced_labels(2000);
  int one = 0, three_or_more = 0, total = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const auto histograms = shard_label_histograms(
        partition_labels_per_client(labels, kClasses, 10, 2, seed, LabelAssignment::Random), labels, kClasses);
    for (int c = 0; c < kClasses; ++c) {
      int h = 0;
      for (const auto& shard : histograms) h += shard[c] > 0 ? 1 : 0;
      one += h == 1;
      three_or_more += h >= 3;
      ++total;
    }
  }
  EXPECT_NEAR(static_cast<double>(one) / total, std::pow(8.0 / 9.0, 9), 0.02);
  EXPECT_NEAR(static_cast<double>(three_or_more) / total, 1 - std::pow(8.0 / 9.0, 9) - std::pow(8.0 / 9.0, 8), 0.02);

  // Uneven holder counts make uneven shards: a client's shard is the sum over its labels of 200 / holders.
  const Partition random = partition_labels_per_client(labels, kClasses, 10, 2, 7, LabelAssignment::Random);
  const Partition balanced = partition_labels_per_client(labels, kClasses, 10, 2, 7);
  const auto size_range = [](const Partition& p) {
    size_t lo = SIZE_MAX, hi = 0;
    for (const auto& s : p.shards) lo = std::min(lo, s.size()), hi = std::max(hi, s.size());
    return hi - lo;
  };
  EXPECT_EQ(size_range(balanced), 0u);
  EXPECT_GT(size_range(random), 0u);
  EXPECT_NE(random.hash, balanced.hash);
}

TEST(Partition, LognormalSizesSumToNAndTheirLogSpreadIsSigma) {
  // Shares are w_k/Σw with log w_k ~ N(0, σ²); with ~5000 samples per client the +1 floor and the rounding
  // move log sizes by < 1e-3, so the sample sd of log size estimates σ with standard error σ/√(2(K−1)).
  const int clients = 400, n = 2000000;
  for (const double sigma : {0.25, 1.0}) {
    const Partition p = partition_lognormal_quantity(n, clients, sigma, 21);
    EXPECT_EQ(union_of(p), all_indices(n));
    std::vector<double> log_size;
    for (const auto& s : p.shards) log_size.push_back(std::log(static_cast<double>(s.size())));
    const double mean = std::accumulate(log_size.begin(), log_size.end(), 0.0) / clients;
    double ss = 0;
    for (const double x : log_size) ss += (x - mean) * (x - mean);
    EXPECT_NEAR(std::sqrt(ss / (clients - 1)), sigma, 5 * sigma / std::sqrt(2.0 * (clients - 1))) << sigma;
  }
}

TEST(Partition, LognormalSpreadGrowsWithSigmaAndEveryClientGetsASample) {
  const int clients = 50, n = 5000;
  double previous_cv = -1;
  for (const double sigma : {0.0, 0.5, 1.0, 2.0, 4.0}) {
    const Partition p = partition_lognormal_quantity(n, clients, sigma, 8);
    EXPECT_EQ(union_of(p), all_indices(n));
    double sum = 0, sum_sq = 0;
    size_t smallest = n, largest = 0;
    for (const auto& s : p.shards) {
      sum += s.size();
      sum_sq += static_cast<double>(s.size()) * s.size();
      smallest = std::min(smallest, s.size());
      largest = std::max(largest, s.size());
    }
    EXPECT_GE(smallest, 1u);
    if (sigma == 0.0) {
      EXPECT_LE(largest - smallest, 1u);
    }
    const double mean = sum / clients, cv = std::sqrt(sum_sq / clients - mean * mean) / mean;
    EXPECT_GT(cv, previous_cv) << sigma;
    previous_cv = cv;
  }
  EXPECT_THROW(partition_lognormal_quantity(4, 5, 1.0, 1), std::invalid_argument);
  EXPECT_THROW(partition_lognormal_quantity(10, 5, -1.0, 1), std::invalid_argument);
}

TEST(Partition, LabelGroupsKeepEachGroupOnItsOwnLabels) {
  const std::vector<int32_t> labels = skewed_labels(20000);
  const std::vector<LabelGroup> groups{{"medical", {0, 1, 2, 3, 4}, 3}, {"finance", {5, 6, 7, 8, 9}, 2}};
  const Partition p = partition_label_groups(labels, kClasses, groups, 6);
  ASSERT_EQ(p.shards.size(), 5u);
  EXPECT_EQ(union_of(p), all_indices(20000));
  const auto histograms = shard_label_histograms(p, labels, kClasses);
  size_t first = 0;
  for (const LabelGroup& g : groups) {
    const std::set<int32_t> own(g.labels.begin(), g.labels.end());
    size_t lo = labels.size(), hi = 0;
    for (size_t k = first; k < first + g.clients; ++k) {
      for (int c = 0; c < kClasses; ++c) {
        // IID within the group: label 0, the rarest, has ≈ 20000/55 ≈ 360 samples shared by 3 clients, so
        // every client has every label of its group (a miss has probability ≈ (2/3)^360); none has a label
        // of another group.
        if (own.count(c)) {
          EXPECT_GT(histograms[k][c], 0) << g.name << " client " << k << " label " << c;
        } else {
          EXPECT_EQ(histograms[k][c], 0) << g.name << " client " << k << " label " << c;
        }
      }
      lo = std::min(lo, p.shards[k].size());
      hi = std::max(hi, p.shards[k].size());
    }
    EXPECT_LE(hi - lo, 1u) << g.name;
    first += g.clients;
  }
}

TEST(Partition, LabelGroupsDropUngroupedLabelsAndRejectOverlaps) {
  const std::vector<int32_t> labels = skewed_labels(3000);
  const Partition p = partition_label_groups(labels, kClasses, {{"a", {0, 1}, 2}, {"b", {7}, 1}}, 1);
  EXPECT_EQ(union_of(p), indices_with_labels(labels, {0, 1, 7}));
  EXPECT_THROW(partition_label_groups(labels, kClasses, {{"a", {0, 1, 2}, 2}, {"b", {2, 3}, 1}}, 1),
               std::invalid_argument);
  EXPECT_THROW(partition_label_groups(labels, kClasses, {{"a", {0, 0}, 2}}, 1), std::invalid_argument);
  EXPECT_THROW(partition_label_groups(labels, kClasses, {{"a", {10}, 2}}, 1), std::invalid_argument);
  EXPECT_THROW(partition_label_groups(labels, kClasses, {{"a", {1}, 0}}, 1), std::invalid_argument);
  EXPECT_THROW(partition_label_groups(labels, kClasses, {{"a", {}, 1}}, 1), std::invalid_argument);
  EXPECT_THROW(partition_label_groups(labels, kClasses, {}, 1), std::invalid_argument);
}

TEST(Partition, LabelHistogramsCountEachShardsLabels) {
  Partition p;
  p.shards = {{0, 1}, {2, 3}, {}};
  const auto h = shard_label_histograms(p, {0, 1, 1, 2}, 3);
  EXPECT_EQ(h, (std::vector<std::vector<int>>{{1, 1, 0}, {0, 1, 1}, {0, 0, 0}}));
  p.shards = {{4}};
  EXPECT_THROW(shard_label_histograms(p, {0, 1, 1, 2}, 3), std::out_of_range);
}

}  // namespace
}  // namespace dtsim::models
