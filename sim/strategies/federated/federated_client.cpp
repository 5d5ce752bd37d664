// A selected client's part of a round, as an actor on its own host: download, local training with real
// gradients whose FLOPs are charged on the host, upload. The server may cancel whatever the client waits on
// (the round no longer needs it); the client then leaves at once.
#include <simgrid/Exception.hpp>

#include <cmath>

#include "sim/strategies/federated/federated.hpp"
#include "sim/strategies/federated/local_step_wait.hpp"
#include "sim/world/link_traffic.hpp"

namespace dtsim::sim {
namespace {

double now() { return sg4::Engine::get_clock(); }

}  // namespace

bool FederatedLearning::transfer(ClientRun& run, sg4::Host* from, sg4::Host* to, uint64_t bytes) {
  if (bytes == 0) return !run.cancelled;
  WorkerTime& time = time_[run.work.client];
  const double start = now();
  bool ok = true;
  sg4::CommPtr comm;
  try {
    comm = sg4::Comm::sendto_async(from, to, bytes);
    run.current = comm;
    comm->wait();
  } catch (const simgrid::Exception&) {
    ok = false;  // cancelled by the server, or a link on the route went down
  }
  run.current = nullptr;
  if (LinkTraffic* traffic = LinkTraffic::active(); traffic != nullptr && ok && !run.cancelled)
    traffic->record(comm, from, to, bytes, static_cast<double>(bytes));
  if (ctx_.trace != nullptr)
    ctx_.trace->span(run.work.client, from == server_host_ ? "download" : "upload", "communication", start, now(),
                     run.round);
  time.communication += now() - start;
  if (!ok && !run.cancelled) {
    run.failed = true;
    reported_->notify_all();
  }
  return ok && !run.cancelled;
}

bool FederatedLearning::compute(ClientRun& run, double seconds_at_peak) {
  WorkerTime& time = time_[run.work.client];
  sg4::Host* host = sg4::this_actor::get_host();
  const double start = now();
  bool ok = true;
  try {
    const sg4::ExecPtr exec = sg4::this_actor::exec_async(seconds_at_peak * host->get_speed());
    run.current = exec;
    exec->wait();
  } catch (const simgrid::Exception&) {
    ok = false;
  }
  run.current = nullptr;
  time.compute += now() - start;
  if (ctx_.trace != nullptr) ctx_.trace->span(run.work.client, "secure aggregation masks", "compute", start, now(), run.round);
  return ok && !run.cancelled;
}

void FederatedLearning::compress_upload(ClientRun& run) {
  const int c = run.work.client;
  float* delta = run.local->mutable_update();
  if (ctx_.ops.count_nonfinite(delta, num_params_) > 0) return;  // dense, the compressor untouched
  auto it = upload_compressors_.find(c);
  if (it == upload_compressors_.end())
    it = upload_compressors_
             .emplace(c, models::Compressor<float>(ctx_.ops, ctx_.objective.tensor_layouts(), num_params_,
                                                   compression_, c))
             .first;
  const models::CompressionResult result = it->second.compress(delta, run.round);
  // Secure aggregation is refused with compression (compression_config.cpp), so nothing is added for masks.
  run.upload_bytes = on_the_wire(result.stats.wire_bytes) + static_cast<uint64_t>(vectors_ - 1) * model_wire_bytes_;
  // The message is the whole upload: SCAFFOLD's Δc goes with the compressed Δy, dense (exact, so it adds
  // bytes and no error).
  models::CompressionStats message = result.stats;
  message.wire_bytes += static_cast<uint64_t>(vectors_ - 1) * params_.wire_bytes();
  message.dense_bytes += static_cast<uint64_t>(vectors_ - 1) * num_params_ * sizeof(float);
  recorder_.add_compression(message);
}

uint64_t FederatedLearning::compress_download(int64_t round) {
  float* diff = download_diff_.data();
  ctx_.ops.copy(diff, params_.forward(), num_params_);
  ctx_.ops.axpy(-1.0f, broadcast_.data(), diff, num_params_);
  if (round < compression_.start_step || ctx_.ops.count_nonfinite(diff, num_params_) > 0) {
    // Not compressed yet (or not compressible): the model itself, exactly.
    ctx_.ops.copy(broadcast_.data(), params_.forward(), num_params_);
    return model_wire_bytes_;
  }
  models::CompressionSettings settings = compression_;
  settings.error_feedback = false;
  // Fresh for the round; the server's random streams are its own (rank = the number of clients).
  models::Compressor<float> compressor(ctx_.ops, ctx_.objective.tensor_layouts(), num_params_, settings,
                                       ctx_.config().workers);
  const models::CompressionResult result = compressor.compress(diff, round);
  ctx_.ops.axpy(1.0f, diff, broadcast_.data(), num_params_);
  ++downloads_.messages;
  // The whole broadcast, as for an upload: SCAFFOLD's c goes with the compressed model delta, dense.
  downloads_.wire_bytes += result.stats.wire_bytes + static_cast<uint64_t>(vectors_ - 1) * params_.wire_bytes();
  downloads_.dense_bytes +=
      result.stats.dense_bytes + static_cast<uint64_t>(vectors_ - 1) * num_params_ * sizeof(float);
  downloads_.error_sum_squares += result.stats.error_sum_squares;
  downloads_.input_sum_squares += result.stats.input_sum_squares;
  return on_the_wire(result.stats.wire_bytes);
}

uint64_t FederatedLearning::on_the_wire(uint64_t compressed_bytes) const {
  if (!ctx_.compute.proxied()) return compressed_bytes;
  return ComputeCost::proxy_compressed_message(compressed_bytes, num_params_,
                                               static_cast<double>(ctx_.compute.proxy_trained_values()));
}

void FederatedLearning::client(ClientRun& run, double round_start, int instance_size) {
  const int c = run.work.client;
  sg4::Host* host = ctx_.platform.workers[c];
  const bool secure = fl_.secure_aggregation.enabled;
  const SecureAggregationBytes setup = secure ? secagg_.bytes(instance_size, 0, wire_values_, vectors_)
                                              : SecureAggregationBytes{};

  double start = now();
  if (!transfer(run, server_host_, host, run.download_bytes)) return;
  report_.add_download(run.download_bytes, setup.setup_down, now() - start);
  if (secure) {
    if (!transfer(run, host, server_host_, setup.setup_up)) return;
    report_.add_secagg_message(true, setup.setup_up);
  }
  if (!run.reports) return;  // a protocol straggler that will be dropped: it never finishes its work

  const auto control = c_local_.find(c);
  // The model the client holds: the broadcast x̃ under compressed downloads.
  const float* global = broadcast_.empty() ? params_.forward() : broadcast_.data();
  run.local = std::make_unique<LocalTraining>(ctx_.ops, ctx_.objective, c, global, local_settings(run.round),
                                              c_global_.empty() ? nullptr : c_global_.data(),
                                              control == c_local_.end() ? nullptr : control->second.data());
  // Under the partial policy the deadline stops local training: the step in progress at that moment does not
  // count, and what was finished is uploaded.
  const double cutoff = fl_.deadline > 0 && fl_.straggler_policy == StragglerPolicy::Partial
                            ? round_start + fl_.deadline
                            : kNever;
  const StragglerModel& stragglers = ctx_.heterogeneity.stragglers();
  WorkerTime& time = time_[c];
  for (int64_t k = 0; k < run.work.local_steps && now() < cutoff; ++k) {
    const int64_t step = gradients_done_[c]++;
    const double loss = run.local->compute_gradient(step, params_.numerics());
    // A local step computes a gradient and applies it to the client's copy.
    const double flops =
        (ctx_.compute.gradient(c) + ctx_.compute.update(c)) * stragglers.compute_multiplier(c, step);
    const double step_start = now();
    const sg4::ExecPtr exec = sg4::this_actor::exec_async(flops);
    run.current = exec;
    const bool finished = wait_local_step(exec, cutoff);
    run.current = nullptr;
    time.compute += now() - step_start;
    run.compute_s += now() - step_start;
    if (ctx_.trace != nullptr) ctx_.trace->span(c, "local step", "compute", step_start, now(), run.round);
    if (run.cancelled) return;
    if (!finished) break;
    run.local->apply_step();
    ++run.steps_done;
    run.loss_sum += loss;
  }

  if (run.steps_done > 0) {
    run.local->finish(run.steps_done, params_.numerics().gradients);
    if (compression_.kind != models::CompressorKind::None) compress_upload(run);
    if (secure) {
      const double seconds = secagg_.client_seconds(instance_size, wire_values_, vectors_);
      if (!compute(run, seconds)) return;
      report_.add_secagg_time(seconds, 0.0);
    }
    start = now();
    if (!transfer(run, host, server_host_, run.upload_bytes)) return;
    report_.add_upload(run.upload_bytes, setup.masked_extra, now() - start);
  }
  run.reported = true;
  run.report_time = now();
  reported_->notify_all();
}

}  // namespace dtsim::sim
