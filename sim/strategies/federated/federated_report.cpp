#include "sim/strategies/federated/federated_report.hpp"

#include <algorithm>

namespace dtsim::sim {
namespace {

double mean(double total, int64_t count) { return count > 0 ? total / static_cast<double>(count) : 0.0; }

}  // namespace

const char* to_string(ClientFate fate) {
  switch (fate) {
    case ClientFate::Pending: return "pending";
    case ClientFate::Aggregated: return "aggregated";
    case ClientFate::Partial: return "partial";
    case ClientFate::DroppedStraggler: return "straggler";
    case ClientFate::DroppedDeadline: return "deadline";
    case ClientFate::DroppedOvercommit: return "overcommit";
    case ClientFate::Lost: return "lost";
  }
  return "?";
}

FederatedReport::FederatedReport(int clients)
    : clients_(clients), selected_by_client_(clients, 0), aggregated_by_client_(clients, 0) {}

void FederatedReport::begin_round(int available, int selected) {
  ++rounds_;
  available_ += available;
  selected_ += selected;
  if (selected == 0) ++empty_rounds_;
  round_selected_ = selected;
  round_aggregated_ = 0;
}

void FederatedReport::client_selected(int client) { ++selected_by_client_.at(client); }

void FederatedReport::client_finished(int client, ClientFate fate, int64_t steps_done, double compute_s) {
  ++fates_[static_cast<int>(fate)];
  if (fate == ClientFate::Aggregated || fate == ClientFate::Partial) {
    ++aggregated_by_client_.at(client);
    ++round_aggregated_;
    steps_aggregated_ += steps_done;
    return;
  }
  steps_discarded_ += steps_done;
  compute_discarded_s_ += compute_s;
  if (fate == ClientFate::Lost) {
    lost_steps_ += steps_done;
    lost_compute_s_ += compute_s;
  }
}

void FederatedReport::end_round(double round_seconds) {
  round_s_ += round_seconds;
  if (round_selected_ > 0 && round_aggregated_ == 0) ++rounds_without_update_;
}

void FederatedReport::add_download(uint64_t bytes, uint64_t secagg_bytes, double seconds) {
  bytes_down_ += bytes;
  secagg_down_ += secagg_bytes;
  download_s_ += seconds;
  ++downloads_;
}

void FederatedReport::add_upload(uint64_t bytes, uint64_t secagg_bytes, double seconds) {
  bytes_up_ += bytes;
  secagg_up_ += secagg_bytes;
  upload_s_ += seconds;
  ++uploads_;
}

void FederatedReport::add_secagg_message(bool up, uint64_t bytes) {
  (up ? bytes_up_ : bytes_down_) += bytes;
  (up ? secagg_up_ : secagg_down_) += bytes;
}

void FederatedReport::add_secagg_time(double client_seconds, double server_seconds) {
  secagg_client_s_ += client_seconds;
  secagg_server_s_ += server_seconds;
}

void FederatedReport::add_aggregation_time(double seconds) { aggregation_s_ += seconds; }

nlohmann::json FederatedReport::to_json(double epochs) const {
  const auto count = [&](ClientFate f) { return fates_[static_cast<int>(f)]; };
  const int64_t aggregated = count(ClientFate::Aggregated) + count(ClientFate::Partial);
  const int64_t dropped = count(ClientFate::DroppedStraggler) + count(ClientFate::DroppedDeadline) +
                          count(ClientFate::DroppedOvercommit) + count(ClientFate::Lost);
  const double r = static_cast<double>(rounds_);
  nlohmann::json j;
  j["rounds"] = rounds_;
  j["empty_rounds"] = empty_rounds_;
  j["rounds_without_update"] = rounds_without_update_;
  j["clients"] = clients_;
  j["epochs"] = epochs;
  j["available_mean"] = mean(static_cast<double>(available_), rounds_);
  j["selected"] = {{"total", selected_}, {"mean_per_round", selected_ / std::max(1.0, r)}};
  j["aggregated"] = {{"total", aggregated},
                     {"mean_per_round", aggregated / std::max(1.0, r)},
                     {"full", count(ClientFate::Aggregated)},
                     {"partial", count(ClientFate::Partial)}};
  j["dropped"] = {{"total", dropped},
                  {"mean_per_round", dropped / std::max(1.0, r)},
                  {"straggler", count(ClientFate::DroppedStraggler)},
                  {"deadline", count(ClientFate::DroppedDeadline)},
                  {"overcommit", count(ClientFate::DroppedOvercommit)},
                  {"lost", count(ClientFate::Lost)}};
  j["local_steps"] = {{"aggregated", steps_aggregated_},
                      {"discarded", steps_discarded_},
                      {"discarded_compute_s", compute_discarded_s_}};
  j["faults"] = {{"clients_lost", count(ClientFate::Lost)},
                 {"local_steps_lost", lost_steps_},
                 {"compute_lost_s", lost_compute_s_}};
  j["bytes"] = {{"up", bytes_up_}, {"down", bytes_down_}};
  j["time_s"] = {{"round_mean", mean(round_s_, rounds_)},
                 {"download_mean", mean(download_s_, downloads_)},
                 {"upload_mean", mean(upload_s_, uploads_)},
                 {"aggregation_total", aggregation_s_}};
  j["secure_aggregation"] = {{"bytes_up", secagg_up_},
                             {"bytes_down", secagg_down_},
                             {"client_compute_s", secagg_client_s_},
                             {"server_compute_s", secagg_server_s_}};
  j["participation"] = {{"selected", selected_by_client_}, {"aggregated", aggregated_by_client_}};
  return j;
}

}  // namespace dtsim::sim
