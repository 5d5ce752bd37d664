// `dtsim collective` through the executable: the nccl-tests columns, the bus-bandwidth factor of every
// collective, and one-line errors with exit status 2 for bad flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

Outcome run_dtsim(const std::string& args) {
  const dtsim::testing::DtsimOutcome r = dtsim::testing::run_dtsim(args, /*separate_stderr=*/true);
  return {r.exit_code, r.output, r.err};
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

struct Row {
  double size, count, time_us, algbw, busbw, wall, model_us;
  std::string type;
};

std::vector<Row> rows(const std::string& text) {
  std::vector<Row> out;
  for (const std::string& line : lines(text)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    Row r;
    in >> r.size >> r.count >> r.type >> r.time_us >> r.algbw >> r.busbw >> r.wall >> r.model_us;
    if (in) out.push_back(r);
  }
  return out;
}

// --sizes as a list: single sizes and ranges, comma-separated, run in the order given.
TEST(CollectiveCommand, SizesCanBeAListOfSizesAndRanges) {
  const Outcome o = run_dtsim("collective --ranks 4 --sizes 64KiB,8B,1MiB:4MiB");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::vector<Row> r = rows(o.out);
  ASSERT_EQ(r.size(), 5u) << o.out;
  const std::vector<double> expected = {65536, 8, 1 << 20, 2 << 20, 4 << 20};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].size, expected[i]) << i;
    EXPECT_NEAR(r[i].time_us, r[i].model_us, 0.011) << "each size timed as alone: " << r[i].size;
  }
}

// Without the protocol model the table says that small sizes are lower bounds, and how to add NCCL's latencies.
TEST(CollectiveCommand, TheTableNotesWhenNoProtocolIsCharged) {
  const std::string note = "# protocol none: NCCL's latencies per call and per hop are not charged";
  const Outcome none = run_dtsim("collective --ranks 2 --sizes 8B");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find(note), std::string::npos) << none.out;
  const Outcome with = run_dtsim("collective --ranks 2 --sizes 8B --protocol auto");
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(with.out.find("# protocol none"), std::string::npos) << with.out;
  // NCCL's ring LL between two single-GPU nodes: 6.6 µs per call + 2 steps at the tree's network hop of 5.0 µs.
  ASSERT_EQ(rows(with.out).size(), 1u);
  EXPECT_NEAR(rows(with.out)[0].time_us, 16.6, 0.01) << with.out;
  EXPECT_LT(rows(none.out)[0].time_us, 5.0) << "the fabric's latency only";
}

TEST(CollectiveCommand, PrintsTheNcclTestsColumns) {
  const Outcome o = run_dtsim("collective --ranks 4 --sizes 1MiB:8MiB");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  bool header = false;
  for (const std::string& line : lines(o.out))
    if (line.find("size") != std::string::npos && line.find("count") != std::string::npos &&
        line.find("type") != std::string::npos && line.find("time(us)") != std::string::npos &&
        line.find("algbw(GB/s)") != std::string::npos && line.find("busbw(GB/s)") != std::string::npos &&
        line.find("wall(s)") != std::string::npos)
      header = true;
  EXPECT_TRUE(header) << o.out;
  const std::vector<Row> r = rows(o.out);
  ASSERT_EQ(r.size(), 4u) << o.out;
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].size, static_cast<double>(1 << 20) * (1 << i)) << "sizes double";
    EXPECT_EQ(r[i].count, r[i].size / 4);
    EXPECT_EQ(r[i].type, "float");
    EXPECT_NEAR(r[i].algbw, r[i].size / (r[i].time_us * 1e3), 2e-3);
    EXPECT_NEAR(r[i].time_us, r[i].model_us, 0.011) << "stepwise ring on a star is the closed form";
    EXPECT_GE(r[i].wall, 0.0);
  }
}

TEST(CollectiveCommand, BusBandwidthFactorsAsNcclTestsDefinesThem) {
  const std::vector<std::pair<std::string, double>> ops = {
      {"allreduce", 2.0 * 3 / 4}, {"reduce_scatter", 3.0 / 4}, {"all_gather", 3.0 / 4}, {"broadcast", 1.0}, {"reduce", 1.0}};
  for (const auto& [op, factor] : ops) {
    const Outcome o = run_dtsim("collective --ranks 4 --sizes 64MiB --op " + op);
    ASSERT_EQ(o.exit_code, 0) << op << ": " << o.err;
    const std::vector<Row> r = rows(o.out);
    ASSERT_EQ(r.size(), 1u) << o.out;
    EXPECT_NEAR(r[0].busbw / r[0].algbw, factor, 2e-3) << op;
  }
}

