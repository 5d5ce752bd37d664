// Scenario keys: federated learning.
#include "models/federated.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_builders.hpp"

namespace dtsim::sim {

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
      choice("fl.sampling", "uniform", {"uniform", "weighted"},
             "Client selection, without replacement, seeded per round: uniform, or with probability "
             "proportional to the client's sample count"),
      choice("fl.weighting", "samples", {"samples", "uniform"},
             "Aggregation weight of a client's update: its training sample count, or 1"),
      integer("fl.local_epochs", "1", at_least(0),
              "E local epochs per round; one epoch is ceil(samples / batch_per_worker) mini-batches"),
      integer("fl.local_steps", "0", at_least(0), "tau local steps per round instead of epochs (wins when > 0)"),
      int_list("fl.local_steps_by_client", "", between(1, 1e12),
               "One local step count per client (overrides local_epochs and local_steps)"),
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
      choice("fl.straggler_policy", "drop", {"drop", "partial"},
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
