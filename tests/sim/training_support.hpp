// A small, fast training run through the whole simulator (Fashion-MNIST subset, the quickstart MLP), for
// strategy tests. Each run happens in a forked child (one SimGrid engine per process).
#pragma once

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/app/run.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::testing {

// `workers` workers on an ideal 25 GB/s star, 2048 training and 200 test samples, SGD with momentum.
inline sim::RunInputs small_training_run(int workers, int batch_per_worker, int64_t steps,
                                         const std::function<void(sim::RunConfig&)>& adjust = nullptr) {
  sim::RunInputs in;
  sim::RunConfig& c = in.config;
  c.name = "small";
  c.seed = 11;
  c.workers = workers;
  c.gpu = {"test-gpu", 10e12, 10e12, 10e12, 40e9, 0.5};
  c.fabric = {"test-fabric", 25e9, 1e-6, 0.0, 1.0};
  c.hidden = {256, 128};
  c.batch_per_worker = batch_per_worker;
  c.epochs = 100;
  c.max_steps = steps;
  c.lr = 0.05;
  c.momentum = 0.9;
  c.weight_decay = 1e-4;
  c.evals_per_epoch = 1;
  if (adjust) adjust(c);
  in.train = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Train, 2048);
  in.test = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Test, 200);
  in.length = sim::run_length(c, in.train.num_samples);
  return in;
}

// What a child run reports back: the final parameters and a few timings.
struct RunReport {
  std::vector<float> params;
  double simulated_time = 0;
  double steps = 0;
  double compute = 0, communication = 0, idle = 0;  // means over workers
  double bytes = 0;
};

inline RunReport run_and_report(const std::function<sim::RunInputs()>& make_inputs) {
  const std::string out = run_in_child([&] {
    const sim::RunInputs in = make_inputs();
    sim::MetricsLog metrics;
    const sim::RunResult r = sim::run_training(in, metrics);
    const sim::WorkerTime t = r.mean_time();
    std::vector<double> head{r.simulated_time_s, static_cast<double>(r.steps), t.compute, t.communication, t.idle,
                             static_cast<double>(r.bytes_sent)};
    return to_bytes(head) + to_bytes(r.final_params);
  });
  const std::vector<double> head = from_bytes<double>(out.substr(0, 6 * sizeof(double)));
  RunReport report;
  report.simulated_time = head[0];
  report.steps = head[1];
  report.compute = head[2];
  report.communication = head[3];
  report.idle = head[4];
  report.bytes = head[5];
  report.params = from_bytes<float>(out.substr(6 * sizeof(double)));
  return report;
}

inline double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) throw std::runtime_error("parameter vectors differ in size");
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace dtsim::testing
