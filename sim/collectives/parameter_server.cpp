#include "sim/collectives/parameter_server.hpp"

#include <simgrid/Exception.hpp>

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/closed_form.hpp"
#include "sim/world/link_traffic.hpp"
#include "sim/world/platform.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

ShardedServerChannel::ShardedServerChannel(const Platform& platform, int shards, std::string name)
    : shards_(shards), workers_(platform.num_workers()), name_(std::move(name)), inboxes_(shards),
      shard_hosts_(shards, nullptr) {
  if (shards < 1) throw std::invalid_argument("a parameter server needs at least one shard");
}

std::vector<uint64_t> ShardedServerChannel::shard_sizes(uint64_t bytes) const {
  std::vector<uint64_t> sizes(shards_);
  for (int s = 0; s < shards_; ++s) sizes[s] = chunk_bytes(bytes, shards_, s);
  return sizes;
}

sg4::Mailbox* ShardedServerChannel::push_mailbox(int shard) {
  return sg4::Mailbox::by_name(name_ + "/push/" + std::to_string(shard));
}

sg4::Mailbox* ShardedServerChannel::pull_mailbox(int shard, int worker) {
  return sg4::Mailbox::by_name(name_ + "/pull/" + std::to_string(shard) + ">" + std::to_string(worker));
}

ShardedServerChannel::Envelope* ShardedServerChannel::new_envelope(int worker, int shard, ShardPayload payload) {
  const uint64_t id = next_envelope_++;
  auto e = std::make_unique<Envelope>(Envelope{id, worker, shard, payload, sg4::this_actor::get_host()});
  Envelope* raw = e.get();
  in_flight_.emplace(id, std::move(e));
  return raw;
}

ShardPayload ShardedServerChannel::open_envelope(Envelope* e) {
  const ShardPayload payload = e->payload;
  in_flight_.erase(e->id);
  return payload;
}

ShardPayload ShardedServerChannel::open_delivered(Envelope* e, const sg4::CommPtr& comm) {
  if (LinkTraffic* traffic = LinkTraffic::active())
    traffic->record(comm, e->from, sg4::this_actor::get_host(), e->payload.bytes,
                    static_cast<double>(e->payload.bytes));
  return open_envelope(e);
}

void ShardedServerChannel::push(int worker, const std::vector<ShardPayload>& payloads) {
  if (static_cast<int>(payloads.size()) != shards_)
    throw std::invalid_argument("push: " + std::to_string(payloads.size()) + " payloads for " +
                                std::to_string(shards_) + " shards");
  std::vector<sg4::CommPtr> sends;
  for (int s = 0; s < shards_; ++s)
    sends.push_back(push_mailbox(s)->put_async(new_envelope(worker, s, payloads[s]), payloads[s].bytes));
  sg4::Comm::wait_all(sends);
  for (const ShardPayload& p : payloads) bytes_sent_ += p.bytes;
  if (LinkTraffic* traffic = LinkTraffic::active())
    for (int s = 0; s < shards_; ++s)
      traffic->record(sends[s], sg4::this_actor::get_host(), shard_hosts_[s], payloads[s].bytes,
                      static_cast<double>(payloads[s].bytes));
}

void ShardedServerChannel::push_to(int worker, int shard, ShardPayload payload) {
  const sg4::CommPtr send = push_mailbox(shard)->put_async(new_envelope(worker, shard, payload), payload.bytes);
  send->wait();
  bytes_sent_ += payload.bytes;
  if (LinkTraffic* traffic = LinkTraffic::active())
    traffic->record(send, sg4::this_actor::get_host(), shard_hosts_[shard], payload.bytes,
                    static_cast<double>(payload.bytes));
}

std::vector<ShardPayload> ShardedServerChannel::pull(int worker) {
  std::vector<Envelope*> received(shards_, nullptr);
  std::vector<sg4::CommPtr> gets;
  for (int s = 0; s < shards_; ++s) gets.push_back(pull_mailbox(s, worker)->get_async<Envelope>(&received[s]));
  sg4::Comm::wait_all(gets);
  std::vector<ShardPayload> parts(shards_);
  for (int s = 0; s < shards_; ++s) {
    parts[s] = open_delivered(received[s], gets[s]);
    bytes_sent_ += parts[s].bytes;
  }
  return parts;
}

ShardPayload ShardedServerChannel::pull_from(int worker, int shard) {
  Envelope* e = nullptr;
  const sg4::CommPtr get = pull_mailbox(shard, worker)->get_async<Envelope>(&e);
  get->wait();
  const ShardPayload part = open_delivered(e, get);
  bytes_sent_ += part.bytes;
  return part;
}

