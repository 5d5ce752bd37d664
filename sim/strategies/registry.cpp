#include <stdexcept>

#include "sim/strategies/ps/async_ps.hpp"
#include "sim/strategies/federated/federated.hpp"
#include "sim/strategies/sync/sync_dp.hpp"
#include "sim/strategies/training.hpp"

namespace dtsim::sim {

std::unique_ptr<Strategy> make_strategy(const TrainingContext& ctx) {
  const std::string& name = ctx.config().strategy;
  if (name == "sync" || name == "local") return std::make_unique<SyncDataParallel>(ctx);
  if (name == "async-ps") return std::make_unique<AsyncParameterServer>(ctx);
  if (name == "federated") return std::make_unique<FederatedLearning>(ctx);
  throw std::logic_error("unknown training strategy '" + name + "'");
}

}  // namespace dtsim::sim
