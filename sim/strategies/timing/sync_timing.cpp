#include "sim/strategies/timing/sync_timing.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
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
  const bool tail = t.tail > 0 || (setup.zero_stage >= 3 && (t.tail_forward > 0 || t.tail_parameters > 0));
  if (tail) spec.segments.push_back({0, 0, t.tail * speed});  // no values: run_sync_timing's tail
  if (setup.zero_stage >= 3) {
    for (size_t i = 0; i < t.backward.size(); ++i) {
      spec.segment_forward_flops.push_back(t.segment_forward[i] * speed);
      spec.segment_gather_bytes.push_back(static_cast<double>(t.segment_parameters[i]) * setup.weight_bytes);
    }
    if (tail) {
      spec.segment_forward_flops.push_back(t.tail_forward * speed);
      spec.segment_gather_bytes.push_back(static_cast<double>(t.tail_parameters) * setup.weight_bytes);
    }
  }
  spec.optimizer_flops = t.optimizer * speed;  // this worker's shard with ZeRO (setup.zero_stage)
  spec.bytes_per_value = setup.gradient_bytes;
  spec.zero_stage = setup.zero_stage;
  if (setup.zero_stage == 1 || setup.zero_stage == 2)
    spec.gathered_bytes = static_cast<double>(w.trainable()) * setup.weight_bytes;
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

bool identical_workers(const Platform& platform) {
  for (sg4::Host* h : platform.workers)
    if (h->get_speed() != platform.workers.front()->get_speed()) return false;
  return true;
}

std::vector<Bucket> timing_buckets(const TimingSpec& spec) {
  const std::vector<models::GradientSegment> valued(spec.segments.begin(),
                                                    spec.segments.begin() + static_cast<long>(valued_segments(spec)));
  return plan_buckets(valued, spec.bucket_bytes, spec.bytes_per_value);
}

SyncStepper::SyncStepper(const Platform& platform, const TimingSpec& spec, const MakeCollective& make)
    : spec_(spec) {
  if (spec.zero_stage < 0 || spec.zero_stage > 3) throw std::invalid_argument("timing: ZeRO stage must be 0 to 3");
  if (spec.micro_batches < 1) throw std::invalid_argument("timing: at least one micro-batch per step");
  for (size_t i = valued_segments(spec); i < spec.segments.size(); ++i) tail_flops_ += spec.segments[i].backward_flops;
  const std::vector<Bucket> buckets = timing_buckets(spec);
  const bool zero = spec.zero_stage > 0, zero3 = spec.zero_stage == 3;
  streams_ = std::make_unique<BucketStreams>(platform, buckets, spec.bytes_per_value, make, nullptr,
                                             zero ? CollectiveKind::ReduceScatter : CollectiveKind::Allreduce);
  // Stages 1-2: one all-gather of the updated weights after the step. Stage 3: the units' gathers.
  if (zero && !zero3) gather_ = make(CollectiveKind::AllGather, "params");
  if (zero3) {
    if (spec.segment_forward_flops.size() != spec.segments.size() ||
        spec.segment_gather_bytes.size() != spec.segments.size())
      throw std::invalid_argument("timing: ZeRO stage 3 needs each segment's forward FLOPs and weight bytes");
    units_ = std::make_unique<WeightGathers>(
        platform, weight_units(buckets, spec.segment_gather_bytes, spec.bucket_bytes), make, spec.prefetch_units);
    for (int u = 0; u < units_->units(); ++u)
      unit_forward_.push_back(units_->over_segments(u, [&](size_t i) { return spec.segment_forward_flops[i]; }));
  }
}

SyncStepper::~SyncStepper() = default;

bool SyncStepper::can_stand_in_for_all() const {
  return streams_->can_stand_in_for_all() && (!gather_ || gather_->can_stand_in_for_all()) &&
         (!units_ || units_->can_stand_in_for_all());
}

void SyncStepper::stand_in_for_all() {
  streams_->stand_in_for_all();
  if (gather_) gather_->stand_in_for_all();
  if (units_) units_->stand_in_for_all();
}

void SyncStepper::start(int rank) {
  streams_->start(rank, "stream" + std::to_string(rank));
  if (units_) units_->start(rank, "gathers" + std::to_string(rank));
}

