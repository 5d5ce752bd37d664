// Gradient compression: what a worker puts on the wire instead of its fp32 gradient, what the receivers decode
// from it, and how many bytes that encoding really takes (the simulator charges the network with those bytes,
// never with a nominal ratio). Pure numerics: nothing here knows about simulated time.
//
// A compressor works per parameter tensor of the flat gradient vector (the tensors of param_tensors(), with a
// matrix shape where PowerSGD needs one), per worker, per step. Two forms:
// - Compressor: one worker on its own (an asynchronous push, a client's upload). compress() overwrites the
//   gradient with what receivers decode and returns the messages it sent.
// - GroupCompressor: every worker of one synchronous step, combined into the average the update uses. Some
//   schemes are collective by nature (PowerSGD's two allreduces, majority vote, a sum carried in fp16), so the
//   group form is not "compress each worker, then average" for all of them.
//
// Error feedback (Seide et al. 2014; Karimireddy et al. 2019): each worker keeps a residual e, compresses
// x = g + e and keeps e = x − (what it transmitted). Over any number of steps Σ transmitted + e = Σ g.
//
// Before settings.start_step (and for tensors below settings.min_tensor_size, and vectors under PowerSGD) a
// tensor goes uncompressed: its fp32 values are allreduced at 4 bytes each, the residual is neither read nor
// written, Signum's momentum and PowerSGD's Q are left alone.
//
// Wire encodings (all per tensor and per message, rounded up to whole bytes per message):
//   none            allreduce  4·d
//   fp16, bf16      allreduce  2·d
//   topk            all-gather 4·k values + k indices (⌈log2 d⌉ bits each, or 4 bytes with int32 indices)
//   topk, sampled   all-gather the same for the c values selected, plus a 4-byte count (c varies per worker)
//   randomk         shared indices: allreduce 4·k (receivers regenerate the indices from the seed);
//                   otherwise all-gather like topk
//   qsgd            all-gather 4 bytes per bucket norm + d·(1 + ⌈log2(s+1)⌉) bits (sign bit + level 0..s)
//   sign, signum    all-gather ⌈d/8⌉ (one bit per value; majority vote too: the vote is taken by the receiver)
//   scaled-sign     all-gather 4 + ⌈d/8⌉ (the fp32 scale ‖x‖₁/d, then the bits)
//   powersgd        group: allreduce 4·m·r (P) then allreduce 4·n·r (Q), r = min(rank, m, n);
//                   a worker alone: all-gather 4·(m + n)·r (its P̂ and Q)
// Uncompressed tensors: allreduce 4·d.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/ops.hpp"
#include "models/layer.hpp"
#include "models/network.hpp"

