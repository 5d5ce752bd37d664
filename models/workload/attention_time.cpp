#include "models/workload/attention_time.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "gpu/portable_math.hpp"

namespace dtsim::models {
namespace {

// The benchmark's call (benchmarks/benchmark_flash_attention.py): batch × sequence = 16384 tokens and
// heads × head width = 2048, in blocks of 128 query rows.
constexpr double kBenchmarkTokens = 16384;
constexpr double kBenchmarkWidth = 2048;
constexpr double kQueryBlockRows = 128;

std::string describe(AttentionPass pass, bool causal, int head_dim, double sequence) {
  std::ostringstream s;
  s << (pass == AttentionPass::Forward ? "forward" : "forward+backward") << (causal ? ", causal" : ", not causal")
    << ", head width " << head_dim << ", sequence " << sequence;
  return s.str();
}

// Linear in x between the two points around it; held at the ends.
template <class Map, class Key>
double interpolate(const Map& points, Key x, double (*axis)(double)) {
  auto above = points.lower_bound(x);
  if (above == points.end()) return std::prev(above)->second;
  if (above == points.begin() || above->first == x) return above->second;
  const auto below = std::prev(above);
  const double t = (axis(x) - axis(below->first)) / (axis(above->first) - axis(below->first));
  return below->second + t * (above->second - below->second);
}

double linear(double x) { return x; }
// Any base will do for interpolating along a log axis; dtsim's own log keeps the result the same on every CPU.
double log_axis(double x) { return portable::log(x); }

// ceil(blocks / SMs) / (blocks / SMs): how much longer a call takes than its work spread evenly over the SMs.
double wave_quantisation(double blocks, int multiprocessors) {
  const double waves = blocks / multiprocessors;
  return std::ceil(waves) / waves;
}

}  // namespace

double AttentionShape::forward_flops(double samples) const {
  return 4 * samples * sequence * sequence * heads * head_dim / (causal ? 2 : 1);
}

AttentionTable::AttentionTable(const std::vector<AttentionPoint>& points) {
  Series given[2][2];  // [pass][causal]
  for (const AttentionPoint& p : points) {
    if (!(p.head_dim > 0) || !(p.sequence > 0) || !(p.flops_per_second > 0) || !std::isfinite(p.flops_per_second))
      throw std::invalid_argument("the point (" + describe(p.pass, p.causal, p.head_dim, p.sequence) +
                                  ") needs a positive head width, sequence length and rate");
    auto& series = given[p.pass == AttentionPass::Forward ? 0 : 1][p.causal ? 1 : 0][p.head_dim];
    if (!series.emplace(p.sequence, p.flops_per_second).second)
      throw std::invalid_argument("the point (" + describe(p.pass, p.causal, p.head_dim, p.sequence) +
                                  ") is given twice");
  }
  points_ = points.size();
  for (int causal = 0; causal < 2; ++causal) {
    const Series& pair = given[1][causal];
    const Series& forward_only = given[0][causal];
    if (pair.empty())
      throw std::invalid_argument(std::string("no forward+backward point for attention ") +
                                  (causal ? "with" : "without") + " a causal mask: the backward pass would have no rate");
    forward_[causal] = forward_only;
    for (const auto& [head_dim, by_sequence] : pair) {
      if (!forward_[causal].count(head_dim)) forward_[causal][head_dim] = by_sequence;
      const auto tabled_forward = forward_only.find(head_dim);
      for (const auto& [sequence, rate] : by_sequence) {
        double backward = rate;
        if (tabled_forward != forward_only.end()) {
          const double forward = interpolate(tabled_forward->second, sequence, log_axis);
          const double left = kAttentionForwardBackwardPasses / rate - 1 / forward;  // seconds per forward FLOP
          if (!(left > 0))
            throw std::invalid_argument("the forward rate at (" +
                                        describe(AttentionPass::ForwardBackward, causal, head_dim, sequence) +
                                        ") is so much slower than forward+backward that the backward pass takes no time");
          backward = kAttentionBackwardPasses / left;
        }
        backward_[causal][head_dim][sequence] = backward;
      }
    }
  }
}

double AttentionTable::lookup(const Series& series, double head_dim, double sequence) {
  std::map<double, double> by_width;
  for (const auto& [width, by_sequence] : series) by_width[width] = interpolate(by_sequence, sequence, log_axis);
  return interpolate(by_width, head_dim, linear);
}

double AttentionTable::forward_rate(double head_dim, double sequence, bool causal) const {
  return lookup(forward_[causal ? 1 : 0], head_dim, sequence);
}

double AttentionTable::backward_rate(double head_dim, double sequence, bool causal) const {
  return lookup(backward_[causal ? 1 : 0], head_dim, sequence);
}

AttentionTable parse_attention_table(const std::string& text) {
  std::vector<AttentionPoint> points;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool header_allowed = true;
  while (std::getline(in, line)) {
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::vector<std::string> fields;
    std::string field;
    std::istringstream cells(line);
    while (std::getline(cells, field, ',')) {
      const size_t a = field.find_first_not_of(" \t\r"), b = field.find_last_not_of(" \t\r");
      fields.push_back(a == std::string::npos ? "" : field.substr(a, b - a + 1));
    }
    if (fields.empty() || (fields.size() == 1 && fields[0].empty())) continue;
    if (header_allowed && fields.size() == 5 && fields[0] == "pass") {
      header_allowed = false;
      continue;
    }
    header_allowed = false;
    if (fields.size() != 5)
      throw AttentionTableError(number, "has " + std::to_string(fields.size()) +
                                            " fields; write pass,causal,head_dim,sequence,tflops");
    AttentionPoint p;
    if (fields[0] == "forward") p.pass = AttentionPass::Forward;
    else if (fields[0] == "forward+backward") p.pass = AttentionPass::ForwardBackward;
    else throw AttentionTableError(number, "pass '" + fields[0] + "' is neither forward nor forward+backward");
    if (fields[1] == "yes" || fields[1] == "no") p.causal = fields[1] == "yes";
    else throw AttentionTableError(number, "causal '" + fields[1] + "' is neither yes nor no");
    auto number_at = [&](size_t i, const char* what) {
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(fields[i], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != fields[i].size() || !std::isfinite(v) || !(v > 0))
        throw AttentionTableError(number, std::string(what) + " '" + fields[i] + "' is not a positive number");
      return v;
    };
    const double head_dim = number_at(2, "head_dim");
    if (head_dim != std::floor(head_dim) || head_dim > 4096)
      throw AttentionTableError(number, "head_dim '" + fields[2] + "' is not a whole number up to 4096");
    p.head_dim = static_cast<int>(head_dim);
    p.sequence = number_at(3, "sequence");
    p.flops_per_second = number_at(4, "tflops") * 1e12;
    points.push_back(p);
  }
  try {
    return AttentionTable(points);
  } catch (const std::invalid_argument& e) {
    throw AttentionTableError(0, e.what());
  }
}

AttentionTime attention_time(const AttentionShape& shape, double samples, const AttentionTable& table,
                             int multiprocessors) {
  AttentionTime t;
  if (!shape.present() || !(samples > 0)) return t;
  if (multiprocessors > 0) {
    const double blocks = samples * shape.heads * std::ceil(shape.sequence / kQueryBlockRows);
    const double benchmark_heads = std::max(1.0, std::floor(kBenchmarkWidth / shape.head_dim));
    const double benchmark_blocks = kBenchmarkTokens / kQueryBlockRows * benchmark_heads;
    t.waves_factor = wave_quantisation(blocks, multiprocessors) / wave_quantisation(benchmark_blocks, multiprocessors);
  }
  const double flops = shape.forward_flops(samples);
  t.forward = flops / table.forward_rate(shape.head_dim, shape.sequence, shape.causal) * t.waves_factor;
  t.backward =
      kAttentionBackwardPasses * flops / table.backward_rate(shape.head_dim, shape.sequence, shape.causal) * t.waves_factor;
  return t;
}

}  // namespace dtsim::models
