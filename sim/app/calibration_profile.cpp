#include "sim/app/calibration_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "models/workload/attention_time.hpp"
#include "sim/scenario/text.hpp"

namespace dtsim::sim {

namespace {

// Six significant digits in a unit that keeps the number between 1 and 1000, so that units.cpp reads it back.
std::string flop_rate_text(double flops) {
  return flops >= 1e12 ? printf_number("%.6gTFLOPS", flops / 1e12) : printf_number("%.6gGFLOPS", flops / 1e9);
}
std::string bandwidth_text(double bytes_per_second) { return printf_number("%.6gGB/s", bytes_per_second / 1e9); }
std::string time_text(double seconds) { return printf_number("%.6gus", seconds * 1e6); }
std::string bytes_text(double bytes) { return printf_number("%.6gGB", bytes / 1e9); }

}  // namespace

CalibratedProfile fit_profile(const Calibration& c) {
  if (c.products.empty()) throw std::invalid_argument("fit_profile: no matrix product was measured");
  if (c.streams.empty()) throw std::invalid_argument("fit_profile: no memory-bound kernel was measured");
  for (const ProductMeasurement& p : c.products)
    if (!(p.seconds > 0) || p.m < 1 || p.n < 1 || p.k < 1)
      throw std::invalid_argument("fit_profile: a product with no shape or no positive time");
  for (const StreamMeasurement& s : c.streams)
    if (!(s.seconds > 0) || s.count < 1) throw std::invalid_argument("fit_profile: a stream with no positive time");
  if (!(c.empty_call_seconds > 0)) throw std::invalid_argument("fit_profile: the empty call's time is not positive");

  CalibratedProfile p;
  const auto by_rate = [](const ProductMeasurement& a, const ProductMeasurement& b) {
    return a.flop_rate() < b.flop_rate();
  };
  const auto by_flops = [](const ProductMeasurement& a, const ProductMeasurement& b) { return a.flops() < b.flops(); };
  p.peak_flops = std::max_element(c.products.begin(), c.products.end(), by_rate)->flop_rate();
  p.achievable_flops = std::max_element(c.products.begin(), c.products.end(), by_flops)->flop_rate();
  p.efficiency = p.achievable_flops / p.peak_flops;
  // The largest vectors, not the fastest: small ones stay in the caches and would read as cache bandwidth.
  p.memory_bandwidth = std::max_element(c.streams.begin(), c.streams.end(), [](const StreamMeasurement& a,
                                                                               const StreamMeasurement& b) {
                         return a.count < b.count;
                       })->bandwidth();
  p.launch_overhead = c.empty_call_seconds;
  return p;
}

double profile_seconds(const CalibratedProfile& profile, const ProductMeasurement& product) {
  return std::max(product.flops() / (profile.peak_flops * profile.efficiency),
                  product.bytes() / profile.memory_bandwidth) +
         profile.launch_overhead;
}

std::string profile_ini(const CalibratedProfile& p, const ProfileHeader& h) {
  std::string s;
  s += "# Written by `" + h.command + "` on " + h.date + ".\n";
  s += "# Backend: " + h.backend + "; numerics: " + h.numerics + ".\n";
  s += "# Every value was measured on this machine by that command (calibration.csv beside this file holds each\n";
  s += "# measurement), except memory, which is the size the command was given or found. Use it with\n";
  s += "# gpu.profile = <path of this file>; rerun the command to refresh it.\n";
  s += "[gpu]\n";
  s += "name = " + h.name + "\n";
  s += "# The fastest measured FP32 product's rate.\n";
  s += "peak_fp32 = " + flop_rate_text(p.peak_flops) + "\n";
  s += "# The backend computes every product in FP32: TF32 and BF16 math run at the same rate.\n";
  s += "peak_tf32 = " + flop_rate_text(p.peak_flops) + "\n";
  s += "peak_bf16 = " + flop_rate_text(p.peak_flops) + "\n";
  s += "# The rate of the measured product with the most FLOPs over the peak above: large products run at it.\n";
  s += "efficiency = " + printf_number("%.6g", p.efficiency) + "\n";
  s += "# The same rate, for compute.matmul = tiles (which also needs gpu.multiprocessors, not measured here).\n";
  s += "achievable_fp32 = " + flop_rate_text(p.achievable_flops) + "\n";
  s += "achievable_tf32 = " + flop_rate_text(p.achievable_flops) + "\n";
  s += "achievable_bf16 = " + flop_rate_text(p.achievable_flops) + "\n";
  s += "# y += a * x over the largest measured vectors: 12 bytes of traffic per element.\n";
  s += "memory_bandwidth = " + bandwidth_text(p.memory_bandwidth) + "\n";
  s += "# The same call on one element: the fixed cost of a backend call (a kernel launch on CUDA).\n";
  s += "launch_overhead = " + time_text(p.launch_overhead) + "\n";
  s += "# Given with --memory, or the host's physical memory for the CPU backend.\n";
  s += "memory = " + bytes_text(h.memory_bytes) + "\n";
  if (!h.attention_table.empty()) {
    s += "# The backend's attention op measured over sequence lengths, head widths and both masks (compute.matmul =\n";
    s += "# tiles times FlashAttention layers from it); the table beside this file.\n";
    s += "attention_table = " + h.attention_table + "\n";
  }
  return s;
}

double AttentionMeasurement::forward_flops() const {
  const models::AttentionShape shape{static_cast<double>(heads), static_cast<double>(head_dim),
                                     static_cast<double>(seq), causal};
  return shape.forward_flops(batch);
}

std::string attention_table_csv(const std::vector<AttentionMeasurement>& attention, const ProfileHeader& h) {
  bool mask_seen[2] = {false, false};
  for (const AttentionMeasurement& a : attention) {
    if (a.batch < 1 || a.seq < 1 || a.heads < 1 || a.head_dim < 1 || !(a.forward_seconds > 0) ||
        !(a.backward_seconds > 0))
      throw std::invalid_argument("attention_table_csv: a measurement with no shape or no positive time");
    mask_seen[a.causal ? 1 : 0] = true;
  }
  if (!mask_seen[0] || !mask_seen[1])
    throw std::invalid_argument("attention_table_csv: both masks must be measured");
  std::string s;
  s += "# Written by `" + h.command + "` on " + h.date + "; backend: " + h.backend + ".\n";
  s += "# The backend's own attention op (scores stored, not a fused kernel), each point the fastest of its\n";
  s += "# batches. Rates at the FlashAttention benchmark's FLOP count: 4 * batch * seq^2 * heads * head_dim\n";
  s += "# forward (halved with the causal mask), 3.5 times that forward + backward.\n";
  s += "pass,causal,head_dim,sequence,tflops\n";
  for (const AttentionMeasurement& a : attention) {
    const double flops = a.forward_flops();
    const char* causal = a.causal ? "yes" : "no";
    s += "# batch " + std::to_string(a.batch) + ", " + std::to_string(a.heads) + " heads: forward " +
         printf_number("%.6g ms", a.forward_seconds * 1e3) + ", backward " +
         printf_number("%.6g ms", a.backward_seconds * 1e3) + "\n";
    s += std::string("forward,") + causal + "," + std::to_string(a.head_dim) + "," + std::to_string(a.seq) + "," +
         printf_number("%.9g", flops / a.forward_seconds / 1e12) + "\n";
    s += std::string("forward+backward,") + causal + "," + std::to_string(a.head_dim) + "," + std::to_string(a.seq) +
         "," + printf_number("%.9g", models::kAttentionForwardBackwardPasses * flops / (a.forward_seconds + a.backward_seconds) / 1e12) + "\n";
  }
  return s;
}

std::string calibration_csv(const Calibration& c, const CalibratedProfile& profile) {
  std::string s = "kind,m,n,k,elements,flops,bytes,seconds,rate,profile_seconds,profile_error_percent\n";
  char buf[320];
  for (const ProductMeasurement& p : c.products) {
    const double modelled = profile_seconds(profile, p);
    std::snprintf(buf, sizeof buf, "gemm,%d,%d,%d,,%.17g,%.17g,%.6e,%.6e,%.6e,%.2f\n", p.m, p.n, p.k, p.flops(),
                  p.bytes(), p.seconds, p.flop_rate(), modelled, 100.0 * (modelled - p.seconds) / p.seconds);
    s += buf;
  }
  for (const StreamMeasurement& st : c.streams) {
    const double modelled = st.bytes() / profile.memory_bandwidth + profile.launch_overhead;
    std::snprintf(buf, sizeof buf, "axpy,,,,%zu,%.17g,%.17g,%.6e,%.6e,%.6e,%.2f\n", st.count, 2.0 * double(st.count),
                  st.bytes(), st.seconds, st.bandwidth(), modelled, 100.0 * (modelled - st.seconds) / st.seconds);
    s += buf;
  }
  // The empty call is a one-element stream: its row shows that the profile charges it one launch.
  const double empty_modelled = 12.0 / profile.memory_bandwidth + profile.launch_overhead;
  std::snprintf(buf, sizeof buf, "empty_call,,,,1,2,12,%.6e,,%.6e,%.2f\n", c.empty_call_seconds, empty_modelled,
                100.0 * (empty_modelled - c.empty_call_seconds) / c.empty_call_seconds);
  s += buf;
  return s;
}

}  // namespace dtsim::sim
