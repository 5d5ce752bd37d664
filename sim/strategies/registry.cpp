// How each training strategy is created and described. The configuration's half of the registry (names,
// sections, traits) is sim/config/strategy.cpp; adding a strategy adds one line to each.
#include <stdexcept>
#include <string>

#include "sim/strategies/federated/federated.hpp"
#include "sim/strategies/ps/async_ps.hpp"
#include "sim/strategies/sync/sync_dp.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {
namespace {

struct StrategyImplementation {
  Strategy strategy;
  std::unique_ptr<TrainingStrategy> (*make)(const TrainingContext&);
  std::string (*describe)(const RunConfig&);
};

template <class T>
std::unique_ptr<TrainingStrategy> make(const TrainingContext& ctx) {
  return std::make_unique<T>(ctx);
}

const StrategyImplementation kImplementations[] = {
    {Strategy::Sync, make<SyncDataParallel>, describe_sync_data_parallel},
    {Strategy::Local, make<SyncDataParallel>, describe_sync_data_parallel},
    {Strategy::AsyncPs, make<AsyncParameterServer>, describe_async_parameter_server},
    {Strategy::Federated, make<FederatedLearning>, describe_federated_learning},
};

const StrategyImplementation& implementation(Strategy strategy) {
  for (const StrategyImplementation& i : kImplementations)
    if (i.strategy == strategy) return i;
  throw std::logic_error(std::string("no implementation of training strategy '") + to_string(strategy) + "'");
}

}  // namespace

std::unique_ptr<TrainingStrategy> make_strategy(const TrainingContext& ctx) {
  return implementation(ctx.config().strategy).make(ctx);
}

std::string describe_strategy(const RunConfig& config) { return implementation(config.strategy).describe(config); }

}  // namespace dtsim::sim
