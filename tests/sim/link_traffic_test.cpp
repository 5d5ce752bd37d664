// links.csv's ledger on a star: transfers counted on every link of their route, bytes injected equal to the
// bytes sent, a ring allreduce's closed-form bytes on every NIC at every fidelity, and utilisation from the
// windows against hand-computed values.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "sim/world/link_traffic.hpp"
#include "tests/sim/collectives_support.hpp"

namespace dtsim::sim {
namespace {

using testing::create_exact_engine;
using testing::hdr_fabric;

struct LinkFigures {
  std::string link;
  double bytes = 0, injected = 0, transfers = 0, mean = 0, peak = 0, defined = 0;
};

std::vector<LinkFigures> figures(const LinkTraffic& t, double run_time) {
  std::vector<LinkFigures> out;
  for (const LinkTraffic::LinkRow& r : t.rows(run_time))
    out.push_back({r.link, static_cast<double>(r.bytes), static_cast<double>(r.injected_bytes),
                   static_cast<double>(r.transfers), r.mean_utilisation, r.peak_utilisation,
                   r.utilisation_defined ? 1.0 : 0.0});
  return out;
}

// A serialisable row (link names travel separately: from_bytes wants trivially copyable values).
struct Row {
  double bytes, injected, transfers, mean, peak, defined;
  char link[64];
};

std::vector<Row> to_rows(const std::vector<LinkFigures>& f) {
  std::vector<Row> rows;
  for (const LinkFigures& x : f) {
    Row r{x.bytes, x.injected, x.transfers, x.mean, x.peak, x.defined, {}};
    x.link.copy(r.link, sizeof r.link - 1);
    rows.push_back(r);
  }
  return rows;
}

std::map<std::string, Row> by_link(const std::vector<Row>& rows) {
  std::map<std::string, Row> m;
  for (const Row& r : rows) m[r.link] = r;
  return m;
}

// One ring allreduce of `bytes` over `ranks` workers of a star, with a ledger active.
struct RingOutcome {
  std::vector<Row> rows;
  double bytes_sent = 0.0;
};

RingOutcome ring_allreduce(Fidelity fidelity, int ranks, uint64_t bytes) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_exact_engine();
    const Platform p = build_star(ranks, 1e12, hdr_fabric());
    install_fabric_calibration(*engine, hdr_fabric());
    CollectiveOptions options;
    options.bandwidth_efficiency = hdr_fabric().efficiency;
    auto collective = make_collective(CollectiveKind::Allreduce, Algorithm::Ring, fidelity, p, "ring", options);
    LinkTraffic traffic;
    const LinkTraffic::Scope scope(&traffic);
    for (int r = 0; r < ranks; ++r)
      sg4::Actor::create("rank" + std::to_string(r), p.workers[r], [&, r] { collective->run(r, bytes); });
    engine->run();
    std::vector<Row> rows = to_rows(figures(traffic, sg4::Engine::get_clock()));
    rows.push_back(Row{static_cast<double>(collective->bytes_sent()), 0, 0, 0, 0, 0, "(bytes_sent)"});
    return dtsim::testing::to_bytes(rows);
  });
  std::vector<Row> rows = dtsim::testing::from_bytes<Row>(out);
  RingOutcome o;
  o.bytes_sent = rows.back().bytes;
  rows.pop_back();
  o.rows = rows;
  return o;
}

class RingOnEveryFidelity : public ::testing::TestWithParam<Fidelity> {};

