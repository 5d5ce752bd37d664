#include "synthetic.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "gpu/portable_math.hpp"
#include "models/random.hpp"

namespace dtsim::models {
namespace {

void validate(const SyntheticSettings& s) {
  if (s.devices < 1) throw std::invalid_argument("synthetic data needs at least one device");
  if (s.features < 1) throw std::invalid_argument("synthetic data needs at least one feature");
  if (s.classes < 2) throw std::invalid_argument("synthetic data needs at least two classes");
  if (!(s.alpha >= 0) || !(s.beta >= 0) || !std::isfinite(s.alpha) || !std::isfinite(s.beta))
    throw std::invalid_argument("synthetic alpha and beta are standard deviations: finite and >= 0");
  if (!(s.size_log_sd >= 0) || !std::isfinite(s.size_log_sd) || !std::isfinite(s.size_log_mean))
    throw std::invalid_argument("synthetic size_log_sd must be finite and >= 0, size_log_mean finite");
  if (s.min_samples < 1) throw std::invalid_argument("synthetic min_samples must be >= 1");
}

int device_sample_count(const SyntheticSettings& s, int device) {
  Rng rng(s.seed, "synthetic-size", static_cast<uint64_t>(device));
  const double extra = std::floor(rng.lognormal(s.size_log_mean, s.size_log_sd));
  // A draw this large would need gigabytes per device; refuse rather than overflow the index type.
  if (extra > std::numeric_limits<int32_t>::max() - s.min_samples)
    throw std::invalid_argument("synthetic device size overflows 32-bit indices; lower size_log_mean/sd");
  return static_cast<int>(extra) + s.min_samples;
}

// Draws W (features × classes, row-major) and then b, every entry `mean` + a standard normal.
void draw_teacher(Rng& rng, double mean, int features, int classes, SyntheticDeviceModel& model) {
  model.weights.resize(static_cast<size_t>(features) * classes);
  for (double& w : model.weights) w = mean + rng.normal();
  model.bias.resize(classes);
  for (double& b : model.bias) b = mean + rng.normal();
}

int32_t teacher_label(const SyntheticDeviceModel& model, const float* x, int features, int classes) {
  int32_t best = 0;
  double best_logit = -std::numeric_limits<double>::infinity();
  for (int c = 0; c < classes; ++c) {
    double logit = model.bias[c];
    for (int j = 0; j < features; ++j) logit += static_cast<double>(x[j]) * model.weights[j * classes + c];
    if (logit > best_logit) {  // strict: ties go to the lower class, as numpy's argmax
      best_logit = logit;
      best = c;
    }
  }
  return best;
}

Dataset empty_tabular(const SyntheticSettings& s, const std::string& name) {
  Dataset d;
  d.name = name;
  d.num_features = s.features;
  d.num_classes = s.classes;
  d.channels = 1;
  d.height = 1;
  d.width = s.features;
  return d;
}

std::string dataset_name(const SyntheticSettings& s, const char* split) {
  char buf[96];
  if (s.iid)
    std::snprintf(buf, sizeof buf, "fedprox-synthetic-iid/%s", split);
  else
    std::snprintf(buf, sizeof buf, "fedprox-synthetic(%g,%g)/%s", s.alpha, s.beta, split);
  return buf;
}

}  // namespace

std::vector<double> synthetic_input_variances(int features) {
  std::vector<double> variances(features);
  for (int j = 0; j < features; ++j) variances[j] = portable::pow(static_cast<double>(j + 1), -1.2);
  return variances;
}

SyntheticDeviceModel synthetic_device_model(const SyntheticSettings& s, int device) {
  validate(s);
  if (device < 0 || device >= s.devices) throw std::out_of_range("synthetic device index out of range");
  const auto id = static_cast<uint64_t>(device);
  SyntheticDeviceModel model;
  model.num_samples = device_sample_count(s, device);
  model.input_mean.assign(s.features, 0.0);
  if (s.iid) {
    Rng rng(s.seed, "synthetic-global-model", 0);
    draw_teacher(rng, 0.0, s.features, s.classes, model);
    return model;
  }
  Rng prior(s.seed, "synthetic-prior", id);
  model.model_mean = s.alpha * prior.normal();
  model.input_centre = s.beta * prior.normal();
  Rng teacher(s.seed, "synthetic-model", id);
  draw_teacher(teacher, model.model_mean, s.features, s.classes, model);
  Rng input_mean(s.seed, "synthetic-input-mean", id);
  for (double& v : model.input_mean) v = model.input_centre + input_mean.normal();
  return model;
}

FederatedData make_fedprox_synthetic(const SyntheticSettings& s) {
  validate(s);
  const std::vector<double> variances = synthetic_input_variances(s.features);
  std::vector<double> sds(s.features);
  for (int j = 0; j < s.features; ++j) sds[j] = std::sqrt(variances[j]);

  FederatedData out;
  out.train = empty_tabular(s, dataset_name(s, "train"));
  out.test = empty_tabular(s, dataset_name(s, "test"));
  out.train_by_device.resize(s.devices);
  out.test_by_device.resize(s.devices);
  std::vector<float> x(s.features);
  for (int device = 0; device < s.devices; ++device) {
    const SyntheticDeviceModel model = synthetic_device_model(s, device);
    const int n = model.num_samples;
    const int n_train = static_cast<int>(static_cast<int64_t>(n) * 9 / 10);
    Rng inputs(s.seed, "synthetic-inputs", static_cast<uint64_t>(device));
    for (int sample = 0; sample < n; ++sample) {
      for (int j = 0; j < s.features; ++j) x[j] = static_cast<float>(model.input_mean[j] + sds[j] * inputs.normal());
      const int32_t y = teacher_label(model, x.data(), s.features, s.classes);
      const bool to_train = sample < n_train;
      Dataset& split = to_train ? out.train : out.test;
      auto& indices = to_train ? out.train_by_device[device] : out.test_by_device[device];
      if (split.num_samples == std::numeric_limits<int32_t>::max())
        throw std::invalid_argument("synthetic data set exceeds 2^31 samples");
      indices.push_back(split.num_samples++);
      split.features.insert(split.features.end(), x.begin(), x.end());
      split.labels.push_back(y);
    }
  }
  out.train.content_hash = dataset_content_hash(out.train);
  out.test.content_hash = dataset_content_hash(out.test);
  return out;
}

}  // namespace dtsim::models
