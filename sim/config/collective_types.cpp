#include "sim/config/collective_types.hpp"

#include <optional>

#include "sim/config/collective_algorithms.hpp"

namespace dtsim::sim {

const models::NameTable<CollectiveKind>& collective_kind_table() {
  static const models::NameTable<CollectiveKind> table{{CollectiveKind::Allreduce, "allreduce"},
                                                       {CollectiveKind::ReduceScatter, "reduce_scatter"},
                                                       {CollectiveKind::AllGather, "all_gather"},
                                                       {CollectiveKind::Broadcast, "broadcast"},
                                                       {CollectiveKind::Reduce, "reduce"},
                                                       {CollectiveKind::AllToAll, "alltoall"}};
  return table;
}

const models::NameTable<Fidelity>& fidelity_table() {
  static const models::NameTable<Fidelity> table{{Fidelity::Auto, "auto"},
                                                 {Fidelity::Stepwise, "stepwise"},
                                                 {Fidelity::Aggregated, "aggregated"},
                                                 {Fidelity::Analytic, "analytic"}};
  return table;
}

const models::NameTable<CollectiveTuner>& collective_tuner_table() {
  static const models::NameTable<CollectiveTuner> table{{CollectiveTuner::Nccl, "nccl"},
                                                        {CollectiveTuner::Fastest, "fastest"}};
  return table;
}

const models::NameTable<Protocol>& protocol_table() {
  static const models::NameTable<Protocol> table{{Protocol::Auto, "auto"},
                                                 {Protocol::LL, "ll"},
                                                 {Protocol::LL128, "ll128"},
                                                 {Protocol::Simple, "simple"},
                                                 {Protocol::None, "none"}};
  return table;
}

namespace {

template <class E>
bool parse_into(const models::NameTable<E>& table, const std::string& text, E& out) {
  const std::optional<E> value = table.parse(text);
  if (value) out = *value;
  return value.has_value();
}

}  // namespace

const char* to_string(CollectiveKind kind) { return collective_kind_table().name(kind); }
const char* to_string(Algorithm algorithm) { return algorithm_table().name(algorithm); }
const char* to_string(Fidelity fidelity) { return fidelity_table().name(fidelity); }
const char* to_string(Protocol protocol) { return protocol_table().name(protocol); }
const char* to_string(CollectiveTuner tuner) { return collective_tuner_table().name(tuner); }
bool parse_collective_kind(const std::string& text, CollectiveKind& out) {
  return parse_into(collective_kind_table(), text, out);
}
bool parse_algorithm(const std::string& text, Algorithm& out) { return parse_into(algorithm_table(), text, out); }
bool parse_fidelity(const std::string& text, Fidelity& out) { return parse_into(fidelity_table(), text, out); }
std::vector<std::string> collective_kind_names() { return collective_kind_table().names(); }
std::vector<std::string> algorithm_names() { return algorithm_table().names(); }
std::vector<std::string> fidelity_names() { return fidelity_table().names(); }

int pipeline_chunks(uint64_t pipelined_bytes, const CollectiveOptions& options) {
  const uint64_t chunk = options.pipeline_chunk_bytes > 0 ? options.pipeline_chunk_bytes : 1;
  const uint64_t wanted = (pipelined_bytes + chunk - 1) / chunk;
  const uint64_t most = static_cast<uint64_t>(options.max_pipeline_chunks > 0 ? options.max_pipeline_chunks : 1);
  return static_cast<int>(wanted < 1 ? 1 : wanted > most ? most : wanted);
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  if (ranks <= 1) return kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce ? 1.0 : 0.0;
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::Allreduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll: return (n - 1) / n;
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce: return 1.0;
  }
  return 1.0;
}

}  // namespace dtsim::sim
