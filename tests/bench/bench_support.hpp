// What the compute benchmarks share: seeded inputs, a FLOP-rate counter, and a reporter that prints Google
// Benchmark's usual table and remembers every run's FLOP rate by name, so that a bench can end with ratios of
// rates measured in the same run (machines are noisy; ratios much less so).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace dtsim::bench {

inline std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["FLOP/s"] = benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

class FlopRateReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const auto it = r.counters.find("FLOP/s");
      if (it != r.counters.end()) rate_[r.benchmark_name()] = it->second.value;
    }
  }

  // The FLOP rate of the run of that full name ("BM_Gemm/64/400/120/manual_time"), 0 when none ran.
  double rate(const std::string& name) const {
    const auto it = rate_.find(name);
    return it == rate_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> rate_;
};

}  // namespace dtsim::bench