void ShardedServerChannel::post_receive(Inbox& inbox, int shard, int slot) {
  inbox.slots[slot] = nullptr;
  inbox.pending.push_back(push_mailbox(shard)->get_async<Envelope>(&inbox.slots[slot]));
  inbox.slot_of_pending.push_back(slot);
}

ShardedServerChannel::Inbox& ShardedServerChannel::start_serving(int shard) {
  Inbox& inbox = inboxes_.at(shard);
  // A push completes only once its shard has started serving, so its sender finds the shard's host here.
  shard_hosts_[shard] = sg4::this_actor::get_host();
  if (!inbox.started) {
    inbox.slots.assign(workers_, nullptr);
    for (int slot = 0; slot < workers_; ++slot) post_receive(inbox, shard, slot);
    inbox.started = true;
  }
  return inbox;
}

PushArrival ShardedServerChannel::take(Inbox& inbox, int shard, size_t pending_index) {
  const int slot = inbox.slot_of_pending[pending_index];
  inbox.pending.erase(inbox.pending.begin() + static_cast<std::ptrdiff_t>(pending_index));
  inbox.slot_of_pending.erase(inbox.slot_of_pending.begin() + static_cast<std::ptrdiff_t>(pending_index));
  Envelope* e = inbox.slots[slot];
  const int worker = e->worker;
  const int to_shard = e->shard;
  const ShardPayload payload = open_envelope(e);
  post_receive(inbox, shard, slot);
  return {worker, to_shard, payload};
}

// SimGrid 3.32 reports a failed transfer in wait_any/test_any by an exception that does not say which one;
// the failed receives are the ones whose state says so (checked in 3.32: the state of a receive in the
// waited set is updated when it fails).
void ShardedServerChannel::repost_failed(Inbox& inbox, int shard) {
  for (size_t i = 0; i < inbox.pending.size();) {
    const auto state = inbox.pending[i]->get_state();
    if (state == sg4::Activity::State::FAILED || state == sg4::Activity::State::CANCELED) {
      const int slot = inbox.slot_of_pending[i];
      inbox.pending.erase(inbox.pending.begin() + static_cast<std::ptrdiff_t>(i));
      inbox.slot_of_pending.erase(inbox.slot_of_pending.begin() + static_cast<std::ptrdiff_t>(i));
      post_receive(inbox, shard, slot);
    } else {
      ++i;
    }
  }
}

PushArrival ShardedServerChannel::receive_push(int shard) {
  Inbox& inbox = start_serving(shard);
  const ssize_t done = sg4::Comm::wait_any(inbox.pending);
  return take(inbox, shard, static_cast<size_t>(done));
}

std::vector<PushArrival> ShardedServerChannel::receive_pushes_until(int shard, double deadline) {
  Inbox& inbox = start_serving(shard);
  std::vector<PushArrival> arrived;
  while (arrived.empty()) {
    const double now = sg4::Engine::get_clock();
    if (deadline != kNoDeadline && now >= deadline) break;
    try {
      const ssize_t done = sg4::Comm::wait_any_for(inbox.pending, deadline == kNoDeadline ? -1.0 : deadline - now);
      if (done < 0) break;  // the deadline (or, rounded, an instant before it): the caller asks again
      arrived.push_back(take(inbox, shard, static_cast<size_t>(done)));
    } catch (const simgrid::NetworkFailureException&) {
      repost_failed(inbox, shard);
    }
  }
  // Everything else that completed at this same instant.
  for (bool more = !arrived.empty(); more;) {
    try {
      const ssize_t done = sg4::Comm::test_any(inbox.pending);
      more = done >= 0;
      if (more) arrived.push_back(take(inbox, shard, static_cast<size_t>(done)));
    } catch (const simgrid::NetworkFailureException&) {
      repost_failed(inbox, shard);
    }
  }
  std::stable_sort(arrived.begin(), arrived.end(),
                   [](const PushArrival& a, const PushArrival& b) { return a.worker < b.worker; });
  return arrived;
}

sg4::CommPtr ShardedServerChannel::send_pull(int shard, int worker, ShardPayload payload) {
  return pull_mailbox(shard, worker)->put_async(new_envelope(worker, shard, payload), payload.bytes);
}

void ShardedServerChannel::stop_serving(int shard) {
  Inbox& inbox = inboxes_.at(shard);
  for (const sg4::CommPtr& c : inbox.pending) c->cancel();
  inbox.pending.clear();
  inbox.slot_of_pending.clear();
  inbox.started = false;
}

}  // namespace dtsim::sim
