#include "sim/strategies/federated/federated.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "gpu/portable_math.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {
namespace {

std::vector<double> sample_counts(models::Objective<float>& objective, int clients) {
  std::vector<double> samples;
  for (int c = 0; c < clients; ++c) samples.push_back(objective.sample_weight(c));
  return samples;
}

models::ServerSettings server_settings(const FlConfig& fl, int clients) {
  models::ServerSettings s;
  s.algorithm = fl.algorithm;
  s.lr = fl.server_lr;
  s.momentum = fl.server_momentum;
  s.total_clients = clients;
  s.compensated = fl.server_compensation;
  return s;
}

}  // namespace

FederatedLearning::FederatedLearning(const TrainingContext& ctx)
    : ctx_(ctx),
      fl_(ctx.config().fl),
      params_(ctx),
      num_params_(ctx.objective.num_params()),
      wire_values_(ctx.compute.proxied() ? ctx.compute.proxy_trained_values() : num_params_),
      model_wire_bytes_(ctx.compute.proxied() ? ctx.compute.proxy_weight_message(1.0) : params_.wire_bytes()),
      vectors_(fl_.algorithm == models::FlAlgorithm::Scaffold ? 2 : 1),
      aggregator_(ctx.ops, num_params_, server_settings(fl_, ctx.config().workers)),
      planner_(fl_, ctx.config().heterogeneity_seed(), sample_counts(ctx.objective, ctx.config().workers),
               ctx.config().batch_per_worker, ctx.heterogeneity.faults()),
      secagg_(fl_.secure_aggregation),
      report_(ctx.config().workers),
      samples_(sample_counts(ctx.objective, ctx.config().workers)),
      gradients_done_(ctx.config().workers, 0),
      time_(ctx.config().workers),
      recorder_(ctx, EvaluationCadence{fl_.eval_every, 1}, fl_.rounds, 1.0) {
  if (ctx.platform.servers.empty()) throw std::logic_error("federated learning needs a server host");
  server_host_ = ctx.platform.servers.front();
  local_.algorithm = fl_.algorithm;
  local_.lr = ctx.config().lr;
  local_.momentum = ctx.config().momentum;
  local_.weight_decay = ctx.config().weight_decay;
  local_.prox_mu = fl_.prox_mu;
  if (fl_.algorithm == models::FlAlgorithm::Scaffold) {
    c_global_ = gpu::Buffer<float>(ctx.ops, num_params_);
    ctx.ops.fill(c_global_.data(), num_params_, 0.0f);
  }
  for (const double s : samples_) total_samples_ += s;
  if (ctx.config().compression.active()) {
    compression_ = ctx.compression;
    if (ctx.config().compression.downloads) {
      broadcast_ = gpu::Buffer<float>(ctx.ops, num_params_);
      download_diff_ = gpu::Buffer<float>(ctx.ops, num_params_);
      ctx.ops.copy(broadcast_.data(), params_.forward(), num_params_);
    }
  }
}

void FederatedLearning::spawn() {
  record(0);  // the starting point
  if (ctx_.trace != nullptr) {
    for (int c = 0; c < ctx_.config().workers; ++c) ctx_.trace->name_track(c, "client " + std::to_string(c));
    ctx_.trace->name_track(ctx_.config().workers, "server");
  }
  sg4::Actor::create("fl-server", server_host_, [this] { failure_.guard([&] { server(); }); });
}

void FederatedLearning::server() {
  mutex_ = sg4::Mutex::create();
  reported_ = sg4::ConditionVariable::create();
  for (int64_t round = 0; round < fl_.rounds; ++round) play_round(round);
}

LocalSgdSettings FederatedLearning::local_settings(int64_t round) const {
  LocalSgdSettings s = local_;
  s.lr = local_.lr * portable::pow(fl_.lr_decay, static_cast<double>(round));
  return s;
}