// All-to-all, which the default ring does not implement, runs `direct` without --algorithm and with it
// (training's rule that the algorithm implement allreduce is not the command's): each rank sends N - 1
// blocks of S/N through its one port, so at 64 MiB, where the latency is under 0.1 %, the time is
// (N - 1)/N * S over the port's 25 GB/s at InfiniBand HDR's efficiency 0.96.
TEST(CollectiveCommand, AllToAllRunsDirectAtItsClosedForm) {
  for (const std::string flag : {"", " --algorithm direct", " --set collective.algorithm=direct"}) {
    const Outcome o = run_dtsim("collective --ranks 4 --op alltoall --sizes 64MiB --profile ib-hdr-200" + flag);
    ASSERT_EQ(o.exit_code, 0) << flag << ": " << o.err;
    EXPECT_NE(o.out.find("direct alltoall over 4 ranks"), std::string::npos) << o.out;
    const std::vector<Row> r = rows(o.out);
    ASSERT_EQ(r.size(), 1u) << o.out;
    const double bytes = 64.0 * (1 << 20);
    const double closed_form_us = 0.75 * bytes / (25e9 * 0.96) * 1e6;
    EXPECT_NEAR(r[0].time_us / closed_form_us, 1.0, 2e-3) << flag << ": " << r[0].time_us << " us";
    EXPECT_NEAR(r[0].busbw / r[0].algbw, 0.75, 2e-3);
  }
}

TEST(CollectiveCommand, FlagsReachTheScenario) {
  const Outcome o = run_dtsim(
      "collective --ranks 6 --algorithm tree --fidelity analytic --sizes 8B --set fabric.bandwidth=100GB/s");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("tree allreduce over 6 ranks, analytic"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("100 GB/s per port"), std::string::npos) << o.out;
}

TEST(CollectiveCommand, HelpExitsZero) {
  const Outcome o = run_dtsim("collective --help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("--sizes"), std::string::npos);
}

TEST(CollectiveCommand, BadFlagsAreOneLineErrorsWithExitTwo) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--ranks 0", "--ranks"},
      {"--ranks many", "--ranks"},
      {"--op allgather", "--op"},
      {"--algorithm bogus", "--algorithm"},
      {"--fidelity exact", "--fidelity"},
      {"--sizes 1GB:8B", "--sizes"},
      {"--sizes 8B:1XB", "--sizes"},
      {"--sizes 1.5B", "--sizes"},
      {"--sizes 1B:16B", "'1B:16B' starts at 1 B, not a whole number of 4-byte floats"},
      {"--sizes 6B", "use a multiple of 4 B"},
      {"--sizes 8B:16B:32B", "has more than one ':'"},
      {"--sizes 8B,,16B", "'8B,,16B' has an empty item"},
      {"--sizes 8B:32B,16B", "gives 16 B twice"},
      {"--sizes 8B,6B", "use a multiple of 4 B"},
      {"--set gpu.compute_capability=0.5", "gpu.compute_capability: must be 0 (not known) or a CUDA compute capability"},
      {"--tuner best", "--tuner"},
      {"--algorithm tree --op broadcast", "--algorithm"},
      {"--profile no-such-fabric", "fabric.profile"},
      {"--set collective.nope=1", "collective.nope"},
      {"--ranks 4 --set cluster.workers=8",
       "cluster.workers: is set twice on the command line (by --ranks = '4' and --set = '8')"},
      {"--set fabric.bandwidth=50GB/s --set fabric.bandwidth=10GB/s", "fabric.bandwidth: is set twice on the command line"},
      {"--bogus 1", "bogus"},
      {"extra", "extra"},
  };
  for (const auto& [args, mention] : bad) {
    const bool sized = args.find("--sizes") != std::string::npos;
    const Outcome o = run_dtsim("collective " + std::string(sized ? "" : "--sizes 8B ") + args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.out << o.err;
    const std::vector<std::string> err = lines(o.err);
    ASSERT_EQ(err.size(), 1u) << args << ": " << o.err;
    EXPECT_EQ(err[0].rfind("dtsim: error: ", 0), 0u) << err[0];
    EXPECT_NE(err[0].find(mention), std::string::npos) << args << ": " << err[0];
    EXPECT_TRUE(rows(o.out).empty()) << args;
  }
}

// The collectives report why they refuse, without naming a key; the command names the flag or key the user
// set, in the same words as before the collectives stopped naming keys.
TEST(CollectiveCommand, RefusalsNameTheFlagOrKey) {
  const Outcome tree = run_dtsim("collective --sizes 8B --algorithm tree --op broadcast");
  EXPECT_EQ(tree.exit_code, 2);
  EXPECT_EQ(tree.err,
            "dtsim: error: command line: --algorithm: 'tree' does not implement broadcast; use ring or auto for "
            "broadcast\n");
  // The hint lists the registry's algorithms for the operation asked for, not the ring's operations.
  const Outcome ring = run_dtsim("collective --sizes 8B --algorithm ring --op alltoall");
  EXPECT_EQ(ring.exit_code, 2);
  EXPECT_EQ(ring.err,
            "dtsim: error: command line: --algorithm: 'ring' does not implement alltoall; use direct or auto for "
            "alltoall\n");
  const Outcome unequal = run_dtsim(
      "collective --sizes 8B --algorithm hierarchical --ranks 6 --set \"cluster.groups=a:1:a100-40gb:4; "
      "b:1:a100-40gb:2\" --set cluster.intra_node_fabric=nvlink4-nvswitch");
  EXPECT_EQ(unequal.exit_code, 2);
  EXPECT_EQ(unequal.err,
            "dtsim: error: collective: collective.algorithm: hierarchical allreduce needs the same number of ranks on "
            "every node (found 4 and 2); use ring, tree or halving-doubling\n");
}

}  // namespace
