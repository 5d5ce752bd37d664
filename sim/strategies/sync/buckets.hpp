// Gradient buckets and the per-worker communication stream that allreduces them, as PyTorch DDP does:
// backward produces the gradients layer by layer (last layer first); consecutive layers are grouped into
// buckets of about `bucket_bytes`; a bucket's allreduce can start as soon as its last layer's gradient
// exists, while backward goes on with the earlier layers. Buckets are allreduced one after another, in the
// order they were produced (one communication stream per worker).
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/objective.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {

struct Bucket {
  size_t offset = 0;             // first parameter (buckets are contiguous runs of the flat vector)
  size_t size = 0;               // parameters
  double backward_flops = 0.0;   // backward work that must finish before the bucket is ready
  size_t first_segment = 0;      // the segments it holds: first_segment … first_segment + segments − 1
  size_t segments = 0;
};

// Groups the segments (in backward order) into buckets of at least `bucket_bytes` each (the last may be
// smaller), at `bytes_per_value` on the wire.
std::vector<Bucket> plan_buckets(const std::vector<models::GradientSegment>& segments, double bucket_bytes,
                                 double bytes_per_value);

// One collective call of a bucket: what compression puts on the wire (an allreduce of `bytes`, or an
// all-gather whose gathered size is `bytes`). Calls of a bucket run one after the other.
struct BucketMessage {
  CollectiveKind kind = CollectiveKind::Allreduce;
  uint64_t bytes = 0;
};

// The messages of a bucket in a step. It may block (in simulated time) until they are known: a compressed
// all-gather pads to the largest worker's message, known once every worker has encoded its gradient.
using BucketWire = std::function<std::vector<BucketMessage>(const Bucket& bucket, int64_t step)>;
using MakeCollective = std::function<std::unique_ptr<Collective>(CollectiveKind kind, const std::string& name)>;

// One communication stream per worker: hand() queues a ready bucket and returns at once; an actor on the
// worker's host communicates the queued buckets in order; wait_all() blocks until every handed bucket is done.
class BucketStreams {
 public:
  // Makes one allreduce per bucket (their mailboxes must not mix) over `platform`'s workers, and a bucket's
  // all-gather the first time its wire asks for one (so `make` must stay callable). Without `wire`, a bucket
  // is one allreduce of size × bytes_per_value.
  // `bucket_kind`: what a bucket's own collective is (an allreduce, or ZeRO's reduce-scatter).
  BucketStreams(const Platform& platform, const std::vector<Bucket>& buckets, double bytes_per_value,
                MakeCollective make, BucketWire wire = nullptr,
                CollectiveKind bucket_kind = CollectiveKind::Allreduce);
  ~BucketStreams();

  // Starts rank's stream actor (a daemon on the worker's host: it ends with the workers); call before
  // Engine::run() or from an actor.
  simgrid::s4u::ActorPtr start(int rank, const std::string& name);
  void hand(int rank, int bucket, int64_t step);
  void wait_all(int rank);
  // Blocks until the first `count` buckets handed to rank's stream (in all) are done.
  void wait_for(int rank, int count);
  int handed(int rank) const;  // buckets handed to rank's stream so far
  int size() const { return static_cast<int>(buckets_.size()); }
  const Bucket& bucket(int b) const { return buckets_[b]; }
  // The fidelity the bucket collectives run at (as fidelity auto resolved it).
  Fidelity fidelity() const { return collectives_.front()->fidelity(); }

  // Lets rank 0's stream stand in for every rank's (Collective::stand_in_for_all): possible when every bucket
  // collective is analytic and there is no wire (a compressed wire waits for every worker's message).
  // Afterwards only rank 0's stream may be started and handed buckets.
  bool can_stand_in_for_all() const;
  void stand_in_for_all();  // requires can_stand_in_for_all()

  // A member failed: cancels every bucket collective's transfers in flight (see Collective::abandon).
  void abandon();
  uint64_t bytes_sent() const;
  uint64_t bytes_per_step() const;  // by all ranks, all buckets of one uncompressed step
  // By all ranks in bucket b's calls of `messages`.
  uint64_t bytes_of(int bucket, const std::vector<BucketMessage>& messages);

 private:
  struct Stream;
  void serve(int rank);
  bool tolerate_failures_ = false;

 public:
  // Peers may fail (a strategy recovers from it): a stream whose transfer fails just ends.
  void tolerate_failures() { tolerate_failures_ = true; }

  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<Bucket> buckets_;
  double bytes_per_value_;
  CollectiveKind bucket_kind_;
  std::vector<std::unique_ptr<Collective>> collectives_;  // bucket_kind_, per bucket
  std::vector<std::unique_ptr<Collective>> gathers_;      // all-gather, per bucket (null until needed)
  MakeCollective make_;
  BucketWire wire_;
  Collective& collective(int bucket, CollectiveKind kind);
  std::vector<std::unique_ptr<Stream>> streams_;
};

}  // namespace dtsim::sim
