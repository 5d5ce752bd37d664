// Synchronous data parallel and local SGD: buckets, accumulation, local steps, fault reactions.
#pragma once

namespace dtsim::sim {

class Scenario;

struct SyncConfig {};

SyncConfig make_sync_config(const Scenario& scenario);

}  // namespace dtsim::sim
