// Parameter-server push and pull over sharded servers: every payload pointer reaches the right shard (or
// worker) untouched, pushes are served in arrival order, and the times follow α + max(S, W·S/k)/B.
#include <gtest/gtest.h>

#include "sim/collectives/parameter_server.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/sim/collectives_support.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

const FabricSpec kFabric{"ideal", 25e9, 1e-6, 0.0, 1.0};
constexpr double kAlpha = 2e-6;  // two 1 us links

struct Received {
  int worker, shard, receiver;   // receiver: the shard (push) or worker (pull) that got it
  int intact;                    // the pointer is the one the sender passed for this (worker, shard)
  double bytes, time;
};

// W workers push S bytes each over k shards at time 0, then pull S bytes back from them.
std::vector<Received> push_then_pull(int workers, int shards, uint64_t bytes, double* pull_start) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = testing::create_exact_engine();
    const Platform p = build_star(workers, 1e12, kFabric, shards);
    install_fabric_calibration(*engine, kFabric);
    ShardedServerChannel ps(p, shards, "ps");
    std::vector<int> gradients(workers * shards), parameters(workers * shards);
    std::vector<Received> log;
    double pushes_done = 0.0;
    for (int w = 0; w < workers; ++w)
      sg4::Actor::create("worker" + std::to_string(w), p.workers[w], [&, w] {
        const std::vector<uint64_t> sizes = ps.shard_sizes(bytes);
        std::vector<ShardPayload> parts;
        for (int s = 0; s < shards; ++s) parts.push_back({&gradients[w * shards + s], sizes[s]});
        ps.push(w, parts);
        pushes_done = std::max(pushes_done, sg4::Engine::get_clock());
        const std::vector<ShardPayload> got = ps.pull(w);
        for (int s = 0; s < shards; ++s)
          log.push_back({w, s, w, got[s].data == &parameters[w * shards + s], static_cast<double>(got[s].bytes),
                         sg4::Engine::get_clock()});
      });
    for (int s = 0; s < shards; ++s)
      sg4::Actor::create("shard" + std::to_string(s), p.servers[s], [&, s] {
        for (int i = 0; i < workers; ++i) {
          const PushArrival a = ps.receive_push(s);
          log.push_back({a.worker, a.shard, s, a.payload.data == &gradients[a.worker * shards + a.shard],
                         static_cast<double>(a.payload.bytes), sg4::Engine::get_clock()});
        }
        ps.stop_serving(s);
        // Every push has arrived; answer every worker's pull at once.
        std::vector<sg4::CommPtr> sends;
        for (int w = 0; w < workers; ++w)
          sends.push_back(ps.send_pull(s, w, {&parameters[w * shards + s], ps.shard_sizes(bytes)[s]}));
        sg4::Comm::wait_all(sends);
      });
    engine->run();
    log.push_back({-1, -1, -1, 1, static_cast<double>(ps.bytes_sent()), pushes_done});
    return dtsim::testing::to_bytes(log);
  });
  std::vector<Received> log = dtsim::testing::from_bytes<Received>(out);
  *pull_start = log.back().time;
  return log;
}

class ParameterServer : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ParameterServer, PayloadsArriveIntactAtTheRightPlaceInClosedFormTime) {
  const auto [workers, shards] = GetParam();
  const uint64_t bytes = 24'000'000;
  double push_end = 0.0;
  std::vector<Received> log = push_then_pull(workers, shards, bytes, &push_end);
  const Received totals = log.back();
  log.pop_back();

  // Each direction: α + max(S, W·S/k)/B, the busier of a worker's link (S) and a shard's (W·S/k).
  const double s = static_cast<double>(bytes);
  const double one_way = kAlpha + std::max(s, workers * s / shards) / kFabric.bandwidth;
  EXPECT_NEAR(push_end, one_way, 1e-6 * one_way);
  int pushes = 0, pulls = 0;
  for (const Received& r : log) {
    EXPECT_TRUE(r.intact) << "worker " << r.worker << " shard " << r.shard;
    EXPECT_EQ(r.bytes, s / shards);
    const bool is_push = r.time <= push_end + 1e-12;
    if (is_push) {
      ++pushes;
      EXPECT_EQ(r.receiver, r.shard) << "a push reached the wrong shard";
      EXPECT_NEAR(r.time, one_way, 1e-6 * one_way);
    } else {
      ++pulls;
      EXPECT_EQ(r.receiver, r.worker) << "a pull reached the wrong worker";
      EXPECT_NEAR(r.time, 2 * one_way, 1e-6 * one_way);
    }
  }
  EXPECT_EQ(pushes, workers * shards);
  EXPECT_EQ(pulls, workers * shards);
  EXPECT_EQ(totals.bytes, 2.0 * workers * s) << "pushed plus pulled bytes";
}

INSTANTIATE_TEST_SUITE_P(Shapes, ParameterServer,
                         ::testing::Values(std::make_tuple(1, 4), std::make_tuple(4, 4), std::make_tuple(8, 2),
                                           std::make_tuple(3, 5)),
                         [](const auto& info) {
                           return "W" + std::to_string(std::get<0>(info.param)) + "_k" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(ParameterServer, ServesPushesInArrivalOrderNotSendingOrder) {
  const std::string out = dtsim::testing::run_in_child([] {
    auto engine = testing::create_exact_engine();
    const Platform p = build_star(2, 1e12, kFabric, 1);
    install_fabric_calibration(*engine, kFabric);
    ShardedServerChannel ps(p, 1, "order");
    int a = 0, b = 0;
    // Worker 0 starts first with 8 MB; worker 1 starts second with 1 MB and, sharing the shard's link,
    // finishes first.
    sg4::Actor::create("w0", p.workers[0], [&] { ps.push(0, {{&a, 8'000'000}}); });
    sg4::Actor::create("w1", p.workers[1], [&] { ps.push(1, {{&b, 1'000'000}}); });
    std::vector<double> order;
    sg4::Actor::create("shard", p.servers[0], [&] {
      for (int i = 0; i < 2; ++i) {
        const PushArrival got = ps.receive_push(0);
        order.push_back(got.worker);
        order.push_back(sg4::Engine::get_clock());
      }
      ps.stop_serving(0);
    });
    engine->run();
    return dtsim::testing::to_bytes(order);
  });
  const std::vector<double> order = dtsim::testing::from_bytes<double>(out);
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0], 1.0);
  EXPECT_NEAR(order[1], kAlpha + 2 * 1e6 / 25e9, 1e-9);        // both flows at B/2 until the small one ends
  EXPECT_EQ(order[2], 0.0);
  EXPECT_NEAR(order[3], kAlpha + (8e6 + 1e6) / 25e9, 1e-9);  // the shard's link never idles
}

}  // namespace
}  // namespace dtsim::sim
