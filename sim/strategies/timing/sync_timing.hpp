// Timing-only synchronous data parallelism: the simulated time of training steps of a workload too large to
// compute (a catalog workload, models/workload/), with no numerics at all. Each worker runs the forward
// pass, then the backward pass segment by segment in backward order, handing gradient buckets to its
// communication stream as they become ready (sync/buckets.hpp, as PyTorch DDP does), waits for the last
// bucket's allreduce and runs the optimizer step. Compute is charged as FLOPs at the host's speed; the
// caller converts its per-layer times to FLOPs at a reference speed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/objective.hpp"
#include "models/workload/compute_time.hpp"
#include "sim/strategies/sync/buckets.hpp"
#include "sim/strategies/sync/weight_gathers.hpp"
#include "sim/world/platform.hpp"
#include "sim/world/stragglers.hpp"

namespace dtsim::sim {

struct TimingSpec {
  double forward_flops = 0;                        // per step and worker
  std::vector<models::GradientSegment> segments;   // backward order: trained values and the FLOPs before them
  double optimizer_flops = 0;                      // after the last allreduce
  double bytes_per_value = 2;                      // gradient bytes on the wire per trained value
  double bucket_bytes = 25e6;
  bool overlap = true;                             // hand buckets during backward (else after it)
  // ZeRO stages 1-2: buckets are reduce-scattered, and after the optimizer step (on this worker's shard) the
  // updated weights, `gathered_bytes` in all, are all-gathered before the next step.
  // Stage 3 (weights sharded too): no gather after the step; instead each bucket's layers are a unit whose
  // weights are all-gathered before its forward and again before its backward (one unit ahead, on a stream
  // of their own, as DeepSpeed and FSDP prefetch), from segment_forward_flops and segment_gather_bytes.
  int zero_stage = 0;
  double gathered_bytes = 0;
  std::vector<double> segment_forward_flops;  // stage 3: aligned with segments (their sum is forward_flops)
  std::vector<double> segment_gather_bytes;   // stage 3: aligned with segments, every weight of its layers
  int prefetch_units = 1;                     // stage 3: units gathered ahead of the compute
  int steps = 10;
  // Gradient accumulation: micro-batches per step. The first m − 1 run forward and backward without
  // communicating (DDP's no_sync); the last runs as above, its buckets handed to the collectives. Under
  // stage 3 every micro-batch gathers its units again and reduce-scatters its own gradients, as DeepSpeed's
  // ZeRO-3 and FSDP without no_sync do (the gradients stay sharded); the optimizer steps once.
  int micro_batches = 1;
  bool one_rank_may_stand_in = true;               // false: simulate every rank even where one could stand in
  // Per-step slowdowns ([stragglers]): every execution of worker r's step s takes compute_multiplier(r, s)
  // times its FLOPs, as a synchronous run charges them. Null: none. Slow workers are slower hosts already.
  const StragglerModel* stragglers = nullptr;
};

struct TimingOutcome {
  std::vector<double> step_end_s;  // when every worker had finished step s (its optimizer step)
  // Wall seconds (not simulated) from the start of the simulation until step s had ended everywhere: what
  // the simulator itself costs per step, for benchmarks. Never feeds a simulated time.
  std::vector<double> step_wall_s;
  double compute_s = 0;            // per step and worker: forward, backward and optimizer
  double exposed_s = 0;            // per step and worker: waiting for allreduces after backward (and ZeRO's all-gather)
  // Per step and worker: the part of that wait due to a slower peer, the difference between the slowest
  // peer's forward and backward compute and the worker's own (a straggler's doing, not the network's: zero for
  // identical GPUs at any fidelity); sync only, not included in exposed_s.
  double waiting_s = 0;
  uint64_t bytes_sent = 0;         // by all workers, all steps
  int buckets = 0;
  bool one_rank_for_all = false;   // rank 0 stood in for identical ranks (analytic collectives)
};

// The spec of a workload's step from its per-layer roofline (models::gradient_timeline): the forward pass,
// one segment per trained layer in backward order, the optimizer, converted to FLOPs at `speed` (the hosts'
// nominal rate), gradients at setup.gradient_bytes on the wire. A synchronous run with numerics charges the
// same figures (sim/strategies/compute_cost.hpp).
TimingSpec timing_spec(const models::Workload& workload, const models::MemorySetup& setup,
                       const models::DeviceRates& rates, double speed);

// The buckets a spec's steps hand to the streams: its segments with values (a trailing segment of none is
// backward work after the last bucket), grouped by bucket_bytes.
std::vector<Bucket> timing_buckets(const TimingSpec& spec);

// Whether every worker's host has the same nominal speed, a condition for one rank to stand in for all.
// Host::get_speed() is the peak: a slow host of [stragglers] (a speed profile) is not seen here, so callers
// also forbid the stand-in when any heterogeneity is set (one_rank_may_stand_in).
bool identical_workers(const Platform& platform);

// One synchronous step of a TimingSpec on one worker, with the collectives it needs (the bucket streams and
// ZeRO's gathers): run_sync_timing runs every step with it, post-local SGD (local_timing.hpp) its first ones.
class SyncStepper {
 public:
  SyncStepper(const Platform& platform, const TimingSpec& spec, const MakeCollective& make);
  ~SyncStepper();
  bool can_stand_in_for_all() const;  // every collective analytic: rank 0 may run alone
  void stand_in_for_all();
  void start(int rank);  // the rank's stream actors; before the engine runs
  // Worker r's step `step` (forward, backward handing buckets, the optimizer, ZeRO's gathers), every
  // execution `multiplier` times its FLOPs; returns the seconds spent computing. `backward_compute`, when
  // given, receives the seconds spent computing up to the end of the backward pass (forward and backward).
  double step(int r, int step, double multiplier, double* backward_compute = nullptr);
  int buckets() const;
  uint64_t bytes_sent() const;

 private:
  const TimingSpec& spec_;
  double tail_flops_ = 0;
  std::unique_ptr<BucketStreams> streams_;
  std::unique_ptr<Collective> gather_;
  std::unique_ptr<WeightGathers> units_;
  std::vector<double> unit_forward_;  // stage 3: each unit's forward FLOPs
};

// A worker's wait for its slowest peer at a meeting (an allreduce, a model average): the difference of their
// compute before it, where differences of clock readings in the last bits (equal work) count as none.
inline double wait_for_slowest(double slowest_compute, double own_compute) {
  const double gap = slowest_compute - own_compute;
  return gap > 1e-9 * slowest_compute ? gap : 0.0;
}

// Runs `spec.steps` steps on every worker of `platform` in the engine that built it (which must not have
// run yet) and returns their timing. `make` builds each bucket's allreduce. When every collective is
// analytic and every worker's host has the same speed, only rank 0 is simulated (one_rank_for_all): the
// others would run the same timeline.
TimingOutcome run_sync_timing(const Platform& platform, const TimingSpec& spec, MakeCollective make);

}  // namespace dtsim::sim