void FederatedLearning::play_round(int64_t round) {
  const double t0 = sg4::Engine::get_clock();
  const RoundPlan plan = planner_.plan(round, t0);
  const int n = static_cast<int>(plan.selected.size());
  report_.begin_round(plan.available, n);
  if (n == 0) {
    // Nobody online: the round passes without an update, and the next one starts when some client's
    // host, link or availability window changes (at once when only fl.availability draws decide).
    const double next = planner_.next_availability_change(t0);
    if (std::isfinite(next)) sg4::this_actor::sleep_until(next);
    report_.end_round(sg4::Engine::get_clock() - t0);
    if (++rounds_done_ % fl_.eval_every == 0 || rounds_done_ == fl_.rounds) record(rounds_done_);
    return;
  }

  const SecureAggregationBytes setup = fl_.secure_aggregation.enabled
                                           ? secagg_.bytes(n, 0, wire_values_, vectors_)
                                           : SecureAggregationBytes{};
  const uint64_t model_bytes = static_cast<uint64_t>(vectors_) * model_wire_bytes_;
  // Compressed downloads: the broadcast's wire bytes, and SCAFFOLD's c dense.
  const uint64_t download_model_bytes =
      broadcast_.empty() ? model_bytes
                         : compress_download(round) + static_cast<uint64_t>(vectors_ - 1) * model_wire_bytes_;
  std::vector<std::unique_ptr<ClientRun>> runs;
  for (const ClientAssignment& a : plan.selected) {
    auto run = std::make_unique<ClientRun>();
    run->work = a;
    run->round = round;
    run->full_steps = planner_.full_steps(a.client);
    run->reports = a.local_steps > 0;  // a protocol straggler under drop, or one left with no work
    if (a.straggler && fl_.straggler_policy == StragglerPolicy::Drop) run->reports = false;
    if (!run->reports) run->fate = ClientFate::DroppedStraggler;
    run->lost_at = planner_.lost_at(a.client, t0);
    run->download_bytes = download_model_bytes + setup.setup_down;
    run->upload_bytes = model_bytes + setup.masked_extra;
    report_.client_selected(a.client);
    runs.push_back(std::move(run));
  }
  for (auto& run : runs) {
    ClientRun* r = run.get();
    r->actor = sg4::Actor::create("client" + std::to_string(r->work.client), ctx_.platform.workers[r->work.client],
                                  [this, r, t0, n] { failure_.guard([&] { client(*r, t0, n); }); });
  }

  collect(runs, plan.keep, t0);
  for (auto& run : runs) run->actor->join();  // every cancelled client has left before its state goes

  std::vector<ClientRun*> survivors;
  for (auto& run : runs) {
    if (run->fate == ClientFate::Aggregated || run->fate == ClientFate::Partial) survivors.push_back(run.get());
    report_.client_finished(run->work.client, run->fate, run->steps_done, run->compute_s);
  }
  if (fl_.secure_aggregation.enabled && !survivors.empty()) unmask(survivors, n);
  const std::optional<double> round_loss = aggregate(survivors);
  report_.end_round(sg4::Engine::get_clock() - t0);
  ++rounds_done_;
  // The round's mean client loss against the divergence rule, once the round counts as played: a run
  // stopped here reports the rounds, epochs and bytes its clients got through, this one included.
  if (round_loss) ctx_.metrics.check_train_loss(rounds_done_, sg4::Engine::get_clock(), *round_loss, fl_.rounds);
  if (rounds_done_ % fl_.eval_every == 0 || rounds_done_ == fl_.rounds) record(rounds_done_);
}

void FederatedLearning::unmask(const std::vector<ClientRun*>& survivors, int instance_size) {
  const int s = static_cast<int>(survivors.size());
  const SecureAggregationBytes b = secagg_.bytes(instance_size, s, wire_values_, vectors_);
  // The server names the survivors to each of them, and each answers with its shares of the others' secrets;
  // a survivor that cannot answer any more is not needed (any t of the shares reconstruct a secret).
  for (const bool up : {false, true}) {
    std::vector<std::pair<sg4::CommPtr, sg4::Host*>> comms;  // and each one's client
    for (ClientRun* r : survivors) {
      sg4::Host* client = ctx_.platform.workers[r->work.client];
      if (!client->is_on()) continue;  // SimGrid 3.32 aborts on a transfer to or from a host that is off
      try {
        comms.emplace_back(up ? sg4::Comm::sendto_async(client, server_host_, b.unmask_up)
                              : sg4::Comm::sendto_async(server_host_, client, b.survivors_down),
                           client);
      } catch (const simgrid::Exception&) {
      }
    }
    const uint64_t bytes = up ? b.unmask_up : b.survivors_down;
    for (const auto& [c, client] : comms) {
      try {
        c->wait();
        report_.add_secagg_message(up, bytes);
        if (LinkTraffic* traffic = LinkTraffic::active())
          traffic->record(c, up ? client : server_host_, up ? server_host_ : client, bytes, static_cast<double>(bytes));
      } catch (const simgrid::Exception&) {
      }
    }
  }
  const double seconds = secagg_.server_seconds(instance_size, s, wire_values_, vectors_);
  sg4::this_actor::execute(seconds * server_host_->get_speed());
  report_.add_secagg_time(0.0, seconds);
}

