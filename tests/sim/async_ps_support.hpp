// Running the asynchronous parameter server in a forked child (one SimGrid engine per process) and bringing
// back what the tests check: the summary's strategy details, metrics rows, worker times and the final
// parameters bit for bit.
#pragma once

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "models/network.hpp"
#include "sim/app/run.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim::ps_testing {

// Zero latency: equal workers then see equal transfer times, so the staleness pattern is exact.
inline FabricSpec zero_latency_fabric() { return {"zero-latency", 25e9, 0.0, 0.0, 1.0}; }
// A slow "GPU" on a fast fabric: compute dominates, so speed differences decide the order of events.
inline GpuSpec slow_gpu() { return {"slow-gpu", 1e10, 1e10, 1e10, 40e9, 0.5}; }

// W workers training an MLP 784-64-10 (4 tensors) on 2048 Fashion-MNIST samples for `steps` global steps'
// worth of gradients (steps × W gradients in all).
inline RunInputs mlp_run(int workers, int steps, int batch_per_worker = 16) {
  RunInputs in;
  RunConfig& c = in.config;
  c.name = "async-ps-test";
  c.seed = 7;
  c.device = gpu::Device::Cpu;  // bit-for-bit comparisons with the CPU reference
  c.workers = workers;
  c.gpu = slow_gpu();
  c.fabric = zero_latency_fabric();
  c.hidden = {64};
  c.batch_per_worker = batch_per_worker;
  c.epochs = 100;
  c.max_steps = steps;
  c.lr = 0.05;
  c.momentum = 0.0;
  c.evals_per_epoch = 1;
  c.strategy = Strategy::AsyncPs;
  in.train = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Train, 2048);
  in.test = models::load_fashion_mnist("/usr/share/datasets/fashion-mnist", models::Split::Test, 200);
  in.length = run_length(c, in.train.num_samples);
  return in;
}

struct Outcome {
  double sim_time = 0.0;
  int64_t steps = 0;
  nlohmann::json details;
  std::vector<std::string> rows;  // metrics.csv rows
  std::vector<WorkerTime> times;
  std::vector<float> params;

  const nlohmann::json& worker(int w) const { return details["workers"][static_cast<size_t>(w)]; }
};

inline std::string encode(const RunResult& r) {
  nlohmann::json j;
  j["sim_time"] = r.simulated_time_s;
  j["steps"] = r.steps;
  j["details"] = r.strategy_details;
  j["rows"] = nlohmann::json::array();
  for (const EvalPoint& p : r.points) j["rows"].push_back(MetricsLog::csv_row(p));
  for (const WorkerTime& t : r.worker_time) j["times"].push_back({t.compute, t.communication, t.idle});
  std::vector<uint32_t> bits(r.final_params.size());
  std::memcpy(bits.data(), r.final_params.data(), bits.size() * sizeof(float));
  j["param_bits"] = bits;
  return j.dump();
}

inline Outcome decode(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  Outcome o;
  o.sim_time = j["sim_time"];
  o.steps = j["steps"];
  o.details = j["details"];
  o.rows = j["rows"].get<std::vector<std::string>>();
  if (j.contains("times"))
    for (const auto& t : j["times"]) o.times.push_back({t[0].get<double>(), t[1].get<double>(), t[2].get<double>()});
  const std::vector<uint32_t> bits = j["param_bits"];
  o.params.resize(bits.size());
  std::memcpy(o.params.data(), bits.data(), bits.size() * sizeof(float));
  return o;
}

// The network objective of the inputs (run_training builds the same one).
inline Outcome run(const RunInputs& in) {
  return decode(dtsim::testing::run_in_child([&] {
    MetricsLog metrics;
    return encode(run_training(in, metrics));
  }));
}

// Any objective, built in the child on the CPU backend by `make`.
template <class Make>
Outcome run_with(const RunInputs& in, Make make) {
  return decode(dtsim::testing::run_in_child([&] {
    gpu::BackendChoice backend = gpu::make_backend(gpu::Device::Cpu);
    auto objective = make(*backend.ops);
    MetricsLog metrics;
    return encode(run_training_with(in, metrics, *backend.ops, *objective));
  }));
}

}  // namespace dtsim::sim::ps_testing
