// Federated learning (training.strategy = federated): rounds in which a server on a host of its own samples
// clients (the platform's workers), each selected client downloads the global model, runs local SGD with
// real gradients on its own data and host, and uploads its update; the server aggregates what reached it
// (FedAvg, FedProx, SCAFFOLD or FedNova, in client-id order) and applies its optimizer.
//
// The simulator decides the numerics: which clients finish, which are too late or lost, and how many local
// steps a straggler completed are all read off simulated time, and only that reaches the global model.
//
// One round, from its start t0:
//   1. plan (federated_plan.hpp): the clients online at t0, ⌈K(1+f)⌉ of them sampled, protocol stragglers.
//   2. every selected client, as an actor on its host: download (model; SCAFFOLD also c: twice the bytes;
//      secure-aggregation setup), local steps (each: the real gradient, then its FLOPs on the host; under the
//      partial policy with a deadline, the step in progress at t0 + deadline does not count), upload (Δ;
//      SCAFFOLD also Δc).
//   3. the server takes reports in arrival order (ties by client id): the first K are kept, later ones are
//      dropped; at the deadline (drop policy) the round closes; a client whose host or link goes down or whose
//      availability window ends is lost at that moment. Unfinished transfers and computations are cancelled.
//   4. secure aggregation's unmasking exchange and server time; the aggregation (2·m FLOPs per update vector)
//      on the server host; the new global model; an evaluation row every fl.eval_every rounds.
//
// Compression (compression.kind ≠ none; start_epoch counts rounds): every client owns a models::Compressor
// (rank = client id) for the whole run, so its error-feedback residual carries over from one round it takes
// part in to the next. After local training (and the rounding to the wire format) the client compresses its
// model update Δ with step = the round; the upload costs the wire bytes of that encoding instead of the dense
// vector, and the aggregator receives the decoded Δ. SCAFFOLD's control-variate update Δc is not compressed:
// the server's c must stay the mean of the clients' c_i, which a lossy Δc would break; it travels dense. A
// Δ with a non-finite value is uploaded dense and leaves the compressor alone (it would poison the residual).
// An upload that is lost or dropped after compression has still been taken into the client's residual, as a
// real client's would. Each compressed upload is one message in metrics.csv's compression columns and in
// summary.json's "compression". Memory: the state of every client that has uploaded (under error feedback a
// residual of the whole model each).
// With compression.downloads the model download is compressed too. The server keeps the broadcast model x̃,
// what clients hold (every client starts from the seeded initial model, and is assumed to follow every round's
// broadcast, although only selected clients are charged for it). At the start of a round with clients it
// compresses x − x̃ with a compressor that is fresh for the round and has no error feedback (step = round),
// updates x̃ += decoded, and selected clients train from x̃; each download costs that message's wire bytes
// (plus SCAFFOLD's c, dense). Since x̃ follows x, what one round's compression dropped is sent in a later
// round. Before compression starts, downloads are dense and x̃ = x exactly. summary.json's
// compression.downloads counts the broadcasts (not per client).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <simgrid/s4u.hpp>
#include <vector>

#include "models/compression/compression.hpp"
#include "models/federated.hpp"
#include "sim/strategies/federated/federated_local.hpp"
#include "sim/strategies/federated/federated_plan.hpp"
#include "sim/strategies/federated/federated_report.hpp"
#include "sim/strategies/federated/federated_secagg.hpp"
#include "sim/strategies/parameters.hpp"
#include "sim/strategies/recorder.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

class FederatedLearning final : public TrainingStrategy {
 public:
  explicit FederatedLearning(const TrainingContext& ctx);

  void spawn() override;
  StrategyOutcome outcome() const override;

  // One selected client's part of the current round. The client actor writes its progress here; the server
  // reads it, and owns it until every actor of the round has ended.
  struct ClientRun {
    ClientAssignment work;
    int64_t round = 0;
    int64_t full_steps = 0;       // a whole round's work, to tell full from partial
    bool reports = true;          // false: a protocol straggler under the drop policy, which only downloads
    double lost_at = kNever;
    uint64_t download_bytes = 0, upload_bytes = 0;

