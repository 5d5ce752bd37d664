#include "collectives.hpp"

namespace dtsim::sim {
namespace sg4 = simgrid::s4u;

namespace {
// SimGrid refuses null payloads; chunks carry no data, so they all point at this token.
int chunk_token = 0;
}  // namespace

RingAllreduce::RingAllreduce(int ranks, const std::string& name) {
  for (int r = 0; r < ranks; ++r) inbox_.push_back(sg4::Mailbox::by_name(name + "/ring/" + std::to_string(r)));
}

uint64_t RingAllreduce::chunk_bytes(uint64_t bytes, int ranks, int c) {
  const uint64_t n = static_cast<uint64_t>(ranks);
  return bytes / n + (static_cast<uint64_t>(c) < bytes % n ? 1 : 0);
}

void RingAllreduce::run(int rank, uint64_t bytes) {
  const int n = ranks();
  if (n == 1) return;
  sg4::Mailbox* next = inbox_[(rank + 1) % n];
  sg4::Mailbox* mine = inbox_[rank];
  const auto mod = [n](int x) { return ((x % n) + n) % n; };
  // Reduce-scatter: at step i rank r passes on chunk r−i; after N−1 steps it owns the sum of chunk r+1.
  // All-gather: at step i it passes on the completed chunk r+1−i.
  for (int phase = 0; phase < 2; ++phase) {
    for (int step = 0; step < n - 1; ++step) {
      const int chunk = phase == 0 ? mod(rank - step) : mod(rank + 1 - step);
      const uint64_t size = chunk_bytes(bytes, n, chunk);
      sg4::CommPtr send = next->put_async(&chunk_token, size);
      mine->get<int>();
      send->wait();
      bytes_sent_ += size;
    }
  }
}

}  // namespace dtsim::sim
