// What a federated run measured, round by round, for summary.json's "strategy" object: who was selected,
// aggregated and dropped (and why), bytes in each direction, secure aggregation's share of them, phase
// times, per-client participation and what faults cost.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace dtsim::sim {

// What became of one selected client in one round.
enum class ClientFate {
  Pending,            // still in the round
  Aggregated,         // its full local work was aggregated
  Partial,            // part of its local work was aggregated (straggler under the partial policy)
  DroppedStraggler,   // a protocol straggler under the drop policy
  DroppedDeadline,    // missed the deadline (drop), or finished no step before it (partial)
  DroppedOvercommit,  // reported after the round already had K updates
  Lost,               // its host or link went down, or it went offline, while in the round
};
const char* to_string(ClientFate fate);

class FederatedReport {
 public:
  explicit FederatedReport(int clients);

  void begin_round(int available, int selected);
  void client_selected(int client);
  // A client's fate once the round is over, with the local steps it had finished and the simulated compute
  // time they took (work that was not aggregated is what stragglers and faults cost).
  void client_finished(int client, ClientFate fate, int64_t steps_done, double compute_s);
  void end_round(double round_seconds);

  // Transfers that completed. `secagg_bytes` is the part of `bytes` that only secure aggregation sends.
  void add_download(uint64_t bytes, uint64_t secagg_bytes, double seconds);  // the model (and setup messages)
  void add_upload(uint64_t bytes, uint64_t secagg_bytes, double seconds);    // the update (masked)
  void add_secagg_message(bool up, uint64_t bytes);  // key shares before training, unmasking after
  void add_secagg_time(double client_seconds, double server_seconds);
  void add_aggregation_time(double seconds);

  uint64_t bytes_total() const { return bytes_up_ + bytes_down_; }
  uint64_t bytes_up() const { return bytes_up_; }

  // Everything as JSON; `epochs` is the data passes the aggregated work amounts to.
  nlohmann::json to_json(double epochs) const;

 private:
  int clients_;
  int64_t rounds_ = 0;
  int64_t empty_rounds_ = 0;
  int64_t rounds_without_update_ = 0;  // clients were selected, yet none had its work aggregated
  int round_selected_ = 0, round_aggregated_ = 0;
  int64_t available_ = 0;
  int64_t selected_ = 0;
  int64_t fates_[7] = {0, 0, 0, 0, 0, 0, 0};
  int64_t steps_aggregated_ = 0;
  int64_t steps_discarded_ = 0;
  double compute_discarded_s_ = 0.0;
  int64_t lost_steps_ = 0;
  double lost_compute_s_ = 0.0;
  uint64_t bytes_up_ = 0, bytes_down_ = 0;
  uint64_t secagg_up_ = 0, secagg_down_ = 0;
  double secagg_client_s_ = 0.0, secagg_server_s_ = 0.0;
  double round_s_ = 0.0, aggregation_s_ = 0.0;
  double download_s_ = 0.0, upload_s_ = 0.0;
  int64_t downloads_ = 0, uploads_ = 0;
  std::vector<int64_t> selected_by_client_;
  std::vector<int64_t> aggregated_by_client_;
};

}  // namespace dtsim::sim