    sg4::ActorPtr actor;
    sg4::ActivityPtr current;     // what the client waits on now: the server cancels it to stop the client
    bool cancelled = false;
    bool failed = false;          // a transfer failed under it (a link on its route went down)
    bool reported = false;
    double report_time = 0.0;
    int64_t steps_done = 0;
    double loss_sum = 0.0;
    double compute_s = 0.0;
    std::unique_ptr<LocalTraining> local;
    ClientFate fate = ClientFate::Pending;
  };

 private:
  void server();
  void play_round(int64_t round);
  // The clients' local SGD in `round` (0-based): training.lr × fl.lr_decay^round.
  LocalSgdSettings local_settings(int64_t round) const;
  // Waits for the round's reports and settles every client's fate (federated_collect.cpp).
  void collect(std::vector<std::unique_ptr<ClientRun>>& runs, int keep, double round_start);
  void stop(ClientRun& run, ClientFate fate);
  void unmask(const std::vector<ClientRun*>& survivors, int instance_size);
  // Returns the round's mean client training loss, none when no local step was aggregated.
  std::optional<double> aggregate(const std::vector<ClientRun*>& survivors);
  void record(int64_t rounds_done);

  // The client actor's body (federated_client.cpp).
  void client(ClientRun& run, double round_start, int instance_size);
  bool transfer(ClientRun& run, sg4::Host* from, sg4::Host* to, uint64_t bytes);
  bool compute(ClientRun& run, double seconds_at_peak);
  // Compression (federated_client.cpp): a client's upload, in place, setting its upload bytes; the round's
  // broadcast, updating x̃ and returning its bytes.
  void compress_upload(ClientRun& run);
  uint64_t compress_download(int64_t round);
  // A compressed message's bytes on the wire: as encoded, or in a proxy run at the workload's trained values.
  uint64_t on_the_wire(uint64_t compressed_bytes) const;

  TrainingContext ctx_;
  FlConfig fl_;
  TrainableParameters params_;  // the global model x; forward() is what clients download
  size_t num_params_;
  // What a transfer carries per vector: the model's values and their wire bytes, or in a proxy run the
  // workload's trained values and weights (secure aggregation's masks and the aggregation's FLOPs follow).
  uint64_t wire_values_;
  uint64_t model_wire_bytes_;
  int vectors_;                 // per transfer: 1, or 2 for SCAFFOLD (x and c down, Δy and Δc up)
  LocalSgdSettings local_;
  models::ServerAggregator<float> aggregator_;
  gpu::Buffer<float> c_global_;                // SCAFFOLD's c
  std::map<int, gpu::Buffer<float>> c_local_;  // SCAFFOLD's c_i, for clients that have taken part
  RoundPlanner planner_;
  SecureAggregationCost secagg_;
  FederatedReport report_;
  std::vector<double> samples_;
  double total_samples_ = 0.0;
  std::vector<int64_t> gradients_done_;  // per client, over the run: picks its mini-batches and slowdowns
  std::vector<WorkerTime> time_;
  TrainingRecorder recorder_;                  // only its compression sums: rows are built by record()
  models::CompressionSettings compression_;    // resolved in rounds; kind None without compression
  std::map<int, models::Compressor<float>> upload_compressors_;  // per client, created at its first upload
  gpu::Buffer<float> broadcast_;               // compressed downloads: x̃, what clients hold
  gpu::Buffer<float> download_diff_;
  struct DownloadTotals {
    uint64_t messages = 0, wire_bytes = 0, dense_bytes = 0;
    double error_sum_squares = 0.0, input_sum_squares = 0.0;
  } downloads_;
  sg4::Host* server_host_ = nullptr;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr reported_;

  int64_t rounds_done_ = 0;
  double epochs_ = 0.0;
  double loss_sum_ = 0.0;
  int64_t loss_count_ = 0;
  ActorFailure failure_;
};

// The setup line's words for federated (see describe_strategy).
std::string describe_federated_learning(const RunConfig& config);

}  // namespace dtsim::sim
