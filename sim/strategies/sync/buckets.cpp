#include "sim/strategies/sync/buckets.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <utility>

namespace dtsim::sim {

std::vector<Bucket> plan_buckets(const std::vector<models::GradientSegment>& segments, double bucket_bytes,
                                 double bytes_per_value) {
  std::vector<Bucket> buckets;
  Bucket current;
  bool open = false;
  for (size_t i = 0; i < segments.size(); ++i) {
    const models::GradientSegment& s = segments[i];
    // Backward produces segments from the end of the flat vector towards its start, so a bucket grows
    // downwards: its offset is its newest segment's.
    if (!open) {
      current = {s.offset, 0, 0.0, i, 0};
      open = true;
    }
    current.offset = std::min(current.offset, s.offset);
    current.size += s.size;
    current.backward_flops += s.backward_flops;
    ++current.segments;
    if (static_cast<double>(current.size) * bytes_per_value >= bucket_bytes) {
      buckets.push_back(current);
      open = false;
    }
  }
  if (open) buckets.push_back(current);
  return buckets;
}

struct BucketStreams::Stream {
  std::deque<std::pair<int, int64_t>> queue;  // bucket, step
  int handed = 0;
  int done = 0;
  simgrid::s4u::SemaphorePtr ready = simgrid::s4u::Semaphore::create(0);     // one token per queued bucket
  simgrid::s4u::SemaphorePtr finished = simgrid::s4u::Semaphore::create(0);  // one token per finished bucket
};

BucketStreams::BucketStreams(const Platform& platform, const std::vector<Bucket>& buckets, double bytes_per_value,
                             MakeCollective make, BucketWire wire, CollectiveKind bucket_kind)
    : hosts_(platform.workers),
      buckets_(buckets),
      bytes_per_value_(bytes_per_value),
      bucket_kind_(bucket_kind),
      gathers_(buckets.size()),
      make_(std::move(make)),
      wire_(std::move(wire)) {
  for (size_t b = 0; b < buckets.size(); ++b) {
    collectives_.push_back(make_(bucket_kind_, "bucket" + std::to_string(b)));
    if (b > 0) collectives_[b]->share_plans_with(*collectives_[0]);  // buckets repeat a few sizes
  }
  for (int r = 0; r < platform.num_workers(); ++r) streams_.push_back(std::make_unique<Stream>());
}

BucketStreams::~BucketStreams() = default;

simgrid::s4u::ActorPtr BucketStreams::start(int rank, const std::string& name) {
  simgrid::s4u::ActorPtr actor = simgrid::s4u::Actor::create(name, hosts_[rank], [this, rank] {
    try {
      serve(rank);
    } catch (const simgrid::NetworkFailureException&) {
      if (!tolerate_failures_) throw;
    } catch (const simgrid::CancelException&) {
      if (!tolerate_failures_) throw;
    }
  });
  actor->daemonize();
  return actor;
}

bool BucketStreams::can_stand_in_for_all() const {
  if (wire_) return false;
  for (const auto& c : collectives_)
    if (!c->can_stand_in_for_all()) return false;
  return true;
}

void BucketStreams::stand_in_for_all() {
  for (const auto& c : collectives_) c->stand_in_for_all();
}

void BucketStreams::hand(int rank, int bucket, int64_t step) {
  Stream& s = *streams_[rank];
  s.queue.emplace_back(bucket, step);
  ++s.handed;
  s.ready->release();
}

void BucketStreams::wait_all(int rank) { wait_for(rank, streams_[rank]->handed); }

void BucketStreams::wait_for(int rank, int count) {
  Stream& s = *streams_[rank];
  // A finished bucket's token is taken by whoever waits for it or a later one; done counts them all.
  while (s.done < count) s.finished->acquire();
}

int BucketStreams::handed(int rank) const { return streams_[rank]->handed; }

void BucketStreams::serve(int rank) {
  Stream& s = *streams_[rank];
  while (true) {
    s.ready->acquire();
    const auto [b, step] = s.queue.front();
    s.queue.pop_front();
    if (!wire_) {
      collectives_[b]->run(rank, static_cast<uint64_t>(static_cast<double>(buckets_[b].size) * bytes_per_value_));
    } else {
      for (const BucketMessage& m : wire_(buckets_[b], step)) collective(b, m.kind).run(rank, m.bytes);
    }
    ++s.done;
    s.finished->release();
  }
}

void BucketStreams::abandon() {
  for (auto& c : collectives_) c->abandon();
  for (auto& c : gathers_)
    if (c) c->abandon();
}

uint64_t BucketStreams::bytes_sent() const {
  uint64_t total = 0;
  for (const auto& c : collectives_) total += c->bytes_sent();
  for (const auto& c : gathers_)
    if (c) total += c->bytes_sent();
  return total;
}

uint64_t BucketStreams::bytes_of(int bucket, const std::vector<BucketMessage>& messages) {
  uint64_t total = 0;
  for (const BucketMessage& m : messages) total += collective(bucket, m.kind).bytes_per_call(m.bytes);
  return total;
}

Collective& BucketStreams::collective(int bucket, CollectiveKind kind) {
  if (kind == bucket_kind_) return *collectives_[bucket];
  if (kind != CollectiveKind::AllGather)
    throw std::logic_error("BucketStreams: a bucket runs its own collective kind or an all-gather");
  std::unique_ptr<Collective>& gather = gathers_[bucket];
  if (!gather) gather = make_(CollectiveKind::AllGather, "gather" + std::to_string(bucket));
  return *gather;
}

uint64_t BucketStreams::bytes_per_step() const {
  uint64_t total = 0;
  for (size_t b = 0; b < buckets_.size(); ++b)
    total += collectives_[b]->bytes_per_call(static_cast<uint64_t>(static_cast<double>(buckets_[b].size) * bytes_per_value_));
  return total;
}

}  // namespace dtsim::sim
