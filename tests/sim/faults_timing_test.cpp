// Failures happen at their simulated times: work running on a failed host or over a failed link fails at
// that instant, and the host or link works with its usual timing once it is back. Also documents what
// SimGrid 3.32 raises in each case. Each simulation runs in a forked child.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "sim/world/heterogeneity.hpp"
#include "sim/world/build_platform.hpp"
#include "tests/subprocess.hpp"

namespace dtsim::sim {
namespace {

constexpr double kSpeed = 1e12;
constexpr double kBandwidth = 1e9;
constexpr double kLinkLatency = 1e-6;
constexpr double kRouteLatency = 2 * kLinkLatency;
const FabricSpec kFabric{"test", kBandwidth, kLinkLatency, 0.0, 1.0};

constexpr double kDown = 1.0;  // every failure below: down at 1 s, up at 2 s
constexpr double kUp = 2.0;
constexpr double kFailed = -1.0;  // recorded when an activity completed although it should have failed

double now() { return sg4::Engine::get_clock(); }

using Spawn = std::function<void(const Platform&, HeterogeneityRuntime&, std::vector<double>&)>;

// A star of 4 workers with `events`; `spawn` creates actors that record times into the result, to which the
// final clock is appended.
std::vector<double> simulate(const std::vector<FaultEvent>& events, const Spawn& spawn) {
  return dtsim::testing::from_bytes<double>(dtsim::testing::run_in_child([&] {
    auto engine = create_engine({NetworkModel::Cm02, false});
    const Platform p = build_star(4, kSpeed, kFabric);
    RunConfig cfg;
    cfg.workers = 4;
    cfg.heterogeneity.faults.events = events;
    HeterogeneityRuntime runtime = apply_heterogeneity(*engine, p, cfg);
    std::vector<double> out;
    spawn(p, runtime, out);
    engine->run();
    out.push_back(now());
    return dtsim::testing::to_bytes(out);
  }));
}

TEST(Faults, TransferOverALinkThatGoesDownFailsThenAndWorksAfterItIsBack) {
  const double bytes = 5e9;  // 5 s of transfer: still running at 1 s
  const auto r = simulate({{FaultTarget::Link, 1, kDown, kUp}},
                          [&](const Platform& p, HeterogeneityRuntime&, std::vector<double>& out) {
                            out.assign(5, kFailed);
                            // Host-to-host transfer crossing worker 1's link (down direction).
                            sg4::Actor::create("sendto", p.workers[3], [&] {
                              try {
                                sg4::Comm::sendto(p.workers[0], p.workers[1], static_cast<uint64_t>(bytes));
                              } catch (const simgrid::NetworkFailureException&) {
                                out[0] = now();
                              }
                              // Started while the link is down: fails at once.
                              sg4::this_actor::sleep_until(1.5);
                              try {
                                sg4::Comm::sendto(p.workers[0], p.workers[1], 1000);
                              } catch (const simgrid::NetworkFailureException&) {
                                out[1] = now();
                              }
                              // Once it is back: latency + S/B.
                              sg4::this_actor::sleep_until(2.5);
                              sg4::Comm::sendto(p.workers[0], p.workers[1], static_cast<uint64_t>(1e9));
                              out[2] = now() - 2.5;
                            });
                            // A mailbox transfer worker1 → worker2 (up direction of the same link): both ends fail.
                            static int token = 0;
                            sg4::Actor::create("put", p.workers[1], [&] {
                              try {
                                sg4::Mailbox::by_name("m")->put(&token, static_cast<uint64_t>(bytes));
                              } catch (const simgrid::NetworkFailureException&) {
                                out[3] = now();
                              }
                            });
                            sg4::Actor::create("get", p.workers[2], [&] {
                              try {
                                sg4::Mailbox::by_name("m")->get<int>();
                              } catch (const simgrid::NetworkFailureException&) {
                                out[4] = now();
                              }
                            });
                          });
  EXPECT_DOUBLE_EQ(r[0], kDown);
  EXPECT_DOUBLE_EQ(r[1], 1.5);
  EXPECT_NEAR(r[2], kRouteLatency + 1e9 / kBandwidth, 1e-9 * r[2]);
  EXPECT_DOUBLE_EQ(r[3], kDown);
  EXPECT_DOUBLE_EQ(r[4], kDown);
}

TEST(Faults, ComputationOnAHostThatGoesDownFailsThenAndWorksAfterItIsBack) {
  const double flops = 5 * kSpeed;
  const auto r = simulate(
      {{FaultTarget::Worker, 1, kDown, kUp}}, [&](const Platform& p, HeterogeneityRuntime&, std::vector<double>& out) {
        out.assign(7, kFailed);
        // An actor on the failed host is killed (ForcefulKillException, not HostFailureException); its on_exit
        // callbacks see failed = true.
        sg4::Actor::create("local", p.workers[1], [&] {
          sg4::this_actor::on_exit([&](bool failed) {
            out[0] = now();
            out[1] = failed ? 1.0 : 0.0;
          });
          sg4::this_actor::execute(flops);
          out[6] = now();  // never reached
        });
        // An execution placed on the failed host by an actor elsewhere raises HostFailureException.
        sg4::Actor::create("remote", p.workers[0], [&] {
          try {
            sg4::this_actor::exec_init(flops)->set_host(p.workers[1])->wait();
          } catch (const simgrid::HostFailureException&) {
            out[2] = now();
          }
          // After the host is back: the usual F / speed, remotely and for a new actor started there.
          sg4::this_actor::sleep_until(2.5);
          sg4::this_actor::exec_init(kSpeed)->set_host(p.workers[1])->wait();
          out[3] = now() - 2.5;
          sg4::Actor::create("fresh", p.workers[1], [&] {
            const double start = now();
            sg4::this_actor::execute(2 * kSpeed);
            out[4] = now() - start;
          });
        });
        // A transfer with an actor on the failed host fails for its peer.
        static int token = 0;
        sg4::Actor::create("peer", p.workers[2], [&] {
          try {
            sg4::Mailbox::by_name("to-dead")->get<int>();
          } catch (const simgrid::NetworkFailureException&) {
            out[5] = now();
          }
        });
        sg4::Actor::create("doomed-sender", p.workers[1],
                           [] { sg4::Mailbox::by_name("to-dead")->put(&token, static_cast<uint64_t>(5e9)); });
      });
  EXPECT_DOUBLE_EQ(r[0], kDown);
  EXPECT_EQ(r[1], 1.0);
  EXPECT_DOUBLE_EQ(r[2], kDown);
  EXPECT_NEAR(r[3], 1.0, 1e-12);
  EXPECT_NEAR(r[4], 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(r[5], kDown);
  EXPECT_EQ(r[6], kFailed);
}

TEST(Faults, NodeFailureTakesItsWorkersDownAndListenersHearEveryTransition) {
  // On the star every worker is its own node; node 2 is worker 2.
  const auto r = simulate(
      {{FaultTarget::Node, 2, kDown, kUp}, {FaultTarget::Link, 0, 0.5, 0.75}},
      [&](const Platform& p, HeterogeneityRuntime& runtime, std::vector<double>& out) {
        runtime.on_fault([&out, &p](const FaultTransition& t) {
          // time, worker, link?, down?, and whether SimGrid already switched it
          const bool on = t.link ? link_directions(p.worker_links[t.worker])[0]->is_on() : p.workers[t.worker]->is_on();
          out.insert(out.end(), {now(), t.time, double(t.worker), double(t.link), double(t.down), double(on)});
        });
        sg4::Actor::create("clock", p.workers[3], [] { sg4::this_actor::sleep_for(3.0); });
      });
  ASSERT_EQ(r.size(), 4u * 6 + 1);
  const double expected[4][6] = {
      {0.5, 0.5, 0, 1, 1, 0}, {0.75, 0.75, 0, 1, 0, 1}, {1, 1, 2, 0, 1, 0}, {2, 2, 2, 0, 0, 1}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_DOUBLE_EQ(r[6 * i + j], expected[i][j]) << i << "," << j;
  EXPECT_DOUBLE_EQ(r.back(), 3.0);
}

TEST(Faults, FailureAtTimeZeroKillsTheActorsAtTheStart) {
  const auto r = simulate({{FaultTarget::Worker, 0, 0.0, kNever}},
                          [](const Platform& p, HeterogeneityRuntime&, std::vector<double>& out) {
                            out.assign(1, kFailed);
                            sg4::Actor::create("w0", p.workers[0], [&out] {
                              sg4::this_actor::on_exit([&out](bool) { out[0] = now(); });
                              sg4::this_actor::execute(kSpeed);
                            });
                            sg4::Actor::create("w1", p.workers[1], [] { sg4::this_actor::execute(kSpeed); });
                          });
  EXPECT_EQ(r[0], 0.0);
  EXPECT_DOUBLE_EQ(r.back(), 1.0);
}

TEST(Faults, PendingFailuresDoNotExtendTheRun) {
  // The work ends at 1.5 s; a failure at 10 s (and its recovery at 20 s) must not move the clock there.
  const auto r = simulate({{FaultTarget::Worker, 1, 10.0, 20.0}, {FaultTarget::Link, 2, 1.0, 20.0}},
                          [](const Platform& p, HeterogeneityRuntime&, std::vector<double>&) {
                            sg4::Actor::create("work", p.workers[0], [] { sg4::this_actor::execute(1.5 * kSpeed); });
                          });
  EXPECT_DOUBLE_EQ(r.back(), 1.5);
}

TEST(Faults, RestartableActorStartsAgainWhenItsHostReturns) {
  // The only actor dies at 1 s; it is restarted from scratch at 2 s (the simulation waits for it) and its
  // 1.5 s of work ends at 3.5 s.
  const auto r = simulate({{FaultTarget::Worker, 1, kDown, kUp}},
                          [](const Platform& p, HeterogeneityRuntime& runtime, std::vector<double>& out) {
                            static std::vector<double>* starts = nullptr;
                            starts = &out;
                            const sg4::ActorPtr a = sg4::Actor::create("restartable", p.workers[1], [] {
                              starts->push_back(now());
                              sg4::this_actor::execute(1.5 * kSpeed);
                              starts->push_back(now());
                            });
                            runtime.restart_when_host_returns(a);
                          });
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_DOUBLE_EQ(r[1], kUp);
  EXPECT_DOUBLE_EQ(r[2], kUp + 1.5);
  EXPECT_DOUBLE_EQ(r[3], kUp + 1.5);
}

TEST(Faults, RestartableActorThatFinishedDoesNotHoldTheRun) {
  // It ends at 0.5 s, before its host fails at 1 s; the other work ends at 1.5 s, and the host's return at
  // 10 s must not be waited for.
  const auto r = simulate({{FaultTarget::Worker, 1, kDown, 10.0}},
                          [](const Platform& p, HeterogeneityRuntime& runtime, std::vector<double>&) {
                            runtime.restart_when_host_returns(sg4::Actor::create(
                                "quick", p.workers[1], [] { sg4::this_actor::execute(0.5 * kSpeed); }));
                            sg4::Actor::create("work", p.workers[0], [] { sg4::this_actor::execute(1.5 * kSpeed); });
                          });
  EXPECT_DOUBLE_EQ(r.back(), 1.5);
}

}  // namespace
}  // namespace dtsim::sim
