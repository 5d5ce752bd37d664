// The asynchronous parameter server: shards, staleness control and staleness-aware learning rates.
#pragma once

namespace dtsim::sim {

class Scenario;

struct PsConfig {};

PsConfig make_ps_config(const Scenario& scenario);

}  // namespace dtsim::sim
