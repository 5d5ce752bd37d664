// The vocabulary of collectives, free of SimGrid so that configuration code can use it: what is computed
// (kind), how (algorithm), how faithfully it is simulated (fidelity), and the α-β parameters of a fabric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/name_table.hpp"

namespace dtsim::sim {

enum class CollectiveKind { Allreduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll };
// Auto: NCCL's choice, made per call size among the algorithms NCCL would run (see AlgorithmImplementation's
// candidates, sim/collectives/registry.hpp).
enum class Algorithm { Ring, DoubleBinaryTree, HalvingDoubling, Hierarchical, Direct, Auto };

// Stepwise: every step of the algorithm is a simulated transfer (exact contention, ~3 µs of wall time each).
// Aggregated: per phase, one flow per (rank, peer) carrying the step-summed bytes; the remaining latency
// terms are charged with sleep_for. Analytic: the closed form, charged with sleep_for; no flows at all.
// Auto: chosen per collective from its flow count (see resolve_fidelity).
enum class Fidelity { Stepwise, Aggregated, Analytic, Auto };

// How NCCL moves the data of a collective (its "protocols"), which sets the latency of each call and each hop
// and the share of the link bandwidth the payload gets (sim/collectives/protocol.hpp has the numbers):
// LL = 8-byte stores of 4 bytes of data and a flag (lowest latency, half the bandwidth); LL128 = 128-byte
// lines of 120 bytes of data; Simple = bulk copies with synchronisation per chunk (highest latency, full
// bandwidth). None = no protocol model: transfers take the fabric's latency and bandwidth only. Auto =
// NCCL's choice: for each message size the protocol with the least predicted time.
enum class Protocol { None, LL, LL128, Simple, Auto };

// Who makes auto's choices (collective.algorithm = auto, collective.protocol = auto): NCCL's tuning model, as
// NCCL would choose on such a cluster (sim/collectives/nccl_tuning.hpp), or dtsim's own prediction on the
// simulated platform, the variant it expects to be fastest.
enum class CollectiveTuner { Nccl, Fastest };

// What a hop crosses, for the protocols' per-hop latencies: NVLink or PCIe inside a node, or the network.
enum class HopClass { NVLink, PCIe, Network };

// Which of make_collective's arguments it refused (sim/collectives/collective_error.hpp); the configuration
// says which scenario key sets that argument (collective_config.hpp: collective_key_of).
enum class CollectiveRefusal {
  Algorithm,       // the algorithm does not implement the kind, or cannot serve this group of ranks
  PipelineChunks,  // options.pipeline_chunk_bytes or options.max_pipeline_chunks below 1
  Root,            // options.root is not a rank
};

// The α-β model of one communication: a transfer of s bytes takes alpha + s / bandwidth.
struct AlphaBeta {
  double alpha = 0.0;      // seconds: route latency between the communicating ranks
  double bandwidth = 0.0;  // bytes/s: bottleneck link bandwidth (its share, if several flows cross it) × efficiency
};

struct CollectiveOptions {
  // Pipelining of the broadcast/reduce chain (the message) and of each tree of the double binary tree (its
  // half of the message): chunks of pipeline_chunk_bytes, at least one and at most max_pipeline_chunks, so
  // small messages pay few latencies and large ones lose little to filling the pipeline.
  uint64_t pipeline_chunk_bytes = 512 * 1024;
  int max_pipeline_chunks = 128;
  // The allreduce the hierarchical algorithm runs between nodes (Ring, DoubleBinaryTree or HalvingDoubling).
  Algorithm inter_node = Algorithm::Ring;
  int root = 0;  // broadcast and reduce
  // Achievable fraction of nominal link bandwidth (fabric.efficiency). Stepwise and aggregated flows get
  // it from the platform's calibration; analytic and aggregated's latency terms use it to compute B.
  double bandwidth_efficiency = 1.0;
  // The protocol model (collective.protocol) and what the hops cross: between two GPUs of one node (the
  // intra-node fabric) and between nodes (the fabric; an NVLink or PCIe fabric joining single-GPU nodes
  // counts as that).
  Protocol protocol = Protocol::None;
  // Rings across nodes run as NCCL's channels (collective.channels; 0 = one per port of a node, on several
  // nodes), each entering and leaving a node through its own port (cluster.nics_per_node NICs; a GPU that
  // owns several NICs has them bonded into one port: topology::nic_ports).
  int channels = 0;
  int nics_per_node = 1;
  HopClass intra_node_hops = HopClass::NVLink;
  HopClass inter_node_hops = HopClass::Network;
  // How many collectives like this one a step calls (a timing-only run's gradient buckets): fidelity auto
  // shares its flow budget among them, so that a step of many buckets stays as cheap to simulate as one call.
  uint64_t calls_per_step = 1;
  // A run with numerics caps what fidelity auto lets the stepwise fidelity simulate per call, so that the
  // transfers cost a small share of the numerics' own wall time (numerics_stepwise_cap, collective.hpp);
  // 0: no cap beyond auto's own budget.
  uint64_t auto_stepwise_cap = 0;
  // Auto's chooser (collective.tuner) and what NCCL's tuner reads of the hardware: the GPUs' compute capability
  // ×10 (the least of the cluster's, as NCCL takes it), the achievable bandwidth of a GPU's link inside a node
  // (0: no intra-node fabric) and of one NIC, in B/s.
  CollectiveTuner tuner = CollectiveTuner::Nccl;
  int compute_capability = 80;
  int max_compute_capability = 80;  // the greatest: NCCL runs LL128 across generations from Hopper on only
  double intra_node_bandwidth = 0.0;
  double nic_bandwidth = 0.0;
};

// Names as the scenario keys and the CLI spell them ("allreduce", "reduce_scatter", …; "stepwise", …;
// "ring", "tree", … come from the algorithm registry, collective_algorithms.hpp). The parsers return false for
// an unknown name.
const models::NameTable<CollectiveKind>& collective_kind_table();
const models::NameTable<Fidelity>& fidelity_table();
const models::NameTable<Protocol>& protocol_table();
const models::NameTable<CollectiveTuner>& collective_tuner_table();
const char* to_string(CollectiveKind kind);
const char* to_string(Algorithm algorithm);
const char* to_string(Fidelity fidelity);
const char* to_string(Protocol protocol);
const char* to_string(CollectiveTuner tuner);
bool parse_collective_kind(const std::string& text, CollectiveKind& out);
bool parse_algorithm(const std::string& text, Algorithm& out);
bool parse_fidelity(const std::string& text, Fidelity& out);
std::vector<std::string> collective_kind_names();
std::vector<std::string> algorithm_names();
std::vector<std::string> fidelity_names();

// The chunk count for pipelining `pipelined_bytes`: ⌈bytes / pipeline_chunk_bytes⌉ within [1, max_pipeline_chunks].
int pipeline_chunks(uint64_t pipelined_bytes, const CollectiveOptions& options);

// nccl-tests' bus-bandwidth factor: busbw = algbw × factor, with algbw = bytes / time.
// 2(N−1)/N for allreduce, (N−1)/N for reduce-scatter, all-gather and all-to-all, 1 for broadcast and reduce.
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

}  // namespace dtsim::sim
