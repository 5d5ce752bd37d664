#include "sim/strategies/federated/federated_secagg.hpp"

namespace dtsim::sim {

int SecureAggregationCost::headroom_bits(int n) const {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

SecureAggregationBytes SecureAggregationCost::bytes(int n, int survivors, uint64_t elements, int vectors) const {
  const uint64_t k = c_.key_bytes, id = c_.id_bytes, peers = n > 0 ? static_cast<uint64_t>(n - 1) : 0;
  const uint64_t share_pair = 2 * k + 2 * id + c_.aead_overhead_bytes;
  SecureAggregationBytes b;
  b.setup_up = 2 * k + peers * share_pair;
  b.setup_down = static_cast<uint64_t>(n) * (2 * k + id) + peers * share_pair;
  const uint64_t headroom_bytes = (static_cast<uint64_t>(headroom_bits(n)) + 7) / 8;
  b.masked_extra = static_cast<uint64_t>(vectors) * elements * headroom_bytes;
  b.survivors_down = static_cast<uint64_t>(survivors) * id;
  b.unmask_up = peers * (k + id);
  return b;
}

double SecureAggregationCost::client_seconds(int n, uint64_t elements, int vectors) const {
  const double peers = n > 0 ? n - 1 : 0;
  return 2.0 * peers * c_.key_agreement_time + 2.0 * n * threshold(n) * c_.field_op_time +
         static_cast<double>(vectors) * static_cast<double>(elements) * n / c_.mask_rate;
}

double SecureAggregationCost::server_seconds(int n, int survivors, uint64_t elements, int vectors) const {
  const double t = threshold(n), s = survivors, d = n - survivors;
  return n * t * t * c_.field_op_time + d * s * c_.key_agreement_time +
         static_cast<double>(vectors) * static_cast<double>(elements) * (s + d * s) / c_.mask_rate;
}

}  // namespace dtsim::sim
