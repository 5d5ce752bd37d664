#include "sim/strategies/sync/sync_compression.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace dtsim::sim {

SyncGradientCompression::SyncGradientCompression(const TrainingContext& ctx, int workers)
    : proxied_(ctx.compute.proxied()),
      num_params_(ctx.objective.num_params()),
      layouts_(ctx.objective.tensor_layouts()),
      group_(ctx.ops, layouts_, ctx.objective.num_params(), ctx.compression, workers) {}

void SyncGradientCompression::contribute(int rank, float* grad, int64_t step, int participants) {
  const std::vector<models::WireOp> wire = group_.contribute(rank, grad, step);
  StepWire& s = steps_[step];
  if (s.contributed == 0) {
    s.largest = wire;
    s.participants = participants;
  } else {
    if (wire.size() != s.largest.size()) throw std::logic_error("sync compression: workers sent different messages");
    for (size_t i = 0; i < wire.size(); ++i)
      s.largest[i].bytes_per_worker = std::max(s.largest[i].bytes_per_worker, wire[i].bytes_per_worker);
  }
  ++s.contributed;
  if (s.complete()) known_->notify_all();
}

std::vector<BucketMessage> SyncGradientCompression::messages(const Bucket& bucket, int64_t step) {
  const auto known = [&] {
    const auto it = steps_.find(step);
    return it != steps_.end() && it->second.complete();
  };
  // Locking is a simcall, which lets other actors run: only a stream that must wait takes the lock, so that
  // the worker applying the step (which calls this for the byte count) never yields mid-update.
  if (!known()) {
    std::unique_lock<simgrid::s4u::Mutex> lock(*mutex_);
    known_->wait(lock, known);
  }
  StepWire& s = steps_.at(step);
  // Every rank's stream asks, and the worker applying the step once more: the answer is worked out once.
  const auto cached = s.by_bucket.find(bucket.offset);
  if (cached != s.by_bucket.end()) return cached->second;
  // Per tensor of the bucket, its k-th message belongs to phase k.
  std::vector<int> seen(layouts_.size(), 0);
  std::vector<uint64_t> allreduce, allgather;  // bytes per phase
  for (const models::WireOp& op : s.largest) {
    const models::ParamTensor& t = layouts_[op.tensor].tensor;
    if (!proxied_) {
      if (t.offset < bucket.offset || t.offset >= bucket.offset + bucket.size) continue;
      if (t.offset + t.size > bucket.offset + bucket.size)
        throw std::logic_error("sync compression: a tensor straddles two gradient buckets");
    }
    const size_t phase = static_cast<size_t>(seen[op.tensor]++);
    if (allreduce.size() <= phase) {
      allreduce.resize(phase + 1, 0);
      allgather.resize(phase + 1, 0);
    }
    (op.collective == models::Collective::Allreduce ? allreduce : allgather)[phase] += op.bytes_per_worker;
  }
  if (proxied_)
    for (size_t phase = 0; phase < allreduce.size(); ++phase) {
      const double values = static_cast<double>(bucket.size);  // of the workload's trained values
      allreduce[phase] = ComputeCost::proxy_compressed_message(allreduce[phase], num_params_, values);
      allgather[phase] = ComputeCost::proxy_compressed_message(allgather[phase], num_params_, values);
    }
  std::vector<BucketMessage>& out = s.by_bucket[bucket.offset];
  for (size_t phase = 0; phase < allreduce.size(); ++phase) {
    if (allreduce[phase] > 0) out.push_back({CollectiveKind::Allreduce, allreduce[phase]});
    if (allgather[phase] > 0)
      out.push_back({CollectiveKind::AllGather, allgather[phase] * static_cast<uint64_t>(s.participants)});
  }
  return out;
}

void SyncGradientCompression::combine(int64_t step, float* mean, TrainingRecorder& recorder) {
  const models::GroupResult result = group_.combine(mean);
  for (const models::CompressionStats& w : result.workers) recorder.add_compression(w);
  // Every stream has read this step's sizes by now (each took part in the collectives that just ended), but
  // the step's entry stays until the next combine, so that no late reader could find it missing.
  steps_.erase(steps_.begin(), steps_.lower_bound(step));
}

}  // namespace dtsim::sim
