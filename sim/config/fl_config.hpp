// Federated learning: rounds, client sampling, local work, stragglers, deadlines, availability, aggregation
// and secure aggregation. Plain data resolved from the [fl] keys, so that tests can build it directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/federated.hpp"
#include "models/name_table.hpp"

namespace dtsim::sim {

class Scenario;

// When a client is online: [from, to) intervals of simulated time (to may be infinite).
struct AvailabilityWindow {
  double from = 0.0;
  double to = 0.0;
};

struct ClientAvailability {
  int client = 0;
  std::vector<AvailabilityWindow> windows;  // sorted, disjoint
};

// What a straggler's work becomes: dropped from the round, or its finished local steps are aggregated.
enum class StragglerPolicy { Drop, Partial };
const models::NameTable<StragglerPolicy>& straggler_policy_table();
inline const char* to_string(StragglerPolicy policy) { return straggler_policy_table().name(policy); }

// How clients are drawn each round (fl.sampling) and how their updates are weighed (fl.weighting).
enum class ClientSampling { Uniform, Weighted };
const models::NameTable<ClientSampling>& client_sampling_table();
enum class ClientWeighting { Samples, Uniform };
const models::NameTable<ClientWeighting>& client_weighting_table();

// Secure aggregation (Bonawitz et al., CCS 2017) cost constants; see sim/strategies/federated_secagg.hpp.
struct SecureAggregationConfig {
  bool enabled = false;
  uint64_t key_bytes = 32;           // one public key, secret share or seed: a 256-bit element
  uint64_t id_bytes = 4;             // a client's index on the wire
  uint64_t aead_overhead_bytes = 28;  // AES-GCM nonce (12) + tag (16) on each encrypted share pair
  double mask_rate = 2.5e8;          // mask elements expanded per second (AES-CTR at ~1 GB/s, 4-byte elements)
  double key_agreement_time = 5e-5;  // one Diffie-Hellman agreement (X25519 in software: ~50 µs)
  double field_op_time = 1e-7;       // one multiplication in the 256-bit Shamir field
};

struct FlConfig {
  models::FlAlgorithm algorithm = models::FlAlgorithm::FedAvg;
  double prox_mu = 0.0;
  int64_t rounds = 50;
  int clients_per_round = 1;           // K, resolved (0 in the file = every client: cluster.workers)
  int64_t requested_clients_per_round = 0;  // K as fl.clients_per_round gives it
  bool weighted_sampling = false;      // sample clients with probability ∝ sample count (without replacement)
  bool weight_by_samples = true;       // aggregation weight w_i = sample count, else 1
  int local_epochs = 1;
  int64_t local_steps = 0;             // > 0: a fixed number of local steps instead of epochs
  std::vector<int64_t> local_steps_by_client;  // one per client; overrides both
  double lr_decay = 1.0;  // clients' local rate × lr_decay^round
  double server_lr = 1.0;
  double server_momentum = 0.0;
  bool server_compensation = true;     // Kahan-compensated server updates (models::ServerSettings::compensated)
  double overcommit = 0.0;             // sample ⌈K(1+f)⌉, keep the first K to report
  double deadline = 0.0;               // seconds from the round's start; 0 = none
  double straggler_fraction = 0.0;     // FedProx protocol: this fraction of the selected clients straggles
  StragglerPolicy straggler_policy = StragglerPolicy::Drop;
  double availability = 1.0;           // chance a client is online in a round
  std::vector<ClientAvailability> availability_trace;  // clients listed are online only in their windows
  int64_t eval_every = 1;              // rounds between test-set evaluations
  SecureAggregationConfig secure_aggregation;
};

// Reads the [fl] keys for `workers` clients (cluster.workers). The checks that hold only when the strategy is
// federated (a client count above the workers, the numerics the clients do not model) are cross-section rules
// (run_checks.hpp).
FlConfig make_fl_config(const Scenario& scenario, int workers);

// fl.availability_trace: "3: 0s to 100s, 200s to 300s; 5-7: from 50s" — items separated by ';', each
// "<clients>: <window>, …" with clients as ranks and ranges and each window "<start> to <end>" or
// "from <start>" (online until the end). A client may appear in one item only; its windows must not overlap.
// Throws ValueError (reason, hint).
std::vector<ClientAvailability> parse_availability_trace(const std::string& text, int clients);

}  // namespace dtsim::sim
