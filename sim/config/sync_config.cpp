#include "sim/config/sync_config.hpp"

#include <cmath>

#include "sim/config/choice.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

const models::NameTable<FaultReaction>& fault_reaction_table() {
  static const models::NameTable<FaultReaction> table{{FaultReaction::Elastic, "elastic"},
                                                      {FaultReaction::Restart, "restart"}};
  return table;
}

SyncConfig make_sync_config(const Scenario& s) {
  SyncConfig c;
  c.bucket_bytes = s.quantity("sync.bucket_size");
  c.overlap = s.boolean("sync.overlap");
  c.accumulation_steps = static_cast<int>(s.integer("sync.accumulation_steps"));
  c.zero_stage = static_cast<int>(s.integer("sync.zero_stage"));
  c.prefetch_units = static_cast<int>(s.integer("sync.prefetch_units"));
  c.local_steps = static_cast<int>(s.integer("local.local_steps"));
  c.sync_until_step = s.integer("local.sync_until_step");
  c.fault_reaction = choice_value(fault_reaction_table(), s, "sync.fault_reaction");
  c.fault_timeout_s = s.quantity("sync.fault_timeout");
  c.checkpoint_every = s.integer("sync.checkpoint_every");
  c.checkpoint_bandwidth = s.quantity("sync.checkpoint_bandwidth");
  c.restart_s = s.quantity("sync.restart_time");
  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: synchronous data parallel and local SGD.
using namespace key_builders;

// [framework]: a profile of a training framework's documented defaults for [sync] and [compute] keys
// (network_profiles/framework/), applied between dtsim's defaults and the scenario's own values.
void add_framework_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      text("framework.profile", "",
           "Training framework whose documented defaults the run takes (gradient bucket size, overlap, ZeRO stage, "
           "optimizer kernels): a name in network_profiles/framework/ (pytorch-ddp, pytorch-fsdp, deepspeed-zero2, "
           "deepspeed-zero3, megatron-lm) or a path; keys the scenario sets override it; empty = dtsim's own defaults",
           true),
      text("framework.name", "", "Display name of the framework", true),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

void add_sync_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      quantity("sync.bucket_size", Dimension::Bytes, "25MB", positive(),
               "Gradient bucket size: consecutive layers' gradients (in backward order) are allreduced together"),
      boolean("sync.overlap", "true",
              "Start a bucket's allreduce as soon as backward has produced it (else after the whole backward)"),
      integer("sync.accumulation_steps", "1", between(1, 100000),
              "Micro-batches of batch_per_worker accumulated per optimizer step (the global batch grows with it)"),
      integer("sync.zero_stage", "0", between(0, 3),
              "ZeRO: 1 shards optimizer state and fp32 master weights over the workers, 2 also gradients "
              "(buckets reduce-scattered, updated weights all-gathered after the step), 3 also the weights "
              "(each bucket's weights all-gathered before its forward and its backward)"),
      integer("sync.prefetch_units", "1", between(1, 64),
              "ZeRO stage 3: units of weights whose all-gathers are queued ahead of the unit being computed, in "
              "the forward and the backward pass (1: the next unit, as PyTorch FSDP prefetches)"),
      choice("sync.fault_reaction", "elastic", fault_reaction_table().names(),
             "After a worker fails: elastic = the survivors continue without it; restart = the job waits for the "
             "failed node to come back up (faults.events' 'up at'), then restarts from its last finished checkpoint; "
             "a node that never comes back is left behind (elastic), as summary.json's faults say"),
      quantity("sync.fault_timeout", Dimension::Time, "60s", positive(),
               "How long the other workers wait on a lost peer before they give up on it"),
      integer("sync.checkpoint_every", "0", at_least(0), "restart: optimizer steps between checkpoints; 0 = once an epoch"),
      quantity("sync.checkpoint_bandwidth", Dimension::Bandwidth, "2GB/s", positive(),
               "restart: rate at which a checkpoint is written and read back (storage)"),
      quantity("sync.restart_time", Dimension::Time, "60s", at_least(0),
               "restart: the least time from the failure's detection to the job running again (the node's own "
               "return, if later, is waited for), before the checkpoint is read back"),
      integer("local.local_steps", "4", between(1, 1000000),
              "Local SGD: local optimizer steps between two model averagings (H)"),
      integer("local.sync_until_step", "0", at_least(0),
              "Post-local SGD: steps trained synchronously before local steps begin; 0 = local from the start"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
