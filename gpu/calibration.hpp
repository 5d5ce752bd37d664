// Measuring a backend: how long its matrix products, a memory-bound kernel and an empty call take on the machine
// at hand, in wall-clock time. Only `dtsim calibrate` uses this; simulated time never reads a clock otherwise.
#pragma once

#include <cstddef>
#include <functional>

#include "gpu/ops.hpp"

namespace dtsim::gpu {

// The shortest time per call seen over `batches` batches. A batch runs the call in groups of about 10 ms
// (as the warm-up call's time predicts), each group ended by a call that waits for the backend (a reduction read
// back to the host), so that an asynchronous backend is timed to completion, until it has run
// `min_batch_seconds`; the minimum over batches is the figure least disturbed by other processes.
struct TimingBudget {
  double min_batch_seconds = 0.05;
  int batches = 5;
};
double best_seconds_per_call(const std::function<void()>& call, const std::function<void()>& wait_for_backend,
                             const TimingBudget& budget);

// c(m × n) = a(m × k) · b(k × n) in FP32, no transposes; 2·m·n·k floating-point operations a call.
double time_gemm(Ops<float>& ops, int m, int n, int k, const TimingBudget& budget);

// y += 2 · x over `count` floats: each element read twice and written once, 12 bytes of traffic.
double time_axpy(Ops<float>& ops, size_t count, const TimingBudget& budget);

// The same on a single element: the fixed cost of one backend call (on CUDA, a kernel launch).
double time_empty_call(Ops<float>& ops, const TimingBudget& budget);

// The backend's attention op over `batch` sequences of `seq` tokens, `heads` heads of `head_dim`: the forward pass
// and, after it, the backward pass (which reads the forward's probabilities), each timed on its own.
struct AttentionSeconds {
  double forward = 0, backward = 0;  // per call
};
AttentionSeconds time_attention(Ops<float>& ops, int batch, int seq, int heads, int head_dim, bool causal,
                                const TimingBudget& budget);

}  // namespace dtsim::gpu
