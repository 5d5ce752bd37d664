#include "sim/app/cost.hpp"

#include <algorithm>

#include "models/name_table.hpp"

namespace dtsim::sim {

std::vector<GpuSpec> gpu_of_each_worker(const RunConfig& c) {
  if (c.layout.groups.empty()) return std::vector<GpuSpec>(c.workers, c.gpu);
  std::vector<GpuSpec> gpus;
  for (const NodeGroup& g : c.layout.groups) {
    const int per_node = c.layout.gpus_per_node_of(g);
    gpus.insert(gpus.end(), static_cast<size_t>(g.nodes) * per_node, g.gpu);
  }
  gpus.resize(c.workers, c.gpu);  // the groups describe every worker; this only guards the length
  return gpus;
}

CostReport price_run(const RunConfig& config, const std::vector<WorkerTime>& time, double seconds) {
  CostReport r;
  const std::vector<GpuSpec> gpus = gpu_of_each_worker(config);
  const double hours = seconds / 3600.0;
  r.gpu_hours = hours * static_cast<double>(gpus.size());
  r.priced = !gpus.empty();
  r.energy_known = !gpus.empty();
  std::vector<std::string> currencies, unpriced;  // the GPUs' currencies, and the GPUs without a price
  for (size_t w = 0; w < gpus.size(); ++w) {
    const GpuSpec& g = gpus[w];
    if (!g.has_price() || (!r.currency.empty() && g.price_currency != r.currency)) r.priced = false;
    if (r.currency.empty()) r.currency = g.price_currency;
    std::vector<std::string>& list = g.has_price() ? currencies : unpriced;
    const std::string& item = g.has_price() ? g.price_currency : g.name;
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
    if (std::find(r.regions.begin(), r.regions.end(), g.price_region) == r.regions.end() && !g.price_region.empty())
      r.regions.push_back(g.price_region);
    r.low += hours * g.price_low;
    r.mid += hours * g.price_mid();
    r.high += hours * g.price_high;
    if (!g.has_power()) r.energy_known = false;
    const double busy = w < time.size() ? std::min(time[w].compute, seconds) : 0.0;
    r.energy_joules += busy * g.power_busy + (seconds - busy) * g.power_idle;
  }
  // A bill that cannot be added up says why, where some GPU has a price at all.
  if (!r.priced && !currencies.empty())
    r.unpriced_reason = !unpriced.empty()
                            ? "no price for the " + models::join_names(unpriced, ", ", " and ")
                            : "the GPUs are priced in " + models::join_names(currencies, ", ", " and ") +
                                  ", which are not added up";
  const FabricSpec& f = config.fabric;
  if (r.priced && f.has_price() && f.price_currency == r.currency) {
    r.network_priced = true;
    r.network_low = r.gpu_hours * f.price_low;
    r.network_mid = r.gpu_hours * f.price_mid();
    r.network_high = r.gpu_hours * f.price_high;
    r.low += r.network_low;
    r.mid += r.network_mid;
    r.high += r.network_high;
  }
  return r;
}

nlohmann::json CostReport::to_json() const {
  nlohmann::json j;
  j["gpu_hours"] = gpu_hours;
  if (priced) {
    j["currency"] = currency;
    j["regions"] = regions;
    j["low"] = low;
    j["mid"] = mid;
    j["high"] = high;
    if (network_priced) j["network"] = {{"low", network_low}, {"mid", network_mid}, {"high", network_high}};
  } else {
    j["currency"] = nullptr;  // some GPU has no price (or prices in different currencies)
    if (!unpriced_reason.empty()) j["note"] = unpriced_reason;
  }
  j["energy_kwh"] = energy_known ? nlohmann::json(energy_joules / 3.6e6) : nlohmann::json(nullptr);
  return j;
}

const EvalPoint* first_reaching(const std::vector<EvalPoint>& points, double target) {
  if (target <= 0) return nullptr;
  for (const EvalPoint& p : points)
    if (p.test_accuracy >= target) return &p;
  return nullptr;
}

}  // namespace dtsim::sim
