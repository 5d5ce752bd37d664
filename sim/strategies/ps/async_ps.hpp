// Asynchronous parameter server (training.strategy = async-ps): S server shards on dedicated hosts own the
// model's tensors (ps_shard.hpp); W workers each loop on
//     pull every shard's current parameters → compute a real gradient at them → charge its FLOPs as
//     simulated time → push the gradient's slices to the shards,
// and the shards apply gradients in the order the simulated network delivers them. Nothing is computed
// "as if" synchronous: which version a worker computes from, the order of updates and each gradient's
// staleness all follow from simulated arrival times.
//
// Message pattern (a push and the next pull travel together):
//   start:    worker → every shard: "pull for computation c"      (64 B)
//   each:     shard → worker: its slice of the current parameters (slice × weight width)
//             worker → every shard: its gradient slice (slice × gradient width) + "pull for c+1" or goodbye
// Under bounded staleness the worker pulls shard by shard (the push carries the next pull to shard 0 only;
// ps_shard.hpp says why). A shard serves the pull carried by a push after applying that push, so a worker's
// next parameters include its own last gradient.
//
// Steps: metrics.csv's `step` counts updates applied by shard 0 (the step clock: gradients with
// gradients_per_update = 1, else averages of k), evaluated every (steps per epoch × W / k) / eval.per_epoch
// updates on the whole model as the shards hold it at that instant. The outcome's `steps` is the number of
// global batches' worth of gradients applied (gradients at shard 0 / W), so that summary.json's epochs and
// samples per simulated second compare with synchronous training. The learning-rate schedule of an update is
// read at the synchronous step that has consumed as many samples (update × k / W).
//
// Memory: a parameter snapshot per shard and version while pulls of it travel (shared by those pulls), one
// gradient per computation until every shard applied its slice, one scratch model for the computation
// (a gradient computation never yields) and for evaluation.
//
// Faults: a worker whose host goes down loses what it had in flight (its tickets go back, ps_job.hpp); the
// others go on; when the host comes back the worker starts again with a fresh pull. summary.json's
// strategy.faults says what that cost.
//
// Compression (compression.kind ≠ none): each worker owns a models::Compressor (rank = its rank, step = its
// own gradient count 0, 1, 2, ..., the objective's data step). Between computing its gradient and splitting it
// into slices, the worker compresses the whole vector; the slices carry what the shards decode, and the push
// to shard s costs the wire bytes of the tensors shard s owns (shards own whole tensors, so every message
// belongs to one shard) instead of the dense slice. Pulls of parameters stay uncompressed.
// - Loss scaling: the compressor gets the unscaled gradient (what the update sees), and the decoded gradient
//   is scaled back before it travels with its loss scale, so the shards' path (rounding to the gradients'
//   format, unscaling, the overflow check) is unchanged and the error-feedback residual stays in gradient
//   units when the loss scale changes between pushes. With a power-of-two scale both scalings are exact.
// - A gradient that overflowed (a non-finite value) is not compressed: it would poison the residual. It
//   travels dense at the dense size, so that the shards' loss scalers see the overflow and skip the step.
// - A worker whose host fails after compressing loses that push, but its compressor has already taken the
//   gradient into its state (the residual assumes the message arrived). A real worker would lose the same.
// - Messages and their statistics go to the recorder (metrics.csv's compression columns, summary.json's
//   "compression"); one message is one worker's whole push.
// - Memory: each worker's compressor state (under error feedback a residual of the whole model).
#pragma once

#include <memory>
#include <vector>

#include "models/compression/compression.hpp"
#include "sim/collectives/parameter_server.hpp"
#include "sim/strategies/ps/ps_job.hpp"
#include "sim/strategies/ps/ps_shard.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

class AsyncParameterServer final : public TrainingStrategy {
 public:
  explicit AsyncParameterServer(const TrainingContext& ctx);

  void spawn() override;
  StrategyOutcome outcome() const override;

 private:
  using Parts = std::vector<std::unique_ptr<ShardReply>>;  // one per shard, in shard order

  void start_worker(int rank);
  void worker(int rank);
  // The parameters for `computation`: from every shard at once, or shard by shard under a bound. With
  // `first_requested`, shard 0 already has the request (it travelled with the last push).
  Parts fetch(int rank, uint64_t computation, bool first_requested);
  std::unique_ptr<ShardReply> take_reply(const ShardPayload& payload, uint64_t computation);
  // The real gradient at the pulled parameters (compressed when compression is on), split into the shards'
  // slices; `push_bytes` gets what each slice costs on the wire.
  std::vector<gpu::Buffer<float>> compute(int rank, Parts& parts, double* loss, double* loss_scale,
                                          std::vector<uint64_t>* push_bytes);
  // Compresses the gradient in scratch_grads_ (computed with loss scale `scale`) in place; returns the bytes
  // per shard.
  std::vector<uint64_t> compress(int rank, int64_t step, double scale);
  void push(int rank, uint64_t computation, std::vector<gpu::Buffer<float>> slices,
            const std::vector<uint64_t>& bytes, double loss, double loss_scale, bool more, uint64_t next);
  void say_goodbye(int rank);
  void send(int rank, int shard, std::unique_ptr<ShardRequest> request, uint64_t bytes);

  void updated(const ShardServer& shard, const std::vector<double>& losses, double lr);
  void stopped(const ShardServer& shard);
  void record(int64_t step);
  void fault(const FaultTransition& t);
  nlohmann::json details(double end_time) const;

  TrainingContext ctx_;
  PsConfig config_;
  std::vector<ParameterRange> ranges_;
  ShardedServerChannel channel_;
  PsJob job_;
  std::vector<std::unique_ptr<ShardServer>> shards_;
  TrainingRecorder recorder_;
  int64_t total_updates_;
  gpu::Buffer<float> scratch_params_;
  gpu::Buffer<float> scratch_grads_;
  std::vector<models::Compressor<float>> compressors_;  // one per worker; empty without compression
  std::vector<uint64_t> proxy_values_;                  // proxy mode: each shard's workload values, else 0s
  std::vector<size_t> tensor_shard_;                    // the shard that owns each parameter tensor

  int64_t last_recorded_ = -1;
  bool model_changed_ = false;  // since the last evaluation point
  double last_lr_ = 0.0;
  double end_time_ = 0.0;
  ActorFailure failure_;
};

// The setup line's words for async-ps (see describe_strategy).
std::string describe_async_parameter_server(const RunConfig& config);

}  // namespace dtsim::sim
