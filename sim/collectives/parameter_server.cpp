#include "sim/collectives/parameter_server.hpp"

#include <stdexcept>

#include "sim/collectives/closed_form.hpp"
#include "sim/platform.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

ShardedServerChannel::ShardedServerChannel(const Platform& platform, int shards, std::string name)
    : shards_(shards), workers_(platform.num_workers()), name_(std::move(name)), inboxes_(shards) {
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

void ShardedServerChannel::push(int worker, const std::vector<ShardPayload>& payloads) {
  if (static_cast<int>(payloads.size()) != shards_)
    throw std::invalid_argument("push: " + std::to_string(payloads.size()) + " payloads for " +
                                std::to_string(shards_) + " shards");
  std::vector<sg4::CommPtr> sends;
  for (int s = 0; s < shards_; ++s)
    sends.push_back(push_mailbox(s)->put_async(new Envelope{worker, s, payloads[s]}, payloads[s].bytes));
  sg4::Comm::wait_all(sends);
  for (const ShardPayload& p : payloads) bytes_sent_ += p.bytes;
}

std::vector<ShardPayload> ShardedServerChannel::pull(int worker) {
  std::vector<Envelope*> received(shards_, nullptr);
  std::vector<sg4::CommPtr> gets;
  for (int s = 0; s < shards_; ++s) gets.push_back(pull_mailbox(s, worker)->get_async<Envelope>(&received[s]));
  sg4::Comm::wait_all(gets);
  std::vector<ShardPayload> parts(shards_);
  for (int s = 0; s < shards_; ++s) {
    parts[s] = received[s]->payload;
    bytes_sent_ += parts[s].bytes;
    delete received[s];
  }
  return parts;
}

void ShardedServerChannel::post_receive(Inbox& inbox, int shard, int slot) {
  inbox.pending.push_back(push_mailbox(shard)->get_async<Envelope>(&inbox.slots[slot]));
  inbox.slot_of_pending.push_back(slot);
}

PushArrival ShardedServerChannel::receive_push(int shard) {
  Inbox& inbox = inboxes_.at(shard);
  if (!inbox.started) {
    inbox.slots.assign(workers_, nullptr);
    for (int slot = 0; slot < workers_; ++slot) post_receive(inbox, shard, slot);
    inbox.started = true;
  }
  const ssize_t done = sg4::Comm::wait_any(inbox.pending);
  const int slot = inbox.slot_of_pending[done];
  inbox.pending.erase(inbox.pending.begin() + done);
  inbox.slot_of_pending.erase(inbox.slot_of_pending.begin() + done);
  Envelope* e = inbox.slots[slot];
  const PushArrival arrival{e->worker, e->shard, e->payload};
  delete e;
  post_receive(inbox, shard, slot);
  return arrival;
}

sg4::CommPtr ShardedServerChannel::send_pull(int shard, int worker, ShardPayload payload) {
  return pull_mailbox(shard, worker)->put_async(new Envelope{worker, shard, payload}, payload.bytes);
}

void ShardedServerChannel::stop_serving(int shard) {
  Inbox& inbox = inboxes_.at(shard);
  for (const sg4::CommPtr& c : inbox.pending) c->cancel();
  inbox.pending.clear();
  inbox.slot_of_pending.clear();
  inbox.started = false;
}

}  // namespace dtsim::sim