std::optional<double> FederatedLearning::aggregate(const std::vector<ClientRun*>& survivors) {
  if (survivors.empty()) return std::nullopt;
  const double start = sg4::Engine::get_clock();
  // Σ w_i·Δ_i and the final scale: two FLOPs per element of every uploaded vector.
  sg4::this_actor::execute(2.0 * static_cast<double>(wire_values_) * vectors_ * static_cast<double>(survivors.size()));
  report_.add_aggregation_time(sg4::Engine::get_clock() - start);
  if (ctx_.trace != nullptr)
    ctx_.trace->span(ctx_.config().workers, "aggregate", "server", start, sg4::Engine::get_clock(), rounds_done_);

  // `survivors` is in client-id order, whatever order their uploads arrived in.
  aggregator_.begin_round();
  double round_loss = 0.0;
  int64_t round_steps = 0;
  for (ClientRun* r : survivors) {
    const int c = r->work.client;
    const double weight = fl_.weight_by_samples ? samples_[c] : 1.0;
    aggregator_.add(r->local->update(), weight, models::fednova_step_norm(r->steps_done, local_.momentum),
                    r->local->control_update());
    loss_sum_ += r->loss_sum;
    loss_count_ += r->steps_done;
    round_loss += r->loss_sum;
    round_steps += r->steps_done;
    const double local_epochs = static_cast<double>(r->steps_done) / static_cast<double>(planner_.steps_per_epoch(c));
    epochs_ += local_epochs * samples_[c] / total_samples_;
  }
  aggregator_.finish(params_.master(), c_global_.empty() ? nullptr : c_global_.data());
  params_.assign(params_.master());  // refreshes the copy clients download (rounded under reduced precision)
  if (fl_.algorithm == models::FlAlgorithm::Scaffold) {
    // A client commits c_i⁺ only once the server has its Δc_i, so that c stays the mean of the c_i.
    for (ClientRun* r : survivors) {
      gpu::Buffer<float>& ci = c_local_[r->work.client];
      if (ci.empty()) ci = gpu::Buffer<float>(ctx_.ops, num_params_);
      ctx_.ops.copy(ci.data(), r->local->next_control(), num_params_);
    }
  }
  if (round_steps == 0) return std::nullopt;
  return round_loss / static_cast<double>(round_steps);
}

void FederatedLearning::record(int64_t rounds_done) {
  const models::EvalResult test = ctx_.objective.evaluate(params_.forward(), params_.numerics().activations);
  EvalPoint p;
  p.step = rounds_done;
  p.epoch = epochs_;
  p.sim_time_s = sg4::Engine::get_clock();
  p.lr = local_settings(std::max<int64_t>(0, rounds_done - 1)).lr;  // the rate of the round just played
  p.train_loss = loss_count_ > 0 ? loss_sum_ / static_cast<double>(loss_count_) : std::nan("");
  p.train_loss_measured = loss_count_ > 0;
  p.test_loss = test.loss;
  p.test_accuracy = test.accuracy;
  p.bytes_sent = report_.bytes_total();
  recorder_.fill_compression(p);
  loss_sum_ = 0.0;
  loss_count_ = 0;
  ctx_.metrics.record(p);
}

StrategyOutcome FederatedLearning::outcome() const {
  failure_.rethrow_if_failed();
  StrategyOutcome out;
  out.steps = rounds_done_;
  out.precision = params_.precision_outcome();
  out.bytes_sent = report_.bytes_total();
  const double end = sg4::Engine::get_clock();
  for (WorkerTime t : time_) {
    t.idle = std::max(0.0, end - t.compute - t.communication);  // not selected, or waiting for the round to end
    out.worker_time.push_back(t);
  }
  out.final_params = params_.download();
  out.details = report_.to_json(epochs_);
  nlohmann::json& d = out.details;
  d["algorithm"] = models::to_string(fl_.algorithm);
  d["clients_per_round"] = fl_.clients_per_round;
  d["sampling"] = client_sampling_table().name(fl_.weighted_sampling ? ClientSampling::Weighted : ClientSampling::Uniform);
  d["weighting"] = client_weighting_table().name(fl_.weight_by_samples ? ClientWeighting::Samples : ClientWeighting::Uniform);
  d["straggler_policy"] = to_string(fl_.straggler_policy);
  d["straggler_fraction"] = fl_.straggler_fraction;
  d["overcommit"] = fl_.overcommit;
  d["deadline_s"] = fl_.deadline;
  d["prox_mu"] = fl_.prox_mu;
  d["server"] = {{"lr", fl_.server_lr}, {"momentum", fl_.server_momentum}, {"host", server_host_->get_name()}};
  d["model_bytes"] = model_wire_bytes_;
  d["secure_aggregation"]["enabled"] = fl_.secure_aggregation.enabled;
  if (compression_.kind != models::CompressorKind::None) {
    d["compression"] = recorder_.compression_totals();
    if (!broadcast_.empty()) {
      const DownloadTotals& t = downloads_;
      d["compression"]["downloads"] = {
          {"broadcasts", t.messages},
          {"wire_bytes", t.wire_bytes},
          {"fp32_bytes", t.dense_bytes},
          {"relative_error", t.input_sum_squares > 0 ? std::sqrt(t.error_sum_squares / t.input_sum_squares) : 0.0}};
    } else {
      d["compression"]["downloads"] = nullptr;
    }
  }
  d["epoch_definition"] =
      "passes over the whole training set that the aggregated local work amounts to: the sum, over aggregated "
      "updates, of the client's local epochs times its share of the training samples";
  return out;
}

std::string describe_federated_learning(const RunConfig& c) {
  return std::string("federated ") + models::to_string(c.fl.algorithm) + ", " + std::to_string(c.fl.clients_per_round) +
         " of " + std::to_string(c.workers) + " clients per round for " + std::to_string(c.fl.rounds) + " rounds, batch " +
         std::to_string(c.batch_per_worker);
}

}  // namespace dtsim::sim