TEST_P(RingOnEveryFidelity, EachNicCarriesTheRingsClosedFormBytes) {
  const int n = 4;
  const uint64_t m = 4u << 20;  // divisible by n: every chunk is M/n
  const RingOutcome o = ring_allreduce(GetParam(), n, m);
  const auto links = by_link(o.rows);
  // A ring allreduce sends 2(n−1) chunks of M/n from every rank to the next: out through its NIC's up
  // direction, in through the next one's down direction.
  const double per_rank = 2.0 * (n - 1) * static_cast<double>(m) / n;
  double injected = 0.0;
  for (int w = 0; w < n; ++w) {
    const std::string up = "nic-worker" + std::to_string(w) + "_UP", down = "nic-worker" + std::to_string(w) + "_DOWN";
    ASSERT_TRUE(links.count(up)) << up;
    ASSERT_TRUE(links.count(down)) << down;
    EXPECT_EQ(links.at(up).bytes, per_rank) << up;
    EXPECT_EQ(links.at(up).injected, per_rank) << up;
    EXPECT_EQ(links.at(down).bytes, per_rank) << down;
    EXPECT_EQ(links.at(down).injected, 0.0) << down;
    // Stepwise, every step is a transfer of its own; aggregated and analytic calls move each peer's total at once.
    EXPECT_EQ(links.at(up).transfers, GetParam() == Fidelity::Stepwise ? 2.0 * (n - 1) : 1.0) << up;
    EXPECT_GT(links.at(up).mean, 0.0);
    EXPECT_LE(links.at(up).mean, links.at(up).peak + 1e-12);
    injected += links.at(up).injected;
  }
  EXPECT_EQ(o.rows.size(), 2u * n) << "a star route is the sender's up and the receiver's down direction";
  EXPECT_EQ(injected, o.bytes_sent) << "the bytes that left the hosts are the bytes the collective sent";
}

INSTANTIATE_TEST_SUITE_P(Fidelities, RingOnEveryFidelity,
                         ::testing::Values(Fidelity::Stepwise, Fidelity::Aggregated, Fidelity::Analytic));

// Transfers with chosen times on a two-worker star, the ledger's figures out.
std::vector<Row> ledger_of(const std::vector<std::array<double, 4>>& transfers, double run_time,
                           double bandwidth = 1e9) {
  const std::string out = dtsim::testing::run_in_child([&] {
    auto engine = create_exact_engine();
    FabricSpec fabric = hdr_fabric();
    fabric.bandwidth = bandwidth;
    const Platform p = build_star(2, 1e12, fabric);
    LinkTraffic traffic;
    for (const auto& [payload, wire, start, end] : transfers)
      traffic.record(p.workers[0], p.workers[1], static_cast<uint64_t>(payload), wire, start, end);
    std::vector<Row> rows = to_rows(figures(traffic, run_time));
    // The windows' utilisation, summed over time, gives the wire bytes back.
    double busy = 0.0;
    for (const LinkTraffic::Series& s : traffic.busiest_series(1))
      busy = std::accumulate(s.utilisation.begin(), s.utilisation.end(), 0.0) * bandwidth * traffic.window_s();
    rows.push_back(Row{busy, traffic.window_s(), static_cast<double>(traffic.injected_bytes()), 0, 0, 0, "(series)"});
    return dtsim::testing::to_bytes(rows);
  });
  return dtsim::testing::from_bytes<Row>(out);
}

TEST(LinkTraffic, ATransferAtFullRateIsFullyBusyWhileItLasts) {
  // 1 MB at 1 GB/s takes 1 ms; the run lasts 2 ms: busy half the run, fully busy at its peak.
  const std::vector<Row> rows = ledger_of({{1e6, 1e6, 0.0, 1e-3}}, 2e-3);
  const auto links = by_link(rows);
  const Row& up = links.at("nic-worker0_UP");
  EXPECT_DOUBLE_EQ(up.mean, 0.5);
  EXPECT_NEAR(up.peak, 1.0, 1e-9);
  EXPECT_EQ(up.bytes, 1e6);
  EXPECT_NEAR(links.at("(series)").bytes, 1e6, 1e-6) << "the windows hold every wire byte";
  EXPECT_EQ(links.at("(series)").transfers, 1e6) << "injected bytes";
}

