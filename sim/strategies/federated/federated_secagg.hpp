// What secure aggregation costs (Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving
// Machine Learning", CCS 2017), as bytes on the network and time on the hosts. The masks cancel in the sum,
// so the aggregate the server obtains is exactly the plain one: only time and traffic change.
//
// The protocol (honest-but-curious variant, no consistency-check round), for one round with n clients that
// start it, s of which have their masked input aggregated and d = n − s that drop out, m model elements,
// V vectors per client (2 for SCAFFOLD: Δy and Δc), and the constants of SecureAggregationConfig
// (k = key_bytes, I = id_bytes, A = aead_overhead_bytes, R = mask_rate, T_ka = key_agreement_time,
// T_f = field_op_time), threshold t = ⌊n/2⌋ + 1 and h = ⌈log2 n⌉ bits of headroom:
//
//   0 AdvertiseKeys     client → server 2k (two public keys);     server → client n(2k + I) (everyone's keys)
//   1 ShareKeys         client → server (n−1)(2k + 2I + A)  (an encrypted pair of Shamir shares per peer);
//                       server → client (n−1)(2k + 2I + A)  (the shares addressed to it)
//   2 MaskedInput       client → server the update itself plus V·m·⌈h/8⌉ bytes, so that the sum of n masked
//                       values cannot wrap around the modulus; server → client s·I (who survived)
//   3 Unmasking         client → server (n−1)(k + I)  (a share of b_v for every survivor, of s_v for every dropout)
//
// Client time:  2(n−1)·T_ka (agreements for the share keys and the mask seeds) + 2·n·t·T_f (Shamir shares of
//               two secrets, n points of a degree t−1 polynomial) + V·m·n / R (n−1 pairwise masks and a self mask)
// Server time:  n·t²·T_f (Lagrange reconstruction of n secrets from t shares) + d·s·T_ka (the dropouts'
//               pairwise seeds) + V·m·(s + d·s) / R (one self mask per survivor, one pairwise mask per
//               (dropout, survivor) pair)
//
// This is the paper's asymptotic shape: client communication O(n + m), server communication O(n² + mn),
// client computation O(n² + mn), server computation O(mn²) (when d grows with n).
#pragma once

#include <cstdint>

#include "sim/config/fl_config.hpp"

namespace dtsim::sim {

struct SecureAggregationBytes {
  uint64_t setup_down = 0;   // phases 0 and 1, server → client, before local training
  uint64_t setup_up = 0;     // phases 0 and 1, client → server, before local training
  uint64_t masked_extra = 0;  // phase 2: added to the client's upload
  uint64_t survivors_down = 0;  // phase 2: server → each survivor
  uint64_t unmask_up = 0;       // phase 3: each survivor → server

  uint64_t per_client_up() const { return setup_up + masked_extra + unmask_up; }
};

class SecureAggregationCost {
 public:
  explicit SecureAggregationCost(const SecureAggregationConfig& config) : c_(config) {}

  int threshold(int n) const { return n / 2 + 1; }
  int headroom_bits(int n) const;  // ⌈log2 n⌉

  // Bytes of one client of an n-client instance with `survivors` survivors, for `vectors` vectors of
  // `elements` elements.
  SecureAggregationBytes bytes(int n, int survivors, uint64_t elements, int vectors) const;
  double client_seconds(int n, uint64_t elements, int vectors) const;
  double server_seconds(int n, int survivors, uint64_t elements, int vectors) const;

 private:
  SecureAggregationConfig c_;
};

}  // namespace dtsim::sim
