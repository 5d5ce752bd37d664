// How collectives run: algorithm and fidelity.
#pragma once

namespace dtsim::sim {

class Scenario;

struct CollectiveConfig {};

CollectiveConfig make_collective_config(const Scenario& scenario);

}  // namespace dtsim::sim
