#include "sim/strategies/timing/sync_timing.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

TimingSpec timing_spec(const models::Workload& w, const models::MemorySetup& setup, const models::DeviceRates& rates,
                       double speed) {
  const models::GradientTimeline t = models::gradient_timeline(w, setup, rates);
  std::vector<std::size_t> offsets;  // of each layer's trained values in the flat vector, forward order
  std::size_t offset = 0;
  for (const auto& l : w.layers) {
    offsets.push_back(offset);
    offset += l.trainable;
  }
  TimingSpec spec;
  spec.forward_flops = t.forward * speed;
  for (std::size_t i = 0; i < t.backward.size(); ++i) {
    const auto layer = static_cast<std::size_t>(t.trained_layers[i]);
    spec.segments.push_back({offsets[layer], static_cast<std::size_t>(w.layers[layer].trainable), t.backward[i] * speed});
  }
  if (t.tail > 0) spec.segments.push_back({0, 0, t.tail * speed});  // no values: run_sync_timing's tail
  spec.optimizer_flops = t.optimizer * speed;  // this worker's shard with ZeRO (setup.zero_stage)
  spec.bytes_per_value = setup.gradient_bytes;
  spec.zero_stage = setup.zero_stage;
  if (setup.zero_stage > 0) spec.gathered_bytes = static_cast<double>(w.trainable()) * setup.weight_bytes;
  return spec;
}

namespace {

// How many of the spec's last segments carry no values: backward work after the last trained value (a
// frozen embedding under LoRA), which belongs to no bucket and runs after every bucket has been handed.
size_t valued_segments(const TimingSpec& spec) {
  size_t n = spec.segments.size();
  while (n > 0 && spec.segments[n - 1].size == 0) --n;
  return n;
}

}  // namespace

std::vector<Bucket> timing_buckets(const TimingSpec& spec) {
  const std::vector<models::GradientSegment> valued(spec.segments.begin(),
                                                    spec.segments.begin() + static_cast<long>(valued_segments(spec)));
  return plan_buckets(valued, spec.bucket_bytes, spec.bytes_per_value);
}

TimingOutcome run_sync_timing(const Platform& platform, const TimingSpec& spec, MakeCollective make) {
  if (spec.steps < 1) throw std::invalid_argument("timing: at least one step");
  double tail_flops = 0;
  for (size_t i = valued_segments(spec); i < spec.segments.size(); ++i) tail_flops += spec.segments[i].backward_flops;
  const std::vector<Bucket> buckets = timing_buckets(spec);
  if (spec.zero_stage > 2) throw std::invalid_argument("timing: ZeRO stage 3 is not simulated");
  const bool zero = spec.zero_stage > 0;
  auto streams = std::make_unique<BucketStreams>(platform, buckets, spec.bytes_per_value, make, nullptr,
                                                 zero ? CollectiveKind::ReduceScatter : CollectiveKind::Allreduce);
  std::unique_ptr<Collective> gather = zero ? make(CollectiveKind::AllGather, "params") : nullptr;

  const int n = platform.num_workers();
  TimingOutcome out;
  out.buckets = streams->size();
  out.step_end_s.assign(spec.steps, 0.0);
  std::vector<double> compute(n, 0.0), exposed(n, 0.0);
  for (int r = 0; r < n; ++r) {
    streams->start(r, "stream" + std::to_string(r));
    sg4::Actor::create("worker" + std::to_string(r), platform.workers[r], [&, r] {
      for (int step = 0; step < spec.steps; ++step) {
        const double start = sg4::Engine::get_clock();
        sg4::this_actor::execute(spec.forward_flops);
        for (int b = 0; b < streams->size(); ++b) {
          sg4::this_actor::execute(streams->bucket(b).backward_flops);
          if (spec.overlap) streams->hand(r, b, step);
        }
        if (tail_flops > 0) sg4::this_actor::execute(tail_flops);
        const double backward_end = sg4::Engine::get_clock();
        if (!spec.overlap)
          for (int b = 0; b < streams->size(); ++b) streams->hand(r, b, step);
        streams->wait_all(r);
        const double reduced = sg4::Engine::get_clock();
        sg4::this_actor::execute(spec.optimizer_flops);
        const double updated = sg4::Engine::get_clock();
        if (gather) gather->run(r, static_cast<uint64_t>(spec.gathered_bytes));
        const double end = sg4::Engine::get_clock();
        compute[r] += (backward_end - start) + (updated - reduced);
        exposed[r] += (reduced - backward_end) + (end - updated);
        out.step_end_s[step] = std::max(out.step_end_s[step], end);
      }
    });
  }
  sg4::Engine::get_instance()->run();
  for (int r = 0; r < n; ++r) {
    out.compute_s += compute[r] / (static_cast<double>(n) * spec.steps);
    out.exposed_s += exposed[r] / (static_cast<double>(n) * spec.steps);
  }
  out.bytes_sent = streams->bytes_sent() + (gather ? gather->bytes_sent() : 0);
  return out;
}

}  // namespace dtsim::sim
