// The server's Kahan-compensated update: steps below half an ulp of x still move it.
#include <gtest/gtest.h>

#include "gpu/cpu_ops.hpp"
#include "models/federated.hpp"

namespace dtsim::models {
namespace {

float apply_small_steps(bool compensated) {
  gpu::CpuOps<float> ops;
  ServerSettings s;
  s.compensated = compensated;
  ServerAggregator<float> server(ops, 1, s);
  float x = 1.0f;
  const float delta = 1e-8f;  // half an ulp of 1.0f is 5.96e-8
  for (int r = 0; r < 1000; ++r) {
    server.begin_round();
    server.add(&delta, 1.0, 1.0, nullptr);
    server.finish(&x, nullptr);
  }
  return x;
}

TEST(FederatedServer, PlainFloatUpdatesStallBelowHalfAnUlp) { EXPECT_EQ(apply_small_steps(false), 1.0f); }

TEST(FederatedServer, CompensatedUpdatesAccumulate) {
  // 1000 steps of 1e-8 = 1e-5; x can only be a float, so within half an ulp (6e-8) of 1 + 1e-5.
  EXPECT_NEAR(apply_small_steps(true), 1.00001, 6e-8);
}

TEST(FederatedServer, CompensationLeavesLargeStepsAlone) {
  gpu::CpuOps<double> ops;
  ServerSettings s;
  s.compensated = true;
  s.lr = 0.5;
  ServerAggregator<double> server(ops, 2, s);
  std::vector<double> x{1.0, 2.0};
  const std::vector<double> d{1.0, -4.0};
  server.add(d.data(), 1.0, 1.0, nullptr);
  server.finish(x.data(), nullptr);
  EXPECT_EQ(x[0], 1.5);
  EXPECT_EQ(x[1], 0.0);
}

}  // namespace
}  // namespace dtsim::models
