#include "evaluation.hpp"

#include <algorithm>
#include <numeric>

namespace dtsim::models {

template <class T>
EvalResult evaluate_dataset(const Network<T>& net, Ops<T>& ops, Workspace<T>& ws, const T* params, const Dataset& data,
                            NumberFormat activations) {
  const int chunk = ws.max_batch;
  std::vector<int32_t> indices(chunk);
  std::vector<T> features(static_cast<size_t>(chunk) * data.num_features);
  std::vector<int32_t> labels(chunk);
  double loss = 0.0;
  int64_t correct = 0;
  for (int start = 0; start < data.num_samples; start += chunk) {
    const int n = std::min(chunk, data.num_samples - start);
    std::iota(indices.begin(), indices.begin() + n, start);
    gather_batch(data, indices.data(), n, features.data(), labels.data());
    const LossSums sums = net.evaluate(ops, ws, params, features.data(), labels.data(), n, activations);
    loss += sums.loss;
    correct += sums.correct;
  }
  EvalResult r;
  r.samples = data.num_samples;
  if (r.samples > 0) {
    r.loss = loss / r.samples;
    r.accuracy = static_cast<double>(correct) / r.samples;
  }
  return r;
}

template EvalResult evaluate_dataset<float>(const Network<float>&, Ops<float>&, Workspace<float>&, const float*,
                                            const Dataset&, NumberFormat);
template EvalResult evaluate_dataset<double>(const Network<double>&, Ops<double>&, Workspace<double>&, const double*,
                                             const Dataset&, NumberFormat);

}  // namespace dtsim::models
