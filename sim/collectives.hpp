// Collectives as simulated transfers between rank actors. They move bytes, not values: the strategy that
// calls them sums the real data itself, in rank order, once the collective is complete (so floating-point
// results do not depend on the simulated schedule).
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::sim {

// Ring allreduce: a reduce-scatter then an all-gather, each N−1 steps in which every rank sends one chunk
// (S/N bytes) to its successor and receives one from its predecessor. Time on a contention-free fabric:
// 2(N−1)(α + S/(N·B)).
class RingAllreduce {
 public:
  RingAllreduce(int ranks, const std::string& name);

  // Runs rank `rank`'s side of an allreduce of `bytes` bytes; returns when this rank holds the result.
  // Every rank must call it, each from its own actor, with the same `bytes`.
  void run(int rank, uint64_t bytes);

  int ranks() const { return static_cast<int>(inbox_.size()); }
  uint64_t bytes_sent() const { return bytes_sent_; }  // by all ranks, all calls so far

  // Bytes all ranks together send in one allreduce of `bytes`: 2(N−1) steps, each moving every chunk once.
  static uint64_t total_bytes(uint64_t bytes, int ranks) { return 2 * static_cast<uint64_t>(ranks - 1) * bytes; }

  // Size of chunk c when `bytes` are split into `ranks` chunks (sizes differ by at most one byte).
  static uint64_t chunk_bytes(uint64_t bytes, int ranks, int c);

 private:
  std::vector<simgrid::s4u::Mailbox*> inbox_;
  uint64_t bytes_sent_ = 0;
};

}  // namespace dtsim::sim
