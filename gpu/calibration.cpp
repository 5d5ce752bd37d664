#include "gpu/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace dtsim::gpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Backend memory freed when the measurement ends, also when it throws.
class DeviceBuffer {
 public:
  DeviceBuffer(Ops<float>& ops, size_t count, float value) : ops_(ops), data_(ops.allocate(count)) {
    ops_.fill(data_, count, value);
  }
  ~DeviceBuffer() { ops_.release(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return data_; }

 private:
  Ops<float>& ops_;
  float* data_;
};

}  // namespace

double best_seconds_per_call(const std::function<void()>& call, const std::function<void()>& wait_for_backend,
                             const TimingBudget& budget) {
  if (budget.batches < 1 || !(budget.min_batch_seconds > 0))
    throw std::invalid_argument("best_seconds_per_call: needs at least one batch and a positive batch time");
  // Warm-up: first-touch page faults, lazily created handles and kernel loading are not measured. Its time sets
  // how many calls run between two reads of the clock and waits for the backend: about 10 ms worth, so that
  // neither the clock (tens of nanoseconds) nor the wait (tens of microseconds on CUDA) counts in a short call.
  const Clock::time_point warm_start = Clock::now();
  call();
  wait_for_backend();
  const double warm_seconds = seconds_since(warm_start);
  const long group = std::clamp(static_cast<long>(1e-2 / std::max(warm_seconds, 1e-9)), 1L, 1L << 16);
  double best = std::numeric_limits<double>::infinity();
  for (int batch = 0; batch < budget.batches; ++batch) {
    long calls = 0;
    const Clock::time_point start = Clock::now();
    do {
      for (long i = 0; i < group; ++i) call();
      calls += group;
      // Waiting after every call would time the wait as well; after each group keeps the queue short.
      wait_for_backend();
    } while (seconds_since(start) < budget.min_batch_seconds);
    best = std::min(best, seconds_since(start) / static_cast<double>(calls));
  }
  return best;
}

double time_gemm(Ops<float>& ops, int m, int n, int k, const TimingBudget& budget) {
  if (m < 1 || n < 1 || k < 1) throw std::invalid_argument("time_gemm: every dimension must be at least 1");
  const DeviceBuffer a(ops, static_cast<size_t>(m) * k, 0.5f);
  const DeviceBuffer b(ops, static_cast<size_t>(k) * n, 0.25f);
  const DeviceBuffer c(ops, static_cast<size_t>(m) * n, 0.0f);
  const auto product = [&] {
    ops.gemm(Transpose::No, Transpose::No, 1.0f, ConstMatrixView<float>(a.get(), m, k),
             ConstMatrixView<float>(b.get(), k, n), 0.0f, MatrixView<float>{c.get(), m, n});
  };
  const auto wait = [&] { (void)ops.sum(c.get(), 1); };
  return best_seconds_per_call(product, wait, budget);
}

double time_axpy(Ops<float>& ops, size_t count, const TimingBudget& budget) {
  if (count < 1) throw std::invalid_argument("time_axpy: needs at least one element");
  const DeviceBuffer x(ops, count, 1.0f);
  const DeviceBuffer y(ops, count, 0.0f);
  // alpha = 0 keeps y finite however many calls run; the kernel still reads x and y and writes y.
  const auto update = [&] { ops.axpy(0.0f, x.get(), y.get(), count); };
  const auto wait = [&] { (void)ops.sum(y.get(), 1); };
  return best_seconds_per_call(update, wait, budget);
}

double time_empty_call(Ops<float>& ops, const TimingBudget& budget) { return time_axpy(ops, 1, budget); }

AttentionSeconds time_attention(Ops<float>& ops, int batch, int seq, int heads, int head_dim, bool causal,
                                const TimingBudget& budget) {
  if (batch < 1 || seq < 1 || heads < 1 || head_dim < 1)
    throw std::invalid_argument("time_attention: every dimension must be at least 1");
  const AttentionShape shape{batch, seq, heads, head_dim, causal, nullptr};
  const size_t tokens = static_cast<size_t>(batch) * seq, width = static_cast<size_t>(heads) * head_dim;
  const size_t scores = static_cast<size_t>(batch) * heads * seq * seq;
  // Small values keep the softmax away from overflow however the calls repeat.
  const DeviceBuffer q(ops, tokens * width, 0.01f), k(ops, tokens * width, 0.02f), v(ops, tokens * width, 0.5f);
  const DeviceBuffer probs(ops, scores, 0.0f), out(ops, tokens * width, 0.0f), dout(ops, tokens * width, 0.001f);
  const DeviceBuffer dq(ops, tokens * width, 0.0f), dk(ops, tokens * width, 0.0f), dv(ops, tokens * width, 0.0f);
  AttentionSeconds t;
  t.forward = best_seconds_per_call([&] { ops.attention_forward(shape, q.get(), k.get(), v.get(), probs.get(), out.get()); },
                                    [&] { (void)ops.sum(out.get(), 1); }, budget);
  t.backward = best_seconds_per_call(
      [&] { ops.attention_backward(shape, q.get(), k.get(), v.get(), probs.get(), dout.get(), dq.get(), dk.get(), dv.get()); },
      [&] { (void)ops.sum(dq.get(), 1); }, budget);
  return t;
}

}  // namespace dtsim::gpu