double SyncStepper::step(int r, int step, double multiplier, double* backward_compute) {
  double computed = 0;  // this step's executions; the rest of the step is exposed communication
  const auto run = [&computed, multiplier](double flops) {
    const double t0 = sg4::Engine::get_clock();
    sg4::this_actor::execute(flops * multiplier);
    computed += sg4::Engine::get_clock() - t0;
  };
  // Without stage 3 the micro-batches before the last run forward and backward without communicating.
  // Stage 3 has no whole weights to compute them with: each micro-batch gathers and reduce-scatters.
  const int passes = units_ ? spec_.micro_batches : 1;
  if (!units_ && spec_.micro_batches > 1) {
    double backward = 0;
    for (const models::GradientSegment& s : spec_.segments) backward += s.backward_flops;
    run((spec_.micro_batches - 1) * (spec_.forward_flops + backward));
  }
  for (int pass = 0; pass < passes; ++pass) {
    if (units_)
      units_->forward(r, step, [&](int u) { run(unit_forward_[u]); });
    else
      run(spec_.forward_flops);
    // Stage 3: each unit's weights gathered before its backward (a bucket may span several units).
    int next_unit = 0;
    const auto segment_flops = [&](size_t i) { return spec_.segments[i].backward_flops; };
    for (int b = 0; b < streams_->size(); ++b) {
      const Bucket& bucket = streams_->bucket(b);
      if (units_)
        units_->backward_over(r, step, bucket.first_segment, bucket.segments, bucket.backward_flops, next_unit,
                              segment_flops, run);
      else
        run(bucket.backward_flops);
      if (spec_.overlap) streams_->hand(r, b, step);
    }
    const size_t tail_first = valued_segments(spec_);
    if (units_ && next_unit < units_->units())  // the frozen layers below the buckets
      units_->backward_over(r, step, tail_first, spec_.segments.size() - tail_first, tail_flops_, next_unit,
                            segment_flops, run);
    else if (tail_flops_ > 0)
      run(tail_flops_);
    if (!spec_.overlap) {  // after the backward pass, and done before the next micro-batch starts
      for (int b = 0; b < streams_->size(); ++b) streams_->hand(r, b, step);
      if (pass + 1 < passes) streams_->wait_all(r);
    }
  }
  if (backward_compute) *backward_compute = computed;
  streams_->wait_all(r);
  run(spec_.optimizer_flops);
  if (gather_) gather_->run(r, static_cast<uint64_t>(spec_.gathered_bytes));
  return computed;
}

int SyncStepper::buckets() const { return streams_->size(); }

uint64_t SyncStepper::bytes_sent() const {
  return streams_->bytes_sent() + (gather_ ? gather_->bytes_sent() : 0) + (units_ ? units_->bytes_sent() : 0);
}

TimingOutcome run_sync_timing(const Platform& platform, const TimingSpec& spec, MakeCollective make) {
  if (spec.steps < 1) throw std::invalid_argument("timing: at least one step");
  SyncStepper stepper(platform, spec, make);
  // Identical workers calling analytic collectives all run the same timeline, so rank 0 can stand in for
  // them all (Collective::stand_in_for_all): the same simulated times, without 2 actors per GPU.
  const bool stand_in = spec.one_rank_may_stand_in && identical_workers(platform) && stepper.can_stand_in_for_all();
  if (stand_in) stepper.stand_in_for_all();
  const int n = stand_in ? 1 : platform.num_workers();
  TimingOutcome out;
  out.one_rank_for_all = stand_in;
  out.buckets = stepper.buckets();
  out.step_end_s.assign(spec.steps, 0.0);
  out.step_wall_s.assign(spec.steps, 0.0);
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<double> compute(n, 0.0), exposed(n, 0.0), waiting(n, 0.0);
  // Each worker's forward and backward compute per step, and the slowest's: a step's allreduces cannot end
  // before the slowest peer has computed its gradient, so the difference is a wait for that peer, whatever
  // the network. (Compute seconds, not clock times: with overlap, handing a bucket may block on the network,
  // which is communication.)
  std::vector<double> slowest_backward(static_cast<size_t>(spec.steps), 0.0);
  std::vector<std::vector<double>> backward_compute(n, std::vector<double>(static_cast<size_t>(spec.steps), 0.0));
  for (int r = 0; r < n; ++r) {
    stepper.start(r);
    sg4::Actor::create("worker" + std::to_string(r), platform.workers[r], [&, r] {
      for (int step = 0; step < spec.steps; ++step) {
        const double start = sg4::Engine::get_clock();
        double& mine = backward_compute[r][static_cast<size_t>(step)];
        const double computed =
            stepper.step(r, step, spec.stragglers ? spec.stragglers->compute_multiplier(r, step) : 1.0, &mine);
        slowest_backward[static_cast<size_t>(step)] = std::max(slowest_backward[static_cast<size_t>(step)], mine);
        const double end = sg4::Engine::get_clock();
        compute[r] += computed;
        exposed[r] += (end - start) - computed;
        out.step_end_s[step] = std::max(out.step_end_s[step], end);
        out.step_wall_s[step] = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      }
    });
  }
  sg4::Engine::get_instance()->run();
  // Every worker's compute is known once the engine has run: each worker's wait for the slowest is taken out
  // of its exposed communication (never more than it waited in all).
  for (int r = 0; r < n; ++r)
    for (int step = 0; step < spec.steps; ++step) {
      const size_t s = static_cast<size_t>(step);
      waiting[r] += wait_for_slowest(slowest_backward[s], backward_compute[r][s]);
    }
  for (int r = 0; r < n; ++r) {
    const double wait = std::min(waiting[r], exposed[r]);
    out.compute_s += compute[r] / (static_cast<double>(n) * spec.steps);
    out.exposed_s += (exposed[r] - wait) / (static_cast<double>(n) * spec.steps);
    out.waiting_s += wait / (static_cast<double>(n) * spec.steps);
  }
  out.bytes_sent = stepper.bytes_sent();
  return out;
}

}  // namespace dtsim::sim
