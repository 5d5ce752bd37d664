#include "sim/config/fl_config.hpp"

#include <algorithm>
#include <limits>

#include "models/federated.hpp"
#include "sim/config/choice.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/key_builders.hpp"
#include "sim/scenario/keys.hpp"
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
  const auto not_a_window = [&] {
    return ValueError("in " + quoted(item) + ": window " + quoted(s) + " is not '<start> to <end>' or 'from <start>'",
                      "write e.g. 0s to 100s, or from 50s");
  };
  if (lower(s).rfind("from ", 0) == 0) {
    // "from 1s until 5s": words after a whole time are not a unit.
    const std::string rest = trim(s.substr(5));
    if (lower(rest).find(" to ") != std::string::npos) return parse_window(rest, item);  // "from 1s to 5s"
    if (const size_t space = rest.find(' '); space != std::string::npos && is_quantity(rest.substr(0, space), Dimension::Time))
      throw not_a_window();
    return {parse_time(rest, item), std::numeric_limits<double>::infinity()};
  }
  const size_t to = lower(s).find(" to ");
  if (to == std::string::npos) throw not_a_window();
  AvailabilityWindow w{parse_time(s.substr(0, to), item), parse_time(s.substr(to + 4), item)};
  if (!(w.to > w.from)) throw ValueError("in " + quoted(item) + ": window " + quoted(s) + " is empty", "");
  return w;
}

}  // namespace

const models::NameTable<StragglerPolicy>& straggler_policy_table() {
  static const models::NameTable<StragglerPolicy> table{{StragglerPolicy::Drop, "drop"},
                                                        {StragglerPolicy::Partial, "partial"}};
  return table;
}

const models::NameTable<ClientSampling>& client_sampling_table() {
  static const models::NameTable<ClientSampling> table{{ClientSampling::Uniform, "uniform"},
                                                       {ClientSampling::Weighted, "weighted"}};
  return table;
}

const models::NameTable<ClientWeighting>& client_weighting_table() {
  static const models::NameTable<ClientWeighting> table{{ClientWeighting::Samples, "samples"},
                                                        {ClientWeighting::Uniform, "uniform"}};
  return table;
}

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

FlConfig make_fl_config(const Scenario& s, int workers) {
  FlConfig c;
  c.algorithm = models::parse_fl_algorithm(s.text("fl.algorithm"));
  c.prox_mu = s.real("fl.prox_mu");
  c.rounds = s.integer("fl.rounds");
  const int64_t k = s.integer("fl.clients_per_round");
  c.weighted_sampling = choice_value(client_sampling_table(), s, "fl.sampling") == ClientSampling::Weighted;
  c.weight_by_samples = choice_value(client_weighting_table(), s, "fl.weighting") == ClientWeighting::Samples;
  c.local_epochs = static_cast<int>(s.integer("fl.local_epochs"));
  c.local_steps = s.integer("fl.local_steps");
  c.local_steps_by_client = s.int_list("fl.local_steps_by_client");
  c.lr_decay = s.real("fl.lr_decay");
  c.server_lr = s.real("fl.server_lr");
  c.server_momentum = s.real("fl.server_momentum");
  c.server_compensation = s.boolean("fl.server_compensation");
  c.overcommit = s.real("fl.overcommit");
  c.deadline = s.quantity("fl.deadline");
  c.straggler_fraction = s.real("fl.straggler_fraction");
  c.straggler_policy = choice_value(straggler_policy_table(), s, "fl.straggler_policy");
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
  c.requested_clients_per_round = k;
  c.clients_per_round = k == 0 ? workers : static_cast<int>(std::min<int64_t>(k, workers));
  return c;
}

// ---- keys ------------------------------------------------------------------------------------------------
// Scenario keys: federated learning.
using namespace key_builders;

