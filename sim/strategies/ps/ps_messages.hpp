// What the asynchronous parameter server's workers and shards tell each other, and who owns a message
// while it travels.
//
// A message is held by a MessageStore from the moment it is sent until its receiver takes it; the transfer
// carries only its number. So a message whose transfer failed, or whose sender or receiver was cut off by a
// failure, is freed exactly once (discard_worker, or with the store), and a late receiver finds nothing
// instead of freed memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "gpu/buffer.hpp"
#include "sim/collectives/parameter_server.hpp"

namespace dtsim::sim {

// Control messages (a pull request, a goodbye) are this small on the wire.
inline constexpr uint64_t kControlMessageBytes = 64;

// A worker to one shard: possibly this shard's slice of a gradient, then what the worker wants next.
struct ShardRequest {
  enum class Next {
    Nothing,  // only the gradient; the worker pulls from this shard separately (ordered pulls)
    Params,   // serve `next_computation` with this shard's current parameters
    Goodbye,  // the worker takes no more work
  };
  int worker = 0;
  bool has_gradient = false;
  uint64_t computation = 0;     // the computation the gradient comes from (its pull)
  gpu::Buffer<float> gradient;  // this shard's slice, loss-scaled, backend memory
  double loss_scale = 1.0;      // the scale it was computed with
  double batch_loss = 0.0;      // the unscaled mean loss of its batch
  Next next = Next::Nothing;
  uint64_t next_computation = 0;
};

// A shard's parameters at one version: shared by every pull served at that version, freed with the last
// reply that holds it (once the workers computing from it have their gradients).
using ParameterSnapshot = std::shared_ptr<const gpu::Buffer<float>>;

// A shard to a worker: its part of the parameters a computation starts from.
struct ShardReply {
  uint64_t computation = 0;
  int64_t version = 0;  // updates the shard had applied when it served the pull
  ParameterSnapshot snapshot;
  double loss_scale = 1.0;  // the shard's current loss scale
};

template <class T>
class MessageStore {
 public:
  // Keeps `message` (sent by or to `worker`) and returns the payload that stands for it on the wire.
  ShardPayload send(int worker, std::unique_ptr<T> message, uint64_t bytes) {
    const uint64_t id = next_id_++;
    held_.emplace(id, std::make_pair(worker, std::move(message)));
    return {reinterpret_cast<void*>(static_cast<uintptr_t>(id)), bytes};
  }
  // The message a received payload stands for; null when it was discarded meanwhile.
  std::unique_ptr<T> take(const ShardPayload& payload) {
    const auto it = held_.find(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(payload.data)));
    if (it == held_.end()) return nullptr;
    std::unique_ptr<T> message = std::move(it->second.second);
    held_.erase(it);
    return message;
  }
  // Frees every message sent by or to `worker` that nobody took (it was cut off).
  void discard_worker(int worker) {
    for (auto it = held_.begin(); it != held_.end();) it = it->second.first == worker ? held_.erase(it) : std::next(it);
  }
  size_t size() const { return held_.size(); }

 private:
  uint64_t next_id_ = 1;  // SimGrid refuses a null payload
  std::map<uint64_t, std::pair<int, std::unique_ptr<T>>> held_;
};

}  // namespace dtsim::sim
