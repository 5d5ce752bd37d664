// The Synthetic(α, β) federated data set of Li et al., "Federated Optimization in Heterogeneous Networks"
// (FedProx, MLSys 2020), seeded. Each device has its own softmax-regression "teacher" (W_i, b_i) and its own
// input mean v_i; α controls how much the teachers differ between devices, β how much the inputs do.
//
// α and β are standard deviations, not variances: the paper writes u_k ~ N(0, α), and the reference
// generator (litian96/FedProx, data/synthetic_*/generate_synthetic.py) draws it as
// np.random.normal(0, alpha, NUM_USER), whose second argument is numpy's `scale`, a standard deviation.
// Likewise lognormal(4, 2) is numpy's lognormal(mean=4, sigma=2): exp of a normal with mean 4 and sd 2.
//
// Per device i, each from its own stream Rng(seed, purpose, i) so that a device's data does not depend on
// how many devices there are or on the order in which they are generated:
//   "synthetic-size"        n_i = ⌊exp(4 + 2·Z)⌋ + 50
//   "synthetic-prior"       mean_W_i = α·Z, then B_i = β·Z; mean_b_i = mean_W_i
//   "synthetic-model"       W_i[j][c] = mean_W_i + Z (row-major, features × classes), then b_i[c] = mean_b_i + Z
//   "synthetic-input-mean"  v_i[j] = B_i + Z
//   "synthetic-inputs"      x[s][j] = v_i[j] + √Σ_jj · Z, sample by sample, with Σ_jj = (j+1)^−1.2
// and y = argmax_c (x·W_i + b_i)_c (softmax is monotone, so it is skipped; a tie goes to the lower class).
//
// Note (true of the reference too): mean_W_i = mean_b_i is one scalar per device, so it adds
// mean_W_i·(Σ_j x_j + 1) to every class's logit alike and cannot change y or even softmax(x·W_i + b_i). With
// a fixed seed, changing α changes the teachers but not the data; the devices' teachers differ through their
// independent N(0, 1) parts for every α, including α = 0. Heterogeneity in the data comes from those parts,
// from β (input means) and from the sample counts.
// The IID variant ignores α and β: every device uses one (W, b) from the stream ("synthetic-global-model", 0),
// and v_i = 0. As in the reference, the non-IID variant with α = β = 0 still gives each device its own W_i.
//
// Labels are computed from the features after they are rounded to float, so the stored data is exactly
// consistent with the stored teacher. Each device keeps its first ⌊9·n_i/10⌋ samples (integer arithmetic)
// for training and the rest for testing; the reference rounds the same way (int(0.9·n)) after a shuffle,
// which we skip because a device's samples are already i.i.d.
#pragma once

#include <cstdint>
#include <vector>

#include "models/dataset.hpp"

namespace dtsim::models {

struct SyntheticSettings {
  double alpha = 0;  // standard deviation of mean_W_i (and mean_b_i) across devices
  double beta = 0;   // standard deviation of B_i, the centre of device i's input mean
  bool iid = false;
  int devices = 30;
  int features = 60;
  int classes = 10;
  // Samples per device: ⌊lognormal(size_log_mean, size_log_sd)⌋ + min_samples. The defaults are the paper's;
  // smaller values make quick test data.
  double size_log_mean = 4;
  double size_log_sd = 2;
  int min_samples = 50;
  uint64_t seed = 1;
};

// Everything that generated one device's data. Recomputed on demand from the seeded streams, so tests and
// summaries can inspect a device without generating its samples.
struct SyntheticDeviceModel {
  int num_samples = 0;
  double model_mean = 0;            // mean_W_i = mean_b_i (0 in the IID variant)
  double input_centre = 0;          // B_i (0 in the IID variant)
  std::vector<double> weights;      // W_i, features × classes, row-major
  std::vector<double> bias;         // b_i, classes
  std::vector<double> input_mean;   // v_i, features
};

// Per-device data as one train and one test Dataset (devices concatenated in order) plus, per device, the
// indices of its samples in each. Both datasets are tabular (channels = height = 1, width = features) and
// carry their content hashes.
struct FederatedData {
  Dataset train, test;
  std::vector<std::vector<int32_t>> train_by_device, test_by_device;
};

// Throws std::invalid_argument on settings that cannot generate data (no devices, fewer than 2 classes,
// negative α, β or size parameters, ...).
FederatedData make_fedprox_synthetic(const SyntheticSettings& settings);

SyntheticDeviceModel synthetic_device_model(const SyntheticSettings& settings, int device);

// Σ_jj = (j+1)^−1.2, the input variance of feature j.
std::vector<double> synthetic_input_variances(int features);

}  // namespace dtsim::models
