#include "sim/config/collective_types.hpp"

#include <array>
#include <utility>

namespace dtsim::sim {
namespace {

template <class E, size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <class E, size_t N>
bool parse_name(const std::array<std::pair<E, const char*>, N>& table, const std::string& text, E& out) {
  for (const auto& [e, name] : table)
    if (text == name) {
      out = e;
      return true;
    }
  return false;
}

template <class E, size_t N>
std::vector<std::string> names_of(const std::array<std::pair<E, const char*>, N>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.second);
  return names;
}

const std::array<std::pair<CollectiveKind, const char*>, 5> kKinds = {{{CollectiveKind::Allreduce, "allreduce"},
                                                                       {CollectiveKind::ReduceScatter, "reduce_scatter"},
                                                                       {CollectiveKind::AllGather, "all_gather"},
                                                                       {CollectiveKind::Broadcast, "broadcast"},
                                                                       {CollectiveKind::Reduce, "reduce"}}};
const std::array<std::pair<Algorithm, const char*>, 4> kAlgorithms = {{{Algorithm::Ring, "ring"},
                                                                       {Algorithm::DoubleBinaryTree, "tree"},
                                                                       {Algorithm::HalvingDoubling, "halving-doubling"},
                                                                       {Algorithm::Hierarchical, "hierarchical"}}};
const std::array<std::pair<Fidelity, const char*>, 4> kFidelities = {{{Fidelity::Auto, "auto"},
                                                                      {Fidelity::Stepwise, "stepwise"},
                                                                      {Fidelity::Aggregated, "aggregated"},
                                                                      {Fidelity::Analytic, "analytic"}}};

}  // namespace

const char* to_string(CollectiveKind kind) { return name_of(kKinds, kind); }
const char* to_string(Algorithm algorithm) { return name_of(kAlgorithms, algorithm); }
const char* to_string(Fidelity fidelity) { return name_of(kFidelities, fidelity); }
bool parse_collective_kind(const std::string& text, CollectiveKind& out) { return parse_name(kKinds, text, out); }
bool parse_algorithm(const std::string& text, Algorithm& out) { return parse_name(kAlgorithms, text, out); }
bool parse_fidelity(const std::string& text, Fidelity& out) { return parse_name(kFidelities, text, out); }
std::vector<std::string> collective_kind_names() { return names_of(kKinds); }
std::vector<std::string> algorithm_names() { return names_of(kAlgorithms); }
std::vector<std::string> fidelity_names() { return names_of(kFidelities); }

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
    case CollectiveKind::AllGather: return (n - 1) / n;
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce: return 1.0;
  }
  return 1.0;
}

bool is_supported(CollectiveKind kind, Algorithm algorithm) {
  return kind == CollectiveKind::Allreduce || algorithm == Algorithm::Ring;
}

}  // namespace dtsim::sim
