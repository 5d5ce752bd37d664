// CudaOps: multi-head self-attention. The kernels and their order are in cuda_kernel_math_attention.hpp (one thread
// per query row for the softmax and the score gradients, one per output element for everything else; no atomics,
// so results are deterministic); this file checks the shape, brings the key lengths over and launches them.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda_kernel_math_attention.hpp"
#include "gpu/cuda_ops.hpp"
#include "gpu/cuda_support.cuh"

namespace dtsim::gpu {

using cuda_detail::check_cuda;
using cuda_detail::launch_for_each;

namespace {

// The executor of the attention plans: each step is one elementwise kernel.
struct LaunchExec {
  template <class Op>
  void for_each(size_t count, Op op, const char* name) {
    launch_for_each(count, op, (std::string(name) + " kernel launch").c_str());
  }
};

// Checked on the host before anything runs: a bad key length would make the kernels read outside a sequence.
void check_attention_shape(const AttentionShape& s, const char* op) {
  if (s.batch < 0 || s.seq <= 0 || s.heads <= 0 || s.head_dim <= 0) {
    throw std::invalid_argument(std::string("cuda backend: ") + op + ": bad shape");
  }
  if (!s.key_lengths) return;
  for (int b = 0; b < s.batch; ++b) {
    if (s.key_lengths[b] < 0 || s.key_lengths[b] > s.seq) {
      throw std::invalid_argument(std::string("cuda backend: ") + op + ": key length outside [0, seq]");
    }
  }
}

// Copies the key lengths (host memory, or null) to `room` in device memory and returns the kernels' geometry.
kernels::AttentionGeometry device_geometry(const AttentionShape& s, void* room, const char* op) {
  if (!s.key_lengths) return kernels::attention_geometry(s, nullptr);
  auto* lengths = static_cast<int32_t*>(room);
  check_cuda(cudaMemcpy(lengths, s.key_lengths, static_cast<size_t>(s.batch) * sizeof(int32_t), cudaMemcpyHostToDevice),
             (std::string("cudaMemcpy (") + op + " key lengths)").c_str());
  return kernels::attention_geometry(s, lengths);
}

size_t key_lengths_bytes(const AttentionShape& s) {
  return s.key_lengths ? static_cast<size_t>(s.batch) * sizeof(int32_t) : 0;
}

}  // namespace

void CudaOps::attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                float* probs, float* out) {
  check_attention_shape(shape, "attention_forward");
  if (shape.batch == 0) return;
  const kernels::AttentionGeometry g = device_geometry(shape, workspace(key_lengths_bytes(shape)), "attention_forward");
  LaunchExec exec;
  kernels::attention_forward_plan(exec, g, q, k, v, probs, out);
}

void CudaOps::attention_backward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                                 const float* probs, const float* dout, float* dq, float* dk, float* dv) {
  check_attention_shape(shape, "attention_backward");
  if (shape.batch == 0) return;
  // Workspace: the score gradients (the size of probs, a whole number of floats), then the key lengths.
  const size_t ds_bytes = kernels::attention_geometry(shape, nullptr).probs_size() * sizeof(float);
  char* base = static_cast<char*>(workspace(ds_bytes + key_lengths_bytes(shape)));
  const kernels::AttentionGeometry g = device_geometry(shape, base + ds_bytes, "attention_backward");
  LaunchExec exec;
  kernels::attention_backward_plan(exec, g, q, k, v, probs, dout, dq, dk, dv, reinterpret_cast<float*>(base));
}

void CudaOps::rotary_embedding(const AttentionShape& shape, float* x, double base, bool inverse) {
  check_attention_shape(shape, "rotary_embedding");
  if (shape.head_dim % 2 != 0) throw std::invalid_argument("cuda backend: rotary_embedding: head_dim must be even");
  if (!std::isfinite(base) || base <= 1) {
    throw std::invalid_argument("cuda backend: rotary_embedding: base must be finite and above 1");
  }
  const kernels::AttentionGeometry g = kernels::attention_geometry(shape, nullptr);
  launch_for_each(g.elements() / 2, kernels::RotaryPair{x, g, base, inverse ? -1 : 1}, "rotary_embedding kernel launch");
}

}  // namespace dtsim::gpu