namespace dtsim::models {

enum class CompressorKind { None, Fp16, Bf16, TopK, RandomK, Qsgd, Sign, ScaledSign, Signum, PowerSgd };

// "none" | "fp16" | "bf16" | "topk" | "randomk" | "qsgd" | "sign" | "scaled-sign" | "signum" | "powersgd";
// throws std::invalid_argument naming the accepted values. The names, and what each compressor reads, are
// in compressor_registry() (models/compression/registry.hpp), with the choices list compressor_kind_names().
CompressorKind parse_compressor_kind(const std::string& text);
const char* to_string(CompressorKind kind);

enum class IndexEncoding { Bits, Int32 };
IndexEncoding parse_index_encoding(const std::string& text);  // "bits" | "int32"
const char* to_string(IndexEncoding encoding);

// What the sign compressors send for a value that is exactly zero. A packed bit has two symbols, so a 1-bit
// wire format folds zero into one of them (Plus: x >= 0 is sent as +1, as bit-packing implementations such as
// GRACE's do); the papers' sign(0) = 0 (Zero: torch.sign, the reference code of Karimireddy et al. 2019) needs
// a third symbol that the wire accounting does not charge for. The choice matters where gradients are sparse
// (ReLU networks at small batches): under Plus every zero entry is pushed the same way, step after step.
enum class SignOfZero { Plus, Zero };
SignOfZero parse_sign_of_zero(const std::string& text);  // "plus" | "zero"
const char* to_string(SignOfZero sign);

struct CompressionSettings {
  CompressorKind kind = CompressorKind::None;
  double ratio = 0.01;             // topk, randomk: k = max(1, round(ratio·d)) per tensor, ratio in (0, 1]
  // topk: DGC's sampled threshold (Lin et al. 2018) instead of exact selection. The threshold is the
  // ⌈ratio·m⌉-th largest magnitude of m = max(⌈d/100⌉, min(d, 1000)) values sampled with replacement; every
  // value at or above it is sent. When that selects more than 2k values the exact top-k of them is sent; when
  // it selects fewer than k/2 (the sample missed the tail) the exact top-k of the tensor is sent. Both
  // fallbacks are counted in CompressionStats::threshold_fallbacks.
  bool sampled_threshold = false;
  bool unbiased = false;           // randomk: kept values scaled by d/k, so that E[C(x)] = x
  bool shared_indices = true;      // randomk: every worker draws the same indices (seed, step, tensor)
  // qsgd: s, the number of non-zero magnitude levels (Alistarh et al. 2017): |x_i|/‖x‖ is rounded
  // stochastically to a multiple of 1/s. Each value costs a sign bit and ⌈log2(s+1)⌉ level bits: s = 7
  // gives 4 bits per value, s = 15 five, s = 127 eight.
  int qsgd_levels = 7;
  size_t qsgd_bucket = 0;          // qsgd: values per norm; 0 = one norm for the whole tensor
  int powersgd_rank = 1;
  double signum_momentum = 0.9;    // m = β·m + (1 − β)·x, sign(m) is sent; β in [0, 1)
  bool majority_vote = false;      // sign, signum: the receivers take the sign of the sum of the workers' signs
  SignOfZero sign_of_zero = SignOfZero::Plus;  // sign, scaled-sign, signum: what a zero value is sent as
  bool predivide = false;          // fp16, bf16: divide by the number of workers before the (narrow) sum
  bool error_feedback = false;
  // topk, randomk, with error feedback: Deep Gradient Compression's momentum correction (Lin et al. 2018, §3.2)
  // with momentum factor masking, β in [0, 1), 0 = off. Each worker keeps u = β·u + g and accumulates v = v + u
  // (the error-feedback residual), sends C(v), and clears both u and v where it sent: the momentum the
  // optimizer would apply to the average is applied to each worker's own gradients before they are sparsified
  // (the optimizer then runs without momentum). Tensors that go uncompressed send u (plain momentum).
  double momentum_correction = 0.0;
  int64_t start_step = 0;          // steps before this one go uncompressed
  size_t min_tensor_size = 0;      // tensors with fewer values go uncompressed
  IndexEncoding indices = IndexEncoding::Bits;
  uint64_t seed = 1;               // random-k indices, QSGD's stochastic rounding, DGC's sample, PowerSGD's Q
};

// What validate() throws: the reason, and the CompressionSettings field it is about ("ratio", "unbiased", …),
// so that a caller can point at where that field came from.
class CompressionSettingError : public std::invalid_argument {
 public:
  CompressionSettingError(std::string setting, const std::string& message)
      : std::invalid_argument(message), setting_(std::move(setting)) {}
  const std::string& setting() const { return setting_; }

