#include "sim/config/fl_config.hpp"

#include <algorithm>
#include <limits>

#include "sim/scenario/keys.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/text.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t at = text.find(separator, start);
    out.push_back(trim(text.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

int parse_client(const std::string& text, int clients, const std::string& item) {
  int64_t v = -1;
  try {
    v = parse_int(trim(text));
  } catch (const ValueError&) {
    throw ValueError("in " + quoted(item) + ": '" + trim(text) + "' is not a client index", "write e.g. 3 or 5-7");
  }
  if (v < 0 || v >= clients)
    throw ValueError("in " + quoted(item) + ": client " + trim(text) + " does not exist",
                     "clients are the workers, 0 to " + std::to_string(clients - 1));
  return static_cast<int>(v);
}

std::vector<int> parse_clients(const std::string& text, int clients, const std::string& item) {
  std::vector<int> out;
  for (const std::string& piece : split(text, ',')) {
    const size_t dash = piece.find('-', 1);
    const int lo = parse_client(piece.substr(0, dash), clients, item);
    const int hi = dash == std::string::npos ? lo : parse_client(piece.substr(dash + 1), clients, item);
    if (hi < lo) throw ValueError("in " + quoted(item) + ": range " + piece + " runs backwards", "write low-high");
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  return out;
}

double parse_time(const std::string& text, const std::string& item) {
  try {
    const double t = parse_quantity(trim(text), Dimension::Time);
    if (t < 0) throw ValueError("time " + trim(text) + " is negative", "");
    return t;
  } catch (const ValueError& e) {
    throw ValueError("in " + quoted(item) + ": " + e.what(), e.hint());
  }
}

AvailabilityWindow parse_window(const std::string& text, const std::string& item) {
  const std::string s = trim(text);
  if (lower(s).rfind("from ", 0) == 0) return {parse_time(s.substr(5), item), std::numeric_limits<double>::infinity()};
  const size_t to = lower(s).find(" to ");
  if (to == std::string::npos)
    throw ValueError("in " + quoted(item) + ": window " + quoted(s) + " is not '<start> to <end>' or 'from <start>'",
                     "write e.g. 0s to 100s");
  AvailabilityWindow w{parse_time(s.substr(0, to), item), parse_time(s.substr(to + 4), item)};
  if (!(w.to > w.from)) throw ValueError("in " + quoted(item) + ": window " + quoted(s) + " is empty", "");
  return w;
}

// Refuses, at the key a user would change, what the federated clients do not model.
void check_numerics_for_federated(const Scenario& s) {
  if (s.text("training.optimizer") != "sgd")
    s.fail("training.optimizer", "federated clients train with local SGD (training.lr, momentum, weight_decay)",
           "use sgd; the server's optimizer is fl.server_lr and fl.server_momentum");
  if (s.boolean("training.nesterov")) s.fail("training.nesterov", "federated clients use heavy-ball momentum only");
  if (s.text("precision.loss_scaling") != "none")
    s.fail("precision.loss_scaling", "federated clients do not model loss scaling", "use none");
  if (s.text("training.decay") != "constant" || s.real("training.warmup_epochs") > 0 ||
      s.integer("training.warmup_steps") > 0 || s.text("training.lr_scaling") != "none")
    s.fail("training.decay", "federated clients use the constant rate training.lr (no schedule, warmup or scaling)",
           "leave training.decay, warmup_* and lr_scaling at their defaults");
}

}  // namespace

const char* to_string(StragglerPolicy policy) { return policy == StragglerPolicy::Drop ? "drop" : "partial"; }

std::vector<ClientAvailability> parse_availability_trace(const std::string& text, int clients) {
  std::vector<ClientAvailability> out;
  std::vector<bool> listed(static_cast<size_t>(clients), false);
  for (const std::string& item : split(text, ';')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw ValueError("in " + quoted(item) + ": no ':' between the clients and their windows",
                       "write e.g. 3: 0s to 100s");
    std::vector<AvailabilityWindow> windows;
    for (const std::string& w : split(item.substr(colon + 1), ',')) windows.push_back(parse_window(w, item));
    std::sort(windows.begin(), windows.end(),
              [](const AvailabilityWindow& a, const AvailabilityWindow& b) { return a.from < b.from; });
    for (size_t i = 1; i < windows.size(); ++i)
      if (windows[i].from < windows[i - 1].to) throw ValueError("in " + quoted(item) + ": windows overlap", "");
    for (const int c : parse_clients(item.substr(0, colon), clients, item)) {
      if (listed[c]) throw ValueError("client " + std::to_string(c) + " appears in two items", "");
      listed[c] = true;
      out.push_back({c, windows});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ClientAvailability& a, const ClientAvailability& b) { return a.client < b.client; });
  return out;
}

FlConfig make_fl_config(const Scenario& s) {
  FlConfig c;
  const bool federated = reads_section(parse_strategy(s.text("training.strategy")), "fl");
  const int workers = static_cast<int>(s.integer("cluster.workers"));
  c.algorithm = models::parse_fl_algorithm(s.text("fl.algorithm"));
  c.prox_mu = s.real("fl.prox_mu");
  c.rounds = s.integer("fl.rounds");
  const int64_t k = s.integer("fl.clients_per_round");
  c.weighted_sampling = s.text("fl.sampling") == "weighted";
  c.weight_by_samples = s.text("fl.weighting") == "samples";
  c.local_epochs = static_cast<int>(s.integer("fl.local_epochs"));
  c.local_steps = s.integer("fl.local_steps");
  c.local_steps_by_client = s.int_list("fl.local_steps_by_client");
  c.server_lr = s.real("fl.server_lr");
  c.server_momentum = s.real("fl.server_momentum");
  c.server_compensation = s.boolean("fl.server_compensation");
  c.overcommit = s.real("fl.overcommit");
  c.deadline = s.quantity("fl.deadline");
  c.straggler_fraction = s.real("fl.straggler_fraction");
  c.straggler_policy = s.text("fl.straggler_policy") == "partial" ? StragglerPolicy::Partial : StragglerPolicy::Drop;
  c.availability = s.real("fl.availability");
  c.eval_every = s.integer("fl.eval_every");
  SecureAggregationConfig& sa = c.secure_aggregation;
  sa.enabled = s.boolean("fl.secure_aggregation");
  sa.key_bytes = static_cast<uint64_t>(s.integer("fl.secagg_key_bytes"));
  sa.mask_rate = s.real("fl.secagg_mask_rate");
  sa.key_agreement_time = s.quantity("fl.secagg_key_agreement_time");
  sa.field_op_time = s.quantity("fl.secagg_field_op_time");
  try {
    c.availability_trace = parse_availability_trace(s.text("fl.availability_trace"), workers);
  } catch (const ValueError& e) {
    s.fail("fl.availability_trace", e.what(), e.hint());
  }
  c.clients_per_round = k == 0 ? workers : static_cast<int>(std::min<int64_t>(k, workers));
  if (!federated) return c;

  if (k > workers)
    s.fail("fl.clients_per_round", std::to_string(k) + " clients per round but only " + std::to_string(workers) +
                                       " clients (cluster.workers)",
           "lower it, or 0 for every client");
  if (c.prox_mu > 0 && c.algorithm != models::FlAlgorithm::FedProx)
    s.fail("fl.prox_mu", "only FedProx has a proximal term", "set fl.algorithm = fedprox, or prox_mu = 0");
  if (!c.local_steps_by_client.empty()) {
    if (static_cast<int>(c.local_steps_by_client.size()) != workers)
      s.fail("fl.local_steps_by_client",
             std::to_string(c.local_steps_by_client.size()) + " values for " + std::to_string(workers) + " clients",
             "give one local step count per client (cluster.workers)");
    if (std::any_of(c.local_steps_by_client.begin(), c.local_steps_by_client.end(), [](int64_t v) { return v < 1; }))
      s.fail("fl.local_steps_by_client", "every client needs at least one local step");
  } else if (c.local_steps == 0 && c.local_epochs == 0) {
    s.fail("fl.local_epochs", "no local work: local_epochs and local_steps are both 0", "set one of them");
  }
  if (c.straggler_fraction > 0 && c.straggler_policy == StragglerPolicy::Partial && c.local_steps == 0 &&
      c.local_steps_by_client.empty() && c.local_epochs < 2)
    s.fail("fl.local_epochs", "partial stragglers run 1 to E-1 local epochs, so E must be at least 2");
  check_numerics_for_federated(s);
  return c;
}

}  // namespace dtsim::sim