void add_fl_keys(std::vector<KeySpec>& keys) {
  const std::vector<KeySpec> mine = {
      // ---- federated learning (training.strategy = federated) ----------------------------------------------
      choice("fl.algorithm", "fedavg", models::fl_algorithm_names(),
             "Aggregator: fedavg (weighted average of client updates), fedprox (local proximal term prox_mu), "
             "scaffold (control variates; uploads and downloads twice the bytes), fednova (updates normalised by "
             "each client's local steps)"),
      real("fl.prox_mu", "0", at_least(0), "FedProx: mu of the local term mu/2 |y - x_global|^2"),
      integer("fl.rounds", "50", between(1, 1e9), "Communication rounds (metrics.csv step = rounds completed)"),
      integer("fl.clients_per_round", "0", at_least(0),
              "K clients selected per round (the clients are the cluster's workers); 0 = every client"),
      choice("fl.sampling", "uniform", client_sampling_table().names(),
             "Client selection, without replacement, seeded per round: uniform, or with probability "
             "proportional to the client's sample count"),
      choice("fl.weighting", "samples", client_weighting_table().names(),
             "Aggregation weight of a client's update: its training sample count, or 1"),
      integer("fl.local_epochs", "1", at_least(0),
              "E local epochs per round; one epoch is ceil(samples / batch_per_worker) mini-batches"),
      integer("fl.local_steps", "0", at_least(0), "tau local steps per round instead of epochs (wins when > 0)"),
      int_list("fl.local_steps_by_client", "", between(1, 1e12),
               "One local step count per client (overrides local_epochs and local_steps)"),
      real("fl.lr_decay", "1", fraction_open_closed(),
           "Clients' learning rate decay per round: round r (from 0) trains at training.lr * lr_decay^r, as "
           "federated protocols decay the local rate (e.g. 0.99 or 0.998 per round); 1 = constant"),
      real("fl.server_lr", "1", positive(1e6), "Server learning rate: x += server_lr * (aggregated update)"),
      real("fl.server_momentum", "0", fraction_closed_open(), "Server momentum (FedAvgM): v = m*v + update"),
      boolean("fl.server_compensation", "true",
              "Carry the part of each server step that rounding to float loses into the next round (Kahan), so "
              "that small updates still accumulate near convergence; false = plain fp32 server weights"),
      real("fl.overcommit", "0", between(0, 100),
           "Select ceil(K*(1+f)) clients and aggregate the first K to report (the rest are dropped)"),
      quantity("fl.deadline", Dimension::Time, "0s", at_least(0),
               "Round deadline from the round's start; 0 = none. drop: uploads not received by then are "
               "dropped; partial: local training stops at the deadline and the finished steps are uploaded"),
      real("fl.straggler_fraction", "0", between(0, 1),
           "FedProx protocol: this fraction of each round's selected clients (seeded) straggles, i.e. can do only "
           "a uniform 1..E-1 local epochs (1..tau-1 steps)"),
      choice("fl.straggler_policy", "drop", straggler_policy_table().names(),
             "What a straggler (protocol straggler, deadline miss, lost client) becomes: dropped, or its finished "
             "local steps are aggregated (a lost client's work cannot reach the server and is always dropped)"),
      real("fl.availability", "1", fraction_open_closed(),
           "Chance that a client is online for a round, drawn per client and round from run.seed"),
      text("fl.availability_trace", "",
           "Online windows of clients: '3: 0s to 100s, 200s to 300s; 5-7: from 50s'; clients not listed are "
           "always online; a client whose window ends mid-round is lost",
           true),
      integer("fl.eval_every", "1", between(1, 1e9), "Rounds between test-set evaluations (plus the last round)"),
      boolean("fl.secure_aggregation", "false",
              "Secure aggregation (Bonawitz et al. 2017): key exchange, secret shares and masked inputs add bytes "
              "that grow with the round's clients, and mask expansion and unmasking add client and server time"),
      integer("fl.secagg_key_bytes", "32", between(1, 1e6),
              "Secure aggregation: bytes of a public key, a Shamir share or a seed (256-bit elements)"),
      real("fl.secagg_mask_rate", "2.5e8", positive(),
           "Secure aggregation: mask elements a host expands per second (pseudo-random generator)"),
      quantity("fl.secagg_key_agreement_time", Dimension::Time, "50us", at_least(0),
               "Secure aggregation: one Diffie-Hellman key agreement"),
      quantity("fl.secagg_field_op_time", Dimension::Time, "100ns", at_least(0),
               "Secure aggregation: one multiplication in the Shamir secret-sharing field"),
  };
  keys.insert(keys.end(), mine.begin(), mine.end());
}

}  // namespace dtsim::sim
