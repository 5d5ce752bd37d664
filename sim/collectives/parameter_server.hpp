// Parameter-server traffic between worker ranks and S server shards. A worker pushes its payload split
// over the shards, all shards at once, and waits until every shard has it; a server shard takes pushes in
// the order they arrive; a pull is the reverse (every shard sends the worker its part, the worker waits for
// all). Unlike the collectives, these carry real payload pointers: the strategy's gradients and parameter
// snapshots travel with their simulated size, and the receiver gets the very pointer that was sent.
//
// Pushes flow as soon as they are sent: from its first receive_push() on, a shard keeps one receive posted
// per worker (a worker has at most one push in flight to a shard), so pushes from many workers share the
// server's link through max-min as they would on a real NIC, and receive_push() returns them in the order
// they complete.
//
// Time on a contention-free star, W workers pushing S bytes each to k shards at the same moment:
//   α + max(S, W·S/k) / B      (the worker's link carries S, each shard's link W·S/k)
// and the same for W workers pulling S bytes.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dtsim::sim {

struct Platform;

struct ShardPayload {
  void* data = nullptr;  // passed through untouched; ownership is the strategy's business
  uint64_t bytes = 0;    // the simulated size of the transfer
};

struct PushArrival {
  int worker = -1;
  int shard = -1;
  ShardPayload payload;
};

class ShardedServerChannel {
 public:
  // `shards` server shards serving the platform's workers. Names its mailboxes after `name` (unique).
  ShardedServerChannel(const Platform& platform, int shards, std::string name);

  int shards() const { return shards_; }
  int workers() const { return workers_; }
  // `bytes` split over the shards in near-equal parts (they differ by at most one byte).
  std::vector<uint64_t> shard_sizes(uint64_t bytes) const;

  // Worker side: sends payloads[s] to shard s, all at once (payloads.size() == shards()); returns when every
  // shard has received its part.
  void push(int worker, const std::vector<ShardPayload>& payloads);
  // Worker side: waits until every shard has sent this worker its part (send_pull); returns them in shard order.
  std::vector<ShardPayload> pull(int worker);
  // The same with one shard only: a message to shard `shard`, and the wait for its part of a pull.
  void push_to(int worker, int shard, ShardPayload payload);
  ShardPayload pull_from(int worker, int shard);

  // Server side, from the one actor that serves shard `shard`: the next push to reach it, in arrival order.
  PushArrival receive_push(int shard);
  // Server side: every push that has reached shard `shard` at the first simulated instant at which any does,
  // waiting until `deadline` (simulated seconds) at most; empty when the deadline came first. Pushes that
  // arrive at the same instant come in worker rank order, so that ties do not depend on SimGrid's internal
  // order. A push whose transfer failed (its sender's host went down) is dropped and its receive posted again.
  static constexpr double kNoDeadline = std::numeric_limits<double>::infinity();
  std::vector<PushArrival> receive_pushes_until(int shard, double deadline);
  // Server side: starts sending `payload` to `worker` as its part of that worker's pull. Wait on the
  // returned communication, or keep serving and let it complete on its own.
  simgrid::s4u::CommPtr send_pull(int shard, int worker, ShardPayload payload);
  // Server side: cancels the receives receive_push() keeps posted, once the shard will take no more pushes.
  void stop_serving(int shard);

  uint64_t bytes_sent() const { return bytes_sent_; }  // pushed and pulled payload bytes, all ranks

 private:
  struct Envelope {
    uint64_t id;
    int worker;
    int shard;
    ShardPayload payload;
    const simgrid::s4u::Host* from;  // the sender's host (for links.csv, recorded where it is received)
  };
  // What a shard's serving actor keeps posted: one receive per worker. They are matched to pushes in posting
  // order and complete in arrival order.
  struct Inbox {
    bool started = false;
    std::vector<simgrid::s4u::CommPtr> pending;
    std::vector<Envelope*> slots;
    std::vector<int> slot_of_pending;
  };

  simgrid::s4u::Mailbox* push_mailbox(int shard);
  simgrid::s4u::Mailbox* pull_mailbox(int shard, int worker);
  Inbox& start_serving(int shard);
  void post_receive(Inbox& inbox, int shard, int slot);
  PushArrival take(Inbox& inbox, int shard, size_t pending_index);
  void repost_failed(Inbox& inbox, int shard);
  // An envelope stays here from its send until its receiver takes it, so that one whose transfer failed
  // (a host went down mid-transfer) is still freed, and never twice.
  Envelope* new_envelope(int worker, int shard, ShardPayload payload);
  ShardPayload open_envelope(Envelope* e);
  // Opens a pull's envelope that `comm` delivered to this actor's host, counting the transfer in links.csv.
  ShardPayload open_delivered(Envelope* e, const simgrid::s4u::CommPtr& comm);

  int shards_;
  int workers_;
  std::string name_;
  std::vector<Inbox> inboxes_;
  std::vector<const simgrid::s4u::Host*> shard_hosts_;  // where each shard is served (set when it starts)
  std::map<uint64_t, std::unique_ptr<Envelope>> in_flight_;
  uint64_t next_envelope_ = 0;
  uint64_t bytes_sent_ = 0;
};

}  // namespace dtsim::sim
