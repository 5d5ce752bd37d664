// From measurements of a backend to a GPU profile that runs read: the pure half of `dtsim calibrate`, kept apart
// from the clock so that it can be checked against hand-made measurements.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dtsim::sim {

struct ProductMeasurement {
  int m = 0, n = 0, k = 0;  // c(m × n) = a(m × k) · b(k × n), FP32
  double seconds = 0;       // per product
  double flops() const { return 2.0 * m * n * k; }
  double bytes() const { return 4.0 * (double(m) * k + double(k) * n + double(m) * n); }  // each operand once
  double flop_rate() const { return flops() / seconds; }
};

struct StreamMeasurement {
  size_t count = 0;    // floats of y += alpha · x
  double seconds = 0;  // per call
  double bytes() const { return 12.0 * static_cast<double>(count); }  // read x and y, write y
  double bandwidth() const { return bytes() / seconds; }
};

// The backend's attention op on `batch` sequences: forward, then backward, each per call.
struct AttentionMeasurement {
  int batch = 0, seq = 0, heads = 0, head_dim = 0;
  bool causal = false;
  double forward_seconds = 0, backward_seconds = 0;
  // The FlashAttention benchmark's count (models/workload/attention_time.hpp), which attention tables use.
  double forward_flops() const;
};

struct Calibration {
  std::vector<ProductMeasurement> products;
  std::vector<StreamMeasurement> streams;
  double empty_call_seconds = 0;
  std::vector<AttentionMeasurement> attention;  // empty: no attention table is written
};

// What a run's roofline reads. peak is the fastest product's rate, achievable the rate of the product with the
// most FLOPs (the large-product rate that kernel benchmarks quote), efficiency their ratio: so the roofline times
// a large product at the achievable rate, as a GPU profile with a cited efficiency does.
struct CalibratedProfile {
  double peak_flops = 0;
  double achievable_flops = 0;
  double efficiency = 0;
  double memory_bandwidth = 0;  // the stream over the largest vectors (beyond the caches)
  double launch_overhead = 0;   // one empty call
};

// Throws std::invalid_argument when a kind of measurement is missing or a time is not positive.
CalibratedProfile fit_profile(const Calibration& calibration);

// How a run using the profile times the product: max(FLOPs / (peak · efficiency), bytes / bandwidth) plus one
// launch, the per-layer roofline of compute_time.hpp for a single product.
double profile_seconds(const CalibratedProfile& profile, const ProductMeasurement& product);

struct ProfileHeader {
  std::string name;         // gpu.name
  std::string backend;      // e.g. "cpu (…)"
  std::string numerics;     // the numerics fingerprint's description
  std::string command;      // the command line that made it
  std::string date;         // UTC, ISO 8601
  double memory_bytes = 0;  // gpu.memory
  std::string attention_table;  // the attention table's file name beside the profile; empty: none
};

// The profile as an .ini file of the [gpu] section, each value with the comment saying where it came from.
std::string profile_ini(const CalibratedProfile& profile, const ProfileHeader& header);

// The attention measurements as a gpu.attention_table (pass,causal,head_dim,sequence,tflops): per shape, the forward
// rate and the forward + backward rate at the benchmark's FLOP count, so that a run derives the measured backward
// rate back from them. Throws std::invalid_argument for a measurement without a positive time or shape, or when
// one mask has none (a table needs both).
std::string attention_table_csv(const std::vector<AttentionMeasurement>& attention, const ProfileHeader& header);

// One row per measurement: kind, shape or count, FLOPs, bytes, measured seconds, rate, the profile's seconds and
// its error against the measurement.
std::string calibration_csv(const Calibration& calibration, const CalibratedProfile& profile);

}  // namespace dtsim::sim
