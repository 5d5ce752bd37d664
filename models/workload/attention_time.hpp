// The time of a fused attention kernel (FlashAttention) from a published table of its measured throughput, by
// head dimension, sequence length, causality and direction.
//
// A fused kernel is not a chain of products that the tile model (matmul_time.hpp) could time: it interleaves two
// products with a softmax on chip, and its speed depends on the sequence length, the head width and the mask in
// ways that only a benchmark shows. The table holds such a benchmark's points (TFLOP/s at the FlashAttention
// benchmark's FLOP count: 4 · sequences · s² · heads · head width forward, halved under a causal mask; the
// backward pass counts 2.5 times the forward's, forward + backward 3.5 times).
//
// Rates between tabled points are interpolated linearly in log(sequence length), then linearly in the head
// width; outside the tabled range they are held at the nearest point. A point given for forward + backward
// only is used for both directions; where the forward rate is tabled too, the backward rate is what remains of
// the pair's time: 2.5 / (3.5 / rate(forward + backward) − 1 / rate(forward)).
//
// The benchmark ran 16k tokens and a model width of 2048 per call (batch × sequence = 16384, heads × head width
// = 2048), which fills an H100 or A100 with about 16 waves of query blocks. A call with fewer blocks leaves SMs
// idle: its time is scaled by its wave quantisation over the benchmark's (blocks of 128 query rows, one per
// SM at a time).
//
// Pure arithmetic, no simulated time; sim/config reads the table files (network_profiles/gpu/attention/).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dtsim::models {

// One call of a fused attention kernel, per sample (a sequence): `heads` query heads of width `head_dim` over
// `sequence` tokens. heads = 0: the layer is no fused attention.
struct AttentionShape {
  double heads = 0, head_dim = 0, sequence = 0;
  bool causal = false;
  bool present() const { return heads > 0; }
  // The benchmark's forward FLOPs for `samples` sequences (the causal mask halves them).
  double forward_flops(double samples) const;
};

// The FlashAttention benchmark's FLOP count of a backward pass and of forward + backward, in forward passes.
inline constexpr double kAttentionBackwardPasses = 2.5;
inline constexpr double kAttentionForwardBackwardPasses = 3.5;

enum class AttentionPass { Forward, ForwardBackward };

struct AttentionPoint {
  AttentionPass pass = AttentionPass::ForwardBackward;
  bool causal = false;
  int head_dim = 0;
  double sequence = 0;
  double flops_per_second = 0;
};

class AttentionTable {
 public:
  // Throws std::invalid_argument when a point is not positive, a point is given twice, a mask (causal or not)
  // has no forward + backward point, or a tabled forward rate leaves no time for the backward pass.
  explicit AttentionTable(const std::vector<AttentionPoint>& points);

  // FLOP/s at the benchmark's FLOP count, interpolated as the header says.
  double forward_rate(double head_dim, double sequence, bool causal) const;
  double backward_rate(double head_dim, double sequence, bool causal) const;
  size_t points() const { return points_; }

 private:
  // sequence → rate, per head width, per mask.
  using Series = std::map<int, std::map<double, double>>;
  static double lookup(const Series& series, double head_dim, double sequence);
  Series forward_[2], backward_[2];
  size_t points_ = 0;
};

// Reads a table: one point per line, `pass,causal,head_dim,sequence,tflops` (pass: forward or
// forward+backward; causal: yes or no), '#' starts a comment, blank lines are skipped, and the first
// non-comment line may be that header. Throws AttentionTableError with the 1-based line of the problem.
struct AttentionTableError : std::invalid_argument {
  int line;
  AttentionTableError(int line_number, const std::string& what) : std::invalid_argument(what), line(line_number) {}
};
AttentionTable parse_attention_table(const std::string& text);

struct AttentionTime {
  double forward = 0, backward = 0;  // seconds
  double waves_factor = 1;           // the call's wave quantisation over the benchmark's
};
// `samples` sequences of `shape` on a GPU with `multiprocessors` SMs (0: no wave correction).
AttentionTime attention_time(const AttentionShape& shape, double samples, const AttentionTable& table,
                             int multiprocessors);

}  // namespace dtsim::models
