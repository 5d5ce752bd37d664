// What makes workers unequal over time: slow nodes, random per-step slowdowns, background traffic and
// failures.
#pragma once

namespace dtsim::sim {

class Scenario;

struct HeterogeneityConfig {};

HeterogeneityConfig make_heterogeneity_config(const Scenario& scenario);

}  // namespace dtsim::sim
