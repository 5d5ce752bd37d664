#include "sim/config/key_warnings.hpp"

#include <string>

namespace dtsim::sim {

std::vector<IgnoredKey> find_key_warnings(const RunConfig& c, const KeyOrigins& at) {
  std::vector<IgnoredKey> out;
  // Secure aggregation hides each client's update in the sum of a round's updates; the sum of one update is that
  // update. Its costs are still charged (the self masks and their unmasking), so the key is not without effect.
  if (c.strategy == Strategy::Federated && c.fl.secure_aggregation.enabled && c.fl.clients_per_round == 1)
    out.push_back({"fl.secure_aggregation",
                   "protects nothing with one client per round (fl.clients_per_round = " +
                       std::to_string(c.fl.requested_clients_per_round) + ", cluster.workers = " +
                       std::to_string(c.workers) + "): the server unmasks the sum of one update, which is that "
                       "client's update; its costs are still charged",
                   at.of("fl.secure_aggregation")});
  return out;
}

}  // namespace dtsim::sim
