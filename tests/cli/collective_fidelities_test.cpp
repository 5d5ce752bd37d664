// The three fidelities agree on multi-GPU nodes, fat-trees and a torus, not only on stars of single GPUs:
// for every allreduce algorithm, the aggregated and analytic times of `dtsim collective` stay within 2 % of
// stepwise's at every size from 16 KiB to 64 MiB. Tree, halving-doubling, the chain and channel rings are
// timed by replaying their steps on a fluid model of the platform's links (sim/collectives/schedule.hpp,
// replay_plan; fluid_replay.cpp); single rings and the hierarchical algorithm's by their hop-by-hop
// recurrence (ring_recurrence_seconds).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

using dtsim::testing::lines_of;

// size → time (µs) at one fidelity.
std::map<long long, double> times(const std::string& args, const std::string& fidelity) {
  const dtsim::testing::DtsimOutcome r =
      dtsim::testing::run_dtsim(args + " --sizes 16KiB:64MiB --format csv --fidelity " + fidelity, true);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  std::map<long long, double> out;
  const std::vector<std::string> lines = lines_of(r.output);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f;
    std::istringstream in(lines[i]);
    for (std::string field; std::getline(in, field, ',');) f.push_back(field);
    out[std::stoll(f.at(0))] = std::stod(f.at(3));
  }
  return out;
}

const std::vector<std::string> kEveryAllreduce = {"ring", "tree", "halving-doubling", "hierarchical"};

void expect_fidelities_agree(const std::string& platform, const std::vector<std::string>& algorithms,
                             double tolerance = 0.02) {
  for (const std::string& algorithm : algorithms) {
    const std::string args = "collective " + platform + " --algorithm " + algorithm;
    const std::map<long long, double> step = times(args, "stepwise");
    ASSERT_EQ(step.size(), 13u) << args;
    for (const char* fidelity : {"aggregated", "analytic"}) {
      const std::map<long long, double> other = times(args, fidelity);
      for (const auto& [size, t] : step)
        EXPECT_NEAR(other.at(size), t, tolerance * t) << args << ", " << fidelity << ", " << size << " B";
    }
  }
}

const std::string kNvSwitch = " --set cluster.intra_node_fabric=nvlink3-nvswitch";

TEST(CollectiveFidelities, AgreeOnFourHgxNodesWithOneNicEach) {
  expect_fidelities_agree("--ranks 32 --gpus-per-node 8" + kNvSwitch, kEveryAllreduce);
}

TEST(CollectiveFidelities, AgreeWithNcclsProtocolsToo) {
  expect_fidelities_agree("--ranks 32 --gpus-per-node 8 --protocol auto" + kNvSwitch, kEveryAllreduce);
}

TEST(CollectiveFidelities, AgreeOnTwoNodesWithARailPerGpu) {
  expect_fidelities_agree("--ranks 16 --gpus-per-node 8 --set cluster.nics_per_node=8 --protocol auto" + kNvSwitch,
                          kEveryAllreduce);
}

TEST(CollectiveFidelities, AgreeOnFatTrees) {
  expect_fidelities_agree("--ranks 32 --gpus-per-node 8 --topology fat-tree" + kNvSwitch, kEveryAllreduce);
  expect_fidelities_agree("--ranks 64 --gpus-per-node 8 --set cluster.nics_per_node=4 --topology fat-tree" + kNvSwitch,
                          kEveryAllreduce);
  expect_fidelities_agree("--ranks 64 --topology fat-tree", kEveryAllreduce);
}

// Routes of different latencies share links here (ranks under one leaf and across the spine), which CM02
// shares unequally: the replay must weigh each transfer by its route's latency to agree.
TEST(CollectiveFidelities, AgreeWhereLongAndShortRoutesShareALink) {
  expect_fidelities_agree("--ranks 6 --gpus-per-node 2 --topology fat-tree" + kNvSwitch, {"tree"});
}

// GPUs with two bonded NICs each, on a rail-optimized fat-tree: a GPU's network transfers leave through its
// NVLink port, which they share with its NVLink transfers, so transfers of different bandwidth factors (0.78
// and 0.96) meet on one link. SimGrid gives them equal shares and scales each rate by its factor; a replay that
// scaled the shares instead read 5 % slow at 64 MiB here.
TEST(CollectiveFidelities, AgreeWhereTransfersOfDifferentFactorsShareALink) {
  expect_fidelities_agree(
      "--ranks 32 --gpus-per-node 4 --topology fat-tree --set cluster.rail_optimized=true --set cluster.nics_per_node=8" +
          kNvSwitch,
      {"ring", "tree"});
}

TEST(CollectiveFidelities, AgreeOnATorus) {
  expect_fidelities_agree("--ranks 16 --topology torus --set cluster.torus_dims=4,4", kEveryAllreduce);
}

// Across a WAN each flow is held by the TCP window over the round trip, times the route's bandwidth factor.
TEST(CollectiveFidelities, AgreeAcrossTwoSites) {
  expect_fidelities_agree("--ranks 16 --topology two-sites --set cluster.wan_profile=wan-10g", kEveryAllreduce);
}

}  // namespace
