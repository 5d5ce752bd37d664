#include "sim/strategies/sync/weight_gathers.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace dtsim::sim {

std::vector<Bucket> weight_units(const std::vector<Bucket>& buckets, const std::vector<double>& segment_weight_bytes,
                                 double unit_bytes) {
  std::vector<Bucket> units;
  const auto add = [&](size_t first, size_t count) {
    double bytes = 0;
    for (size_t i = first; i < first + count; ++i) bytes += segment_weight_bytes.at(i);
    Bucket unit;
    unit.size = static_cast<size_t>(std::llround(bytes));
    unit.first_segment = first;
    unit.segments = count;
    units.push_back(unit);
  };
  // Segments [first, first + count) in runs of at least unit_bytes, the last run what is left.
  const auto cut = [&](size_t first, size_t count) {
    size_t start = first;
    double bytes = 0;
    for (size_t i = first; i < first + count; ++i) {
      bytes += segment_weight_bytes.at(i);
      if (bytes >= unit_bytes && i + 1 < first + count) {
        add(start, i + 1 - start);
        start = i + 1;
        bytes = 0;
      }
    }
    add(start, first + count - start);
  };
  size_t next = 0;
  for (const Bucket& b : buckets) {
    cut(b.first_segment, b.segments);
    next = b.first_segment + b.segments;
  }
  if (next < segment_weight_bytes.size()) cut(next, segment_weight_bytes.size() - next);
  return units;
}

double WeightGathers::backward_over(int rank, int64_t step, size_t first, size_t count, double whole, int& next_unit,
                                    const std::function<double(size_t)>& segment_flops,
                                    const std::function<void(double)>& compute) {
  const int from = next_unit;
  while (next_unit < units() && unit(next_unit).first_segment < first + count) ++next_unit;
  double waited = 0;
  if (next_unit - from == 1) {
    waited += before_backward(rank, from, step);
    if (whole > 0) compute(whole);
    return waited;
  }
  for (int u = from; u < next_unit; ++u) {
    waited += before_backward(rank, u, step);
    const double flops = over_segments(u, segment_flops);
    if (flops > 0) compute(flops);
  }
  return waited;
}

WeightGathers::WeightGathers(const Platform& platform, std::vector<Bucket> units, MakeCollective make, int ahead)
    : streams_(platform, units, 1.0, std::move(make), nullptr, CollectiveKind::AllGather),
      ahead_(ahead),
      backward_base_(static_cast<size_t>(platform.num_workers()), 0) {
  if (units.empty()) throw std::invalid_argument("ZeRO-3: no units of weights to gather");
  if (ahead < 1) throw std::invalid_argument("ZeRO-3: gathers must run at least one unit ahead");
}

double WeightGathers::wait_for(int rank, int count) {
  const double start = simgrid::s4u::Engine::get_clock();
  streams_.wait_for(rank, count);
  return simgrid::s4u::Engine::get_clock() - start;
}

double WeightGathers::forward(int rank, int64_t step, const std::function<void(int unit)>& compute) {
  const int n = units(), base = streams_.handed(rank);
  double waited = 0;
  streams_.hand(rank, n - 1, step);
  for (int u = n - 2; u >= std::max(0, n - ahead_); --u) streams_.hand(rank, u, step);  // all but the last ahead
  for (int k = 0; k < n; ++k) {
    const int u = n - 1 - k;
    if (u - ahead_ >= 0) streams_.hand(rank, u - ahead_, step);  // prefetch while this unit computes
    waited += wait_for(rank, base + k + 1);
    compute(u);
  }
  return waited;
}

double WeightGathers::before_backward(int rank, int unit, int64_t step) {
  int& base = backward_base_[static_cast<size_t>(rank)];
  if (unit == 0) {
    base = streams_.handed(rank);
    for (int u = 0; u < std::min(ahead_, units()); ++u) streams_.hand(rank, u, step);
  }
  if (unit + ahead_ < units()) streams_.hand(rank, unit + ahead_, step);
  return wait_for(rank, base + unit + 1);
}

}  // namespace dtsim::sim
