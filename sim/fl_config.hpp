// Federated learning: rounds, client sampling, stragglers, aggregation and secure aggregation.
#pragma once

namespace dtsim::sim {

class Scenario;

struct FlConfig {};

FlConfig make_fl_config(const Scenario& scenario);

}  // namespace dtsim::sim
