// Synchronous data parallel and local SGD: gradient buckets and their overlap with backward, gradient
// accumulation, local steps, and how a failed worker is handled.
#pragma once

#include "models/name_table.hpp"

#include <cstdint>
#include <string>

namespace dtsim::sim {

class Scenario;

// What synchronous training does after a worker fails (sync.fault_reaction): the survivors continue without
// it, or the job waits for the node to come back and restarts from its last finished checkpoint.
enum class FaultReaction { Elastic, Restart };
const models::NameTable<FaultReaction>& fault_reaction_table();
inline const char* to_string(FaultReaction r) { return fault_reaction_table().name(r); }

struct SyncConfig {
  double bucket_bytes = 25e6;       // gradient bucket size (PyTorch DDP's default 25 MB)
  bool overlap = true;              // a bucket's allreduce starts as soon as backward has produced it
  int accumulation_steps = 1;       // micro-batches per optimizer step
  // ZeRO (Rajbhandari et al. 2020): 1 shards the optimizer state and fp32 master weights over the workers,
  // 2 the gradients too. Gradients are reduce-scattered bucket by bucket, each worker updates its shard, and
  // the updated weights are all-gathered. 0: plain data parallelism (allreduce).
  int zero_stage = 0;
  // ZeRO-3: units whose weight gathers are queued ahead of the unit being computed (1: the next one, as FSDP's
  // backward prefetch and its rate limiter of two gathers in flight allow).
  int prefetch_units = 1;
  // local SGD
  int local_steps = 4;              // H: local steps between model averagings
  int64_t sync_until_step = 0;      // post-local SGD: synchronous before this step (0 = local from the start)
  // failures
  FaultReaction fault_reaction = FaultReaction::Elastic;
  double fault_timeout_s = 60.0;    // how long the survivors wait before declaring a peer lost
  int64_t checkpoint_every = 0;     // restart: steps between checkpoints (0 = each epoch)
  double checkpoint_bandwidth = 2e9;  // bytes/s to write or read a checkpoint
  double restart_s = 60.0;          // restart: time to bring the job back up (scheduler, process start)
};

SyncConfig make_sync_config(const Scenario& scenario);

}  // namespace dtsim::sim
