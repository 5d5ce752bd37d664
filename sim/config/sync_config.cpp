#include "sim/config/sync_config.hpp"

#include <cmath>

#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {

SyncConfig make_sync_config(const Scenario& s) {
  SyncConfig c;
  c.bucket_bytes = s.quantity("sync.bucket_size");
  c.overlap = s.boolean("sync.overlap");
  c.accumulation_steps = static_cast<int>(s.integer("sync.accumulation_steps"));
  c.local_steps = static_cast<int>(s.integer("local.local_steps"));
  c.sync_until_step = s.integer("local.sync_until_step");
  c.fault_reaction = s.text("sync.fault_reaction");
  c.fault_timeout_s = s.quantity("sync.fault_timeout");
  c.checkpoint_every = s.integer("sync.checkpoint_every");
  c.checkpoint_bandwidth = s.quantity("sync.checkpoint_bandwidth");
  c.restart_s = s.quantity("sync.restart_time");
  return c;
}

}  // namespace dtsim::sim