 private:
  std::string setting_;
};

// Throws CompressionSettingError when a value is out of range or is set for a kind it does not apply to
// (majority_vote outside sign/signum, predivide outside fp16/bf16, sampled_threshold outside topk, unbiased
// outside randomk, momentum_correction outside topk/randomk or without error feedback). Which kinds a setting
// applies to comes from the compressors' descriptors (CompressorDescriptor::settings).
void validate(const CompressionSettings& settings);

enum class Collective { Allreduce, AllGather };
const char* to_string(Collective collective);

// One message of one tensor: how the network must combine what the workers send, and how many bytes each
// worker sends. A tensor has one message, except under group PowerSGD (P, then Q).
struct WireOp {
  size_t tensor = 0;  // index into the compressor's layouts
  Collective collective = Collective::Allreduce;
  uint64_t bytes_per_worker = 0;
};

// A parameter tensor with the matrix shape PowerSGD gives it: a Dense weight inputs × outputs, a convolution
// kernel out_channels × (in_channels·kh·kw), an embedding vocab × dim. rows = cols = 0 marks a vector (a bias, a
// norm's gain), which PowerSGD leaves uncompressed as the paper does.
struct TensorLayout {
  ParamTensor tensor;
  size_t rows = 0;
  size_t cols = 0;
  bool is_matrix() const { return rows > 0 && cols > 0; }
};

// Every tensor of the network, in param_tensors() order, with the weights' matrix shapes.
template <class T>
std::vector<TensorLayout> tensor_layouts(const Network<T>& network);
// Tensors without shapes (an Objective that is not a network): all vectors.
std::vector<TensorLayout> vector_layouts(const std::vector<ParamTensor>& tensors);

// What one worker's compression did in one step, summed over its tensors.
struct CompressionStats {
  uint64_t wire_bytes = 0;           // Σ bytes_per_worker of the worker's messages
  uint64_t dense_bytes = 0;          // 4 bytes per value: what the uncompressed fp32 gradient costs
  double input_sum_squares = 0.0;    // ‖x‖², x what the compressor was given (g + e under error feedback)
  double error_sum_squares = 0.0;    // ‖x − C(x)‖², C(x) what this worker transmitted
  uint64_t threshold_fallbacks = 0;  // sampled top-k: tensors that fell back to exact selection
  // ‖x − C(x)‖ / ‖x‖ (0 when x = 0): the compressor's own distortion. Uncompressed tensors count with no error.
  double relative_error() const;
  double compression_ratio() const;  // dense_bytes / wire_bytes
};

struct CompressionResult {
  std::vector<WireOp> wire;  // in tensor order
  CompressionStats stats;
};

struct GroupResult {
  // In tensor order. An all-gather needs equal contributions, so bytes_per_worker is the largest any worker
  // sent (implementations pad to it); the workers' own counts are in workers[i].wire_bytes.
  std::vector<WireOp> wire;
  std::vector<int> ranks;                  // the ranks that contributed, ascending
  std::vector<CompressionStats> workers;   // one per entry of ranks
};

namespace compression_detail {
template <class T>
class Engine;
}

// One worker's compressor, with its state: the error-feedback residual, Signum's momentum, PowerSGD's
// warm-started Q. `layouts` must tile [0, num_params) in order; `rank` only seeds the worker's random streams.
// Keeps a reference to `ops`, which must outlive it. Throws std::invalid_argument on bad settings or layouts.
template <class T>
class Compressor {
 public:
  Compressor(gpu::Ops<T>& ops, std::vector<TensorLayout> layouts, size_t num_params,
             const CompressionSettings& settings, int rank);
  ~Compressor();
  Compressor(Compressor&&) noexcept;
  Compressor& operator=(Compressor&&) noexcept;

  // Overwrites grad (backend memory, num_params values) with what the receivers decode from this worker's
  // messages for `step`, and returns those messages. Majority vote has no meaning for a single worker: its
  // messages are plain signs. PowerSGD alone runs the single-matrix algorithm (P = MQ, orthonormalise,
  // Q = Mᵀ P̂, decode P̂ Qᵀ) and sends P̂ and Q.
  CompressionResult compress(T* grad, int64_t step);
  // The error-feedback residual (backend memory, num_params values), or null without error feedback.
  const T* residual() const;
  const CompressionSettings& settings() const;
  const std::vector<TensorLayout>& layouts() const;

 private:
  std::unique_ptr<compression_detail::Engine<T>> engine_;
  int rank_;
};

// Every worker of a synchronous step. Use either average() with every rank's gradient, or contribute() as
// each rank's gradient becomes ready (in any order: the simulated arrival order does not matter) and then
// combine() once all participating ranks have contributed. Ranks that do not contribute to a step (failed
// workers) are left out of the average; their state is untouched.
template <class T>
class GroupCompressor {
 public:
  GroupCompressor(gpu::Ops<T>& ops, std::vector<TensorLayout> layouts, size_t num_params,
                  const CompressionSettings& settings, int world_size);
  ~GroupCompressor();
  GroupCompressor(GroupCompressor&&) noexcept;
  GroupCompressor& operator=(GroupCompressor&&) noexcept;

  // Encodes rank's gradient for `step` and returns its messages (bytes from the actual encoding). grad must
  // stay valid and untouched until combine(): it holds the rank's message in the meantime. After combine()
  // it holds what the rank transmitted, decoded (for PowerSGD: the decoded average P̂ Q̄ᵀ, which is also what
  // its residual is taken against, as in PyTorch's PowerSGD hook). Throws std::invalid_argument for a rank out
  // of range, a rank contributing twice, or a step other than the one in progress.
  std::vector<WireOp> contribute(int rank, T* grad, int64_t step);
  // Writes the average the update uses into `mean` (backend memory, num_params values), combining the
  // contributions in rank order, and ends the step. Throws std::logic_error when nobody contributed.
  GroupResult combine(T* mean);
  // contribute() for ranks 0..grads.size()−1, then combine().
  GroupResult average(const std::vector<T*>& grads, int64_t step, T* mean);

  const T* residual(int rank) const;  // null without error feedback
  int world_size() const;
  const CompressionSettings& settings() const;
  const std::vector<TensorLayout>& layouts() const;

 private:
  std::unique_ptr<compression_detail::Engine<T>> engine_;
};

}  // namespace dtsim::models
