// FedProx Synthetic(α, β): shapes, the 90/10 split, the teacher that labels the data, and the distributions
// of sizes, priors and inputs against their closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "models/synthetic.hpp"

namespace dtsim::models {
namespace {

// argmax_c (x·W + b)_c for W row-major features × classes, summed in feature order; ties to the lower class.
int32_t argmax_logit(const SyntheticDeviceModel& m, const float* x, int features, int classes) {
  int32_t best = 0;
  double best_logit = 0;
  for (int c = 0; c < classes; ++c) {
    double logit = m.bias[c];
    for (int j = 0; j < features; ++j) logit += static_cast<double>(x[j]) * m.weights[j * classes + c];
    if (c == 0 || logit > best_logit) {
      best_logit = logit;
      best = c;
    }
  }
  return best;
}

double sample_variance(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  double ss = 0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  return ss / (v.size() - 1);
}

// The features of one device's samples, train then test.
std::vector<const float*> device_rows(const FederatedData& d, int device) {
  std::vector<const float*> rows;
  for (const int32_t i : d.train_by_device[device]) rows.push_back(d.train.sample(i));
  for (const int32_t i : d.test_by_device[device]) rows.push_back(d.test.sample(i));
  return rows;
}

TEST(Synthetic, DatasetsAreTabularHashedAndSplitNinetyTen) {
  SyntheticSettings s;
  s.alpha = 1;
  s.beta = 1;
  s.seed = 3;
  const FederatedData d = make_fedprox_synthetic(s);
  for (const Dataset* split : {&d.train, &d.test}) {
    EXPECT_EQ(split->num_features, 60);
    EXPECT_EQ(split->num_classes, 10);
    EXPECT_EQ(split->channels, 1);
    EXPECT_EQ(split->height, 1);
    EXPECT_EQ(split->width, 60);
    EXPECT_EQ(split->features.size(), static_cast<size_t>(split->num_samples) * 60);
    EXPECT_EQ(split->labels.size(), static_cast<size_t>(split->num_samples));
    for (const int32_t y : split->labels) ASSERT_TRUE(y >= 0 && y < 10);
    EXPECT_EQ(split->content_hash, dataset_content_hash(*split));
  }
  ASSERT_EQ(d.train_by_device.size(), 30u);
  ASSERT_EQ(d.test_by_device.size(), 30u);
  std::vector<int32_t> train_seen, test_seen;
  for (int i = 0; i < 30; ++i) {
    const int n = synthetic_device_model(s, i).num_samples;
    EXPECT_GE(n, 50);
    // ⌊0.9·n⌋ = n − ⌈n/10⌉ for integers.
    const int expected_test = (n + 9) / 10;
    EXPECT_EQ(d.train_by_device[i].size(), static_cast<size_t>(n - expected_test)) << i;
    EXPECT_EQ(d.test_by_device[i].size(), static_cast<size_t>(expected_test)) << i;
    train_seen.insert(train_seen.end(), d.train_by_device[i].begin(), d.train_by_device[i].end());
    test_seen.insert(test_seen.end(), d.test_by_device[i].begin(), d.test_by_device[i].end());
  }
  std::sort(train_seen.begin(), train_seen.end());
  std::sort(test_seen.begin(), test_seen.end());
  std::vector<int32_t> all_train(d.train.num_samples), all_test(d.test.num_samples);
  std::iota(all_train.begin(), all_train.end(), 0);
  std::iota(all_test.begin(), all_test.end(), 0);
  EXPECT_EQ(train_seen, all_train);
  EXPECT_EQ(test_seen, all_test);
}

TEST(Synthetic, EveryLabelIsTheArgmaxOfTheDevicesTeacher) {
  for (const bool iid : {false, true}) {
    SyntheticSettings s;
    s.alpha = 0.5;
    s.beta = 0.5;
    s.iid = iid;
    s.seed = 4;
    const FederatedData d = make_fedprox_synthetic(s);
    std::vector<int> class_count(10, 0);
    for (int i = 0; i < s.devices; ++i) {
      const SyntheticDeviceModel m = synthetic_device_model(s, i);
      for (const int32_t k : d.train_by_device[i]) {
        ASSERT_EQ(d.train.labels[k], argmax_logit(m, d.train.sample(k), 60, 10)) << "device " << i;
        ++class_count[d.train.labels[k]];
      }
      for (const int32_t k : d.test_by_device[i])
        ASSERT_EQ(d.test.labels[k], argmax_logit(m, d.test.sample(k), 60, 10)) << "device " << i;
    }
    // A teacher is not constant: over 30 devices' data at least two classes occur.
    EXPECT_GE(std::count_if(class_count.begin(), class_count.end(), [](int c) { return c > 0; }), 2);
  }
}

TEST(Synthetic, DeviceSizesFollowFloorOfLognormalPlusFifty) {
  // n − 50 = ⌊L⌋ with ln L ~ N(4, 2²), so for an integer k ≥ 1, P(n − 50 ≥ k) = P(L ≥ k) = ½·erfc((ln k − 4)/(2√2)).
  // Checked at k ≈ e^(4 + 2z) for z = −2..2 over 5000 devices, 5 binomial standard errors.
  SyntheticSettings s;
  s.devices = 5000;
  int fewest = 1 << 30;
  std::vector<int> extra(s.devices);
  for (int i = 0; i < s.devices; ++i) {
    const int n = synthetic_device_model(s, i).num_samples;
    fewest = std::min(fewest, n);
    extra[i] = n - 50;
  }
  EXPECT_GE(fewest, 50);
  for (const int k : {7, 55, 403, 2981}) {
    const double p = 0.5 * std::erfc((std::log(k) - 4.0) / (2.0 * std::sqrt(2.0)));
    const double seen = std::count_if(extra.begin(), extra.end(), [k](int e) { return e >= k; }) / 5000.0;
    EXPECT_NEAR(seen, p, 5 * std::sqrt(p * (1 - p) / 5000)) << "k " << k;
  }
}

TEST(Synthetic, AlphaAndBetaAreStandardDeviationsOfThePriors) {
  // mean_W_i ~ N(0, α²) and B_i ~ N(0, β²) with α, β standard deviations (numpy's `scale`). With α = 2 a
  // variance reading would give Var = 2 instead of 4. Sample variances over D devices have sd σ²·√(2/(D−1)).
  SyntheticSettings s;
  s.alpha = 2;
  s.beta = 0.5;
  s.devices = 4000;
  std::vector<double> model_mean, input_centre;
  double w_z2 = 0, b_z2 = 0, v_z2 = 0, w_spread = 0, v_spread = 0;
  const int checked = 200;  // devices whose entries are also checked around their own prior means
  for (int i = 0; i < s.devices; ++i) {
    const SyntheticDeviceModel m = synthetic_device_model(s, i);
    model_mean.push_back(m.model_mean);
    input_centre.push_back(m.input_centre);
    if (i >= checked) continue;
    ASSERT_EQ(m.weights.size(), 600u);
    ASSERT_EQ(m.bias.size(), 10u);
    ASSERT_EQ(m.input_mean.size(), 60u);
    // Entries are the prior mean plus N(0, 1): their averages are N(mean, 1/count), z² has mean 1.
    const auto z2 = [](const std::vector<double>& v, double mean) {
      const double avg = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
      return (avg - mean) * (avg - mean) * v.size();
    };
    w_z2 += z2(m.weights, m.model_mean);
    b_z2 += z2(m.bias, m.model_mean);  // mean_b_i = mean_W_i
    v_z2 += z2(m.input_mean, m.input_centre);
    w_spread += sample_variance(m.weights);
    v_spread += sample_variance(m.input_mean);
  }
  const double d = s.devices;
  EXPECT_NEAR(std::accumulate(model_mean.begin(), model_mean.end(), 0.0) / d, 0.0, 5 * 2 / std::sqrt(d));
  EXPECT_NEAR(sample_variance(model_mean), 4.0, 5 * 4.0 * std::sqrt(2 / (d - 1)));
  EXPECT_NEAR(sample_variance(input_centre), 0.25, 5 * 0.25 * std::sqrt(2 / (d - 1)));
  // A mean of `checked` χ²₁ values: sd √(2/checked) = 0.1.
  for (const double z2_mean : {w_z2 / checked, b_z2 / checked, v_z2 / checked})
    EXPECT_NEAR(z2_mean, 1.0, 5 * std::sqrt(2.0 / checked));
  // Pooled within-device variances: Var(s²) = 2/(count − 1) per device, averaged over `checked` devices.
  EXPECT_NEAR(w_spread / checked, 1.0, 5 * std::sqrt(2.0 / 599 / checked));
  EXPECT_NEAR(v_spread / checked, 1.0, 5 * std::sqrt(2.0 / 59 / checked));
}

TEST(Synthetic, InputsOfEachDeviceHaveMeanVAndCovarianceSigma) {
  // Within device i, x_j ~ N(v_ij, Σ_jj) independently. Per (device, feature): the sample mean gives
  // z = (x̄ − v)/√(Σ/n) ~ N(0, 1), so E z² = 1 and Var z² = 2; the sample variance gives
  // z = (s²/Σ − 1)·√((n−1)/2) with E z² = 1 and Var z² = 2 + 12/(n−1) ≤ 2.25 (χ² kurtosis). Each mean of z²
  // over 30 × 60 values must be within 5 of its standard errors of 1.
  SyntheticSettings s;
  s.alpha = 1;
  s.beta = 1;
  s.seed = 5;
  const FederatedData d = make_fedprox_synthetic(s);
  const std::vector<double> sigma = synthetic_input_variances(60);
  EXPECT_DOUBLE_EQ(sigma[0], 1.0);
  // (j + 1)^−1.2, computed by dtsim's portable pow (gpu/portable_math.hpp): within a few units in the last place
  // of the C library's, not always the same bits.
  EXPECT_NEAR(sigma[59], std::pow(60.0, -1.2), 1e-14 * std::pow(60.0, -1.2));
  double mean_z2 = 0, var_z2 = 0;
  for (int i = 0; i < s.devices; ++i) {
    const SyntheticDeviceModel m = synthetic_device_model(s, i);
    const std::vector<const float*> rows = device_rows(d, i);
    const double n = rows.size();
    for (int j = 0; j < 60; ++j) {
      std::vector<double> column;
      for (const float* x : rows) column.push_back(x[j]);
      const double mean = std::accumulate(column.begin(), column.end(), 0.0) / n;
      mean_z2 += (mean - m.input_mean[j]) * (mean - m.input_mean[j]) * n / sigma[j];
      const double z = (sample_variance(column) / sigma[j] - 1) * std::sqrt((n - 1) / 2);
      var_z2 += z * z;
    }
  }
  const double count = 30 * 60;
  EXPECT_NEAR(mean_z2 / count, 1.0, 5 * std::sqrt(2 / count));
  EXPECT_NEAR(var_z2 / count, 1.0, 5 * std::sqrt(2.25 / count));
}

TEST(Synthetic, IidVariantSharesOneTeacherAndCentresInputsAtZero) {
  // With v = 0 for every device, the pooled x_j ~ N(0, Σ_jj): mean within 5·√(Σ/N), variance within
  // 5·Σ·√(2/(N−1)).
  SyntheticSettings s;
  s.iid = true;
  s.alpha = 3;  // ignored by the IID variant
  s.devices = 60;
  s.seed = 6;
  const SyntheticDeviceModel first = synthetic_device_model(s, 0);
  for (int i = 1; i < s.devices; ++i) {
    const SyntheticDeviceModel m = synthetic_device_model(s, i);
    ASSERT_EQ(m.weights, first.weights);
    ASSERT_EQ(m.bias, first.bias);
    ASSERT_EQ(m.input_mean, std::vector<double>(60, 0.0));
  }
  const FederatedData d = make_fedprox_synthetic(s);
  const std::vector<double> sigma = synthetic_input_variances(60);
  const double n = d.train.num_samples + d.test.num_samples;
  for (int j = 0; j < 60; ++j) {
    std::vector<double> column;
    for (const Dataset* split : {&d.train, &d.test})
      for (int k = 0; k < split->num_samples; ++k) column.push_back(split->sample(k)[j]);
    const double mean = std::accumulate(column.begin(), column.end(), 0.0) / n;
    EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(sigma[j] / n)) << j;
    EXPECT_NEAR(sample_variance(column), sigma[j], 5 * sigma[j] * std::sqrt(2 / (n - 1))) << j;
  }
}

TEST(Synthetic, SeededAndEachDeviceIndependentOfTheOthers) {
  SyntheticSettings s;
  s.alpha = s.beta = 0.5;
  s.devices = 8;
  const FederatedData a = make_fedprox_synthetic(s), b = make_fedprox_synthetic(s);
  EXPECT_EQ(a.train.features, b.train.features);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_EQ(a.train.content_hash, b.train.content_hash);
  EXPECT_EQ(a.test.content_hash, b.test.content_hash);
  SyntheticSettings other = s;
  other.seed = 2;
  const FederatedData c = make_fedprox_synthetic(other);
  EXPECT_NE(a.train.content_hash, c.train.content_hash);
  EXPECT_NE(a.test.content_hash, c.test.content_hash);
  // β moves the inputs, so it changes the data.
  other = s;
  other.beta = 1;
  EXPECT_NE(make_fedprox_synthetic(other).train.content_hash, a.train.content_hash);
  // A device's data comes from its own streams: device 2 is the same with 8 devices or with 3.
  other = s;
  other.devices = 3;
  const FederatedData fewer = make_fedprox_synthetic(other);
  ASSERT_EQ(fewer.train_by_device[2].size(), a.train_by_device[2].size());
  for (size_t k = 0; k < a.train_by_device[2].size(); ++k) {
    const float* x = a.train.sample(a.train_by_device[2][k]);
    const float* y = fewer.train.sample(fewer.train_by_device[2][k]);
    ASSERT_TRUE(std::equal(x, x + 60, y)) << k;
  }
}

TEST(Synthetic, AlphaCannotChangeTheLabels) {
  // W_i = mean_W_i + Z and b_i = mean_W_i + Z' add mean_W_i·(Σ_j x_j + 1) to every class's logit alike, and
  // argmax (like softmax) is invariant to a common shift. With the same seed, α = 0 and α = 5 draw the same
  // Z, Z', v and x, so the data sets must be identical even though the teachers differ.
  SyntheticSettings s;
  s.beta = 0.5;
  s.devices = 10;
  SyntheticSettings shifted = s;
  shifted.alpha = 5;
  const FederatedData a = make_fedprox_synthetic(s), b = make_fedprox_synthetic(shifted);
  EXPECT_EQ(a.train.labels, b.train.labels);
  EXPECT_EQ(a.test.labels, b.test.labels);
  EXPECT_EQ(a.train.features, b.train.features);
  EXPECT_NE(synthetic_device_model(s, 0).weights, synthetic_device_model(shifted, 0).weights);
  EXPECT_NE(a.train.name, b.train.name);
}

TEST(Synthetic, RejectsSettingsThatCannotGenerateData) {
  const auto with = [](auto change) {
    SyntheticSettings s;
    change(s);
    return s;
  };
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.devices = 0; })), std::invalid_argument);
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.classes = 1; })), std::invalid_argument);
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.features = 0; })), std::invalid_argument);
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.alpha = -1; })), std::invalid_argument);
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.beta = -0.1; })), std::invalid_argument);
  EXPECT_THROW(make_fedprox_synthetic(with([](SyntheticSettings& s) { s.min_samples = 0; })), std::invalid_argument);
  EXPECT_THROW(synthetic_device_model(SyntheticSettings{}, 30), std::out_of_range);
}

}  // namespace
}  // namespace dtsim::models