TEST(LinkTraffic, WireBytesSetTheUtilisationAndPayloadTheBytes) {
  // A protocol that carries 1 payload byte in 2 wire bytes: the link is as busy as the wire bytes say.
  const auto links = by_link(ledger_of({{5e5, 1e6, 0.0, 1e-3}}, 1e-3));
  EXPECT_EQ(links.at("nic-worker0_UP").bytes, 5e5);
  EXPECT_NEAR(links.at("nic-worker0_UP").mean, 1.0, 1e-12);
}

TEST(LinkTraffic, WideningTheWindowsKeepsEveryByte) {
  // Transfers spread over ten seconds force the 1 µs windows to widen about 2^15 times; none is lost.
  std::vector<std::array<double, 4>> transfers;
  double wire = 0.0;
  for (int i = 0; i < 100; ++i) {
    const double start = 0.1 * i;
    transfers.push_back({1e5, 1e5 + i, start, start + 3e-5 * (i % 7)});
    wire += 1e5 + i;
  }
  const auto links = by_link(ledger_of(transfers, 10.0));
  EXPECT_NEAR(links.at("(series)").bytes, wire, 1e-6 * wire);
  EXPECT_GE(links.at("(series)").injected * 512, 10.0) << "the windows cover the run";
  EXPECT_LT(links.at("(series)").injected * 256, 10.0) << "and are no wider than needed";
  EXPECT_EQ(links.at("nic-worker0_UP").transfers, 100.0);
  EXPECT_NEAR(links.at("nic-worker0_UP").mean, wire / (1e9 * 10.0), 1e-15);
}

TEST(LinkTraffic, OverlappingTransfersAddUpInTheirWindows) {
  // Two transfers at half rate over the same millisecond: together the link is fully busy.
  const auto links = by_link(ledger_of({{5e5, 5e5, 0.0, 1e-3}, {5e5, 5e5, 0.0, 1e-3}}, 1e-3));
  EXPECT_NEAR(links.at("nic-worker0_UP").peak, 1.0, 1e-9);
  EXPECT_EQ(links.at("nic-worker0_UP").transfers, 2.0);
}

TEST(LinkTraffic, CsvHasAHeaderAndOneRowPerLinkBusiestFirst) {
  const std::string csv = dtsim::testing::run_in_child([] {
    auto engine = create_exact_engine();
    const Platform p = build_star(3, 1e12, hdr_fabric());
    LinkTraffic traffic;
    traffic.record(p.workers[0], p.workers[1], 100, 100.0, 0.0, 1e-6);
    traffic.record(p.workers[2], p.workers[1], 300, 300.0, 0.0, 1e-6);
    return traffic.csv(1e-6);
  });
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << csv;
  EXPECT_EQ(lines[0],
            "link,sharing,bandwidth_Bps,transfers,bytes,injected_bytes,wire_bytes,mean_utilisation,peak_utilisation,"
            "peak_window_s");
  EXPECT_EQ(lines[1].rfind("nic-worker1_DOWN,shared,", 0), 0u) << "400 bytes came in through worker 1's NIC";
  EXPECT_NE(lines[1].find(",2,400,0,400,"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].rfind("nic-worker2_UP,", 0), 0u);
  EXPECT_EQ(lines[3].rfind("nic-worker0_UP,", 0), 0u);
}

TEST(LinkTraffic, NothingIsRecordedWithoutAnActiveLedger) {
  EXPECT_EQ(LinkTraffic::active(), nullptr);
  LinkTraffic a, b;
  {
    const LinkTraffic::Scope outer(&a);
    EXPECT_EQ(LinkTraffic::active(), &a);
    {
      const LinkTraffic::Scope inner(&b);
      EXPECT_EQ(LinkTraffic::active(), &b);
    }
    EXPECT_EQ(LinkTraffic::active(), &a);
  }
  EXPECT_EQ(LinkTraffic::active(), nullptr);
}

}  // namespace
}  // namespace dtsim::sim
