// `dtsim collective` through the executable: the csv and json formats, messages that name the flag the user
// typed, warnings for flags without effect, and the α-β prediction on a multi-GPU node.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_dtsim.hpp"

namespace {

using dtsim::testing::lines_of;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Outcome run_dtsim(const std::string& args) {
  const dtsim::testing::DtsimOutcome r = dtsim::testing::run_dtsim(args, /*separate_stderr=*/true);
  return {r.exit_code, r.output, r.err};
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; std::getline(in, f, ',');) out.push_back(f);
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kHgxNode = "collective --ranks 8 --gpus-per-node 8 --set cluster.intra_node_fabric=nvlink3-nvswitch";

TEST(CollectiveFormats, CsvAndJsonHoldTheTablesRows) {
  const std::string run = "collective --ranks 4 --sizes 1KiB:64KiB --protocol auto";
  const Outcome table = run_dtsim(run);
  const Outcome csv = run_dtsim(run + " --format csv");
  const Outcome json = run_dtsim(run + " --format json");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  ASSERT_EQ(json.exit_code, 0) << json.err;

  const std::vector<std::string> csv_lines = lines_of(csv.out);
  ASSERT_EQ(csv_lines.size(), 1u + 7u) << csv.out;  // header + 1, 2, 4, ..., 64 KiB
  EXPECT_EQ(csv_lines[0], "size_bytes,count,type,time_us,algbw_gbps,busbw_gbps,wall_s,model_us,variant,nccl_us");
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["rows"].size(), 7u);
  EXPECT_EQ(doc["ranks"], 4);
  EXPECT_EQ(doc["op"], "allreduce");
  EXPECT_DOUBLE_EQ(doc["busbw_factor"].get<double>(), 2.0 * 3 / 4);
  // The settings as fields, beside the header's sentences: the default ring over the default fabric.
  const nlohmann::json& settings = doc["settings"];
  EXPECT_EQ(settings["algorithm"], "ring");
  EXPECT_EQ(settings["protocol"], "auto");
  EXPECT_EQ(settings["channels"], "auto");
  EXPECT_EQ(settings["tuner"], "nccl");
  EXPECT_DOUBLE_EQ(settings["compute_capability"].get<double>(), 8.0) << "the default GPU, an A100";
  EXPECT_EQ(settings["gpus"], nlohmann::json::array({"A100-SXM4-40GB"}));
  EXPECT_EQ(settings["topology"], "star");
  EXPECT_EQ(settings["gpus_per_node"], 1);
  EXPECT_EQ(settings["intra_node_fabric"], nullptr);
  EXPECT_DOUBLE_EQ(settings["fabric"]["bandwidth_Bps"].get<double>(), 25e9) << "ib-hdr-200: 200 Gb/s per port";

  std::vector<std::vector<std::string>> table_rows;
  for (const std::string& line : lines_of(table.out))
    if (!line.empty() && line[0] != '#') {
      std::istringstream in(line);
      std::vector<std::string> cells;
      for (std::string c; in >> c;) cells.push_back(c);
      table_rows.push_back(cells);
    }
  ASSERT_EQ(table_rows.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    const std::vector<std::string> row = fields(csv_lines[i + 1]);
    ASSERT_EQ(row.size(), 10u) << csv_lines[i + 1];
    const nlohmann::json& j = doc["rows"][i];
    EXPECT_EQ(std::stoull(row[0]), 1024ull << i);
    EXPECT_EQ(j["size_bytes"].get<unsigned long long>(), 1024ull << i);
    // Same simulation, same times: the table rounds to 0.01 us.
    EXPECT_NEAR(std::stod(row[3]), j["time_us"].get<double>(), 1e-6 * j["time_us"].get<double>());
    EXPECT_NEAR(std::stod(table_rows[i][3]), j["time_us"].get<double>(), 0.006);
    EXPECT_NEAR(j["busbw_gbps"].get<double>(), j["algbw_gbps"].get<double>() * 1.5, 1e-9);
    EXPECT_EQ(row[8], j["variant"].get<std::string>());
    EXPECT_EQ(table_rows[i].back(), row[8]);
    EXPECT_TRUE(row[8] == "ring/ll" || row[8] == "ring/ll128" || row[8] == "ring/simple") << row[8];
    // NCCL's own prediction for the variant, in all three formats.
    EXPECT_NEAR(std::stod(row[9]), j["nccl_us"].get<double>(), 1e-6 * j["nccl_us"].get<double>());
    EXPECT_NEAR(std::stod(table_rows[i][8]), j["nccl_us"].get<double>(), 0.006);
  }
  // At 1 KiB NCCL's ring with LL over 4 single-GPU nodes on HDR: 6.6 µs + 6 steps at the tree's network hop
  // (5.0 µs, one GPU per node), and 1 KiB at LL's half of one 24 GB/s channel, × 4/6 for the ring's steps.
  ASSERT_EQ(doc["rows"][0]["variant"], "ring/ll");
  EXPECT_NEAR(doc["rows"][0]["nccl_us"].get<double>(), 6.6 + 6 * 5.0 + 1024 / (1000 * 12.0 * 4 / 6), 1e-6);
}

// Where NCCL has no prediction (no protocol, an algorithm NCCL does not have) the column is empty.
TEST(CollectiveFormats, TheNcclColumnIsEmptyWhereNcclPredictsNothing) {
  for (const std::string args : {"--sizes 1KiB", "--sizes 1KiB --algorithm halving-doubling --protocol simple"}) {
    const Outcome csv = run_dtsim("collective --ranks 4 --format csv " + args);
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    const std::vector<std::string> row = fields(lines_of(csv.out).at(1) + ",");  // the last field may be empty
    ASSERT_GE(row.size(), 10u) << csv.out;
    EXPECT_EQ(row[9], "") << args;
    const Outcome json = run_dtsim("collective --ranks 4 --format json " + args);
    EXPECT_TRUE(nlohmann::json::parse(json.out)["rows"][0]["nccl_us"].is_null()) << args;
  }
}

TEST(CollectiveFormats, AnUnknownFormatIsAnError) {
  const Outcome o = run_dtsim("collective --sizes 8B --format xml");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "dtsim: error: command line: --format: unknown format 'xml'; use table, csv or json\n");
  EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(CollectiveFormats, ErrorsNameTheFlagThatSetTheKey) {
  const Outcome o = run_dtsim("collective --sizes 8B --ranks 3 --gpus-per-node 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(contains(o.err, "dtsim: error: command line (--gpus-per-node): cluster.gpus_per_node: ")) << o.err;
  // A --set of the same key is still blamed on --set.
  const Outcome set = run_dtsim("collective --sizes 8B --ranks 3 --set cluster.gpus_per_node=2");
  EXPECT_TRUE(contains(set.err, "dtsim: error: command line (--set): cluster.gpus_per_node: ")) << set.err;
  // The advice names the flags this command has: --ranks, not cluster.workers.
  const Outcome shape = run_dtsim("collective --sizes 8B --ranks 9 --gpus-per-node 2 --set "
                                  "cluster.intra_node_fabric=nvlink3-nvswitch");
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_EQ(shape.err, "dtsim: error: command line (--gpus-per-node): cluster.gpus_per_node: 9 workers do not fill "
                       "whole nodes of 2 GPUs; make --ranks a multiple of 2\n");
}

TEST(CollectiveFormats, OneGpuIsSingular) {
  // (A node of 1 GPU with 4 NICs is accepted since its NICs are bonded into one port; rails then are not.)
  const Outcome o = run_dtsim("collective --sizes 8B --ranks 2 --topology fat-tree --set cluster.nics_per_node=4 "
                              "--set cluster.rail_optimized=true");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(contains(o.err, "a node of 1 GPU bonds its 4 NICs into one port")) << o.err;
}

TEST(CollectiveFormats, HierarchicalOnSingleGpuNodesSaysItIsTheInterNodeRing) {
  const Outcome o = run_dtsim("collective --sizes 8B --ranks 4 --algorithm hierarchical");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err,
            "dtsim: warning: command line (--algorithm): collective.algorithm: has no effect: every node holds one GPU, "
            "so the hierarchical allreduce is its inter-node ring over all ranks (set --gpus-per-node for "
            "multi-GPU nodes)\n");
  const Outcome multi = run_dtsim(std::string(kHgxNode) + " --sizes 8B --algorithm hierarchical");
  EXPECT_EQ(multi.exit_code, 0) << multi.err;
  EXPECT_TRUE(multi.err.empty()) << multi.err;
}

TEST(CollectiveFormats, KeysWithoutEffectAreNamedWhateverTheirSection) {
  // A training key, a GPU's compute, a fabric for the inside of nodes that hold one GPU: none changes the time.
  const Outcome o = run_dtsim("collective --sizes 1MiB --ranks 4 --format csv --set training.lr=0.1 "
                              "--set gpu.profile=v100-32gb --set cluster.intra_node_fabric=nvlink4-nvswitch");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> warnings = lines_of(o.err);
  ASSERT_EQ(warnings.size(), 3u) << o.err;
  // In schema order: [cluster] before [gpu] before [training].
  EXPECT_TRUE(contains(warnings[0], "command line (--set): cluster.intra_node_fabric: has no effect: every node "
                                    "holds one GPU")) << warnings[0];
  // The GPU matters to NCCL's tuner only, which chooses nothing for the ring without a protocol model.
  EXPECT_TRUE(contains(warnings[1], "gpu.profile: has no effect: neither --algorithm nor --protocol is auto"))
      << warnings[1];
  EXPECT_TRUE(contains(warnings[2], "training.lr: has no effect in dtsim collective, which reads only the [cluster], "
                                    "[fabric], [network] and [collective] keys")) << warnings[2];
  const Outcome plain = run_dtsim("collective --sizes 1MiB --ranks 4 --format csv");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(plain.err.empty()) << plain.err;
  EXPECT_EQ(fields(lines_of(o.out).at(1)).at(3), fields(lines_of(plain.out).at(1)).at(3)) << "the time is unchanged";
  // The ring pipelines its broadcast chain, not its allreduce: the same key is read by one and not the other.
  const std::string chunk = "collective --sizes 1MiB --ranks 4 --format csv --set collective.pipeline_chunk=64KiB";
  const Outcome broadcast = run_dtsim(chunk + " --op broadcast");
  EXPECT_EQ(broadcast.exit_code, 0) << broadcast.err;
  EXPECT_TRUE(broadcast.err.empty()) << broadcast.err;
  const Outcome allreduce = run_dtsim(chunk);
  EXPECT_TRUE(contains(allreduce.err, "collective.pipeline_chunk: has no effect with collective.algorithm = ring, "
                                      "which reads it for broadcast and reduce only")) << allreduce.err;
}

// collective.tuner and the GPU (whose compute capability only NCCL's tuner reads) act where auto chooses for the
// ring or NCCL's tree; elsewhere each is named as without effect.
TEST(CollectiveFormats, TunerAndGpuWithoutAChoiceAreNamed) {
  const Outcome plain = run_dtsim("collective --sizes 1MiB --ranks 4 --format csv --tuner fastest");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(contains(plain.err, "collective.tuner: has no effect: neither --algorithm nor --protocol is auto"))
      << plain.err;
  const Outcome alltoall =
      run_dtsim("collective --sizes 1MiB --ranks 4 --format csv --op alltoall --algorithm auto --protocol auto "
                "--gpu h100-80gb");
  EXPECT_EQ(alltoall.exit_code, 0) << alltoall.err;
  EXPECT_TRUE(contains(alltoall.err, "gpu.profile: has no effect: auto chooses nothing for the ring or NCCL's tree "
                                     "here")) << alltoall.err;
  const Outcome halving = run_dtsim(
      "collective --sizes 1MiB --ranks 4 --format csv --algorithm halving-doubling --protocol auto --tuner nccl");
  EXPECT_EQ(halving.exit_code, 0) << halving.err;
  EXPECT_TRUE(contains(halving.err, "collective.tuner: has no effect: auto chooses nothing")) << halving.err;
  // Where the tuner chooses, neither is named.
  const Outcome chosen =
      run_dtsim("collective --sizes 1MiB --ranks 4 --format csv --algorithm auto --tuner fastest --gpu h100-80gb");
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_FALSE(contains(chosen.err, "collective.tuner: has no effect")) << chosen.err;
  EXPECT_TRUE(contains(chosen.err, "gpu.profile: has no effect with collective.tuner = fastest")) << chosen.err;
  const Outcome nccl = run_dtsim("collective --sizes 1MiB --ranks 4 --format csv --algorithm auto --gpu h100-80gb");
  EXPECT_EQ(nccl.exit_code, 0) << nccl.err;
  EXPECT_TRUE(nccl.err.empty()) << nccl.err;
  // With a protocol, the GPU shapes NCCL's prediction in the nccl(us) column even where nothing is chosen.
  const auto nccl_us = [](const std::string& gpu) {
    const Outcome o = run_dtsim("collective --sizes 1MiB --ranks 4 --format json --algorithm tree --protocol simple "
                                "--gpu " + gpu);
    EXPECT_TRUE(o.err.empty()) << o.err;
    return nlohmann::json::parse(o.out)["rows"][0]["nccl_us"].get<double>();
  };
  EXPECT_NE(nccl_us("v100-32gb"), nccl_us("h100-80gb"));
}

// Nodes of different GPU generations: NCCL's tuner reads the least one's tables and, below Hopper, runs no LL128
// across generations; the settings name every GPU and the compute capability the tuner read.
TEST(CollectiveFormats, MixedGenerationsTakeTheLeastAndNoLl128) {
  const std::string run = "collective --ranks 16 --set \"cluster.groups=a:8:h100-80gb; b:8:a100-80gb\" "
                          "--algorithm auto --protocol auto --fidelity analytic --format json --sizes 64KiB:1MiB";
  const Outcome o = run_dtsim(run);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json doc = nlohmann::json::parse(o.out);
  EXPECT_EQ(doc["settings"]["gpus"], nlohmann::json::array({"H100-SXM5-80GB", "A100-SXM4-80GB"}));
  EXPECT_DOUBLE_EQ(doc["settings"]["compute_capability"].get<double>(), 8.0);
  EXPECT_NE(doc["collective"].get<std::string>().find("Ampere to Hopper (Ampere's tables)"), std::string::npos)
      << doc["collective"];
  for (const auto& row : doc["rows"])
    EXPECT_EQ(row["variant"].get<std::string>().find("ll128"), std::string::npos) << row["variant"];
}

// One HGX node: the ring's hops are NVLink, at NVLink's efficiency (0.78), not the network's (0.96); the
// analytic fidelity and the prediction must charge them so, as the stepwise flows get them.
TEST(CollectiveFormats, AnalyticChargesNvlinkHopsAtNvlinksEfficiency) {
  const auto time_of = [](const std::string& fidelity) {
    const Outcome o = run_dtsim(std::string(kHgxNode) + " --sizes 1GiB --format json --fidelity " + fidelity);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    const nlohmann::json doc = nlohmann::json::parse(o.out);
    return std::make_pair(doc["rows"][0]["time_us"].get<double>(), doc["rows"][0]["model_us"].get<double>());
  };
  const auto [stepwise, model] = time_of("stepwise");
  const auto [analytic, analytic_model] = time_of("analytic");
  const auto [aggregated, aggregated_model] = time_of("aggregated");
  // Closed form: 2(N−1)/N · S / (300 GB/s · 0.78) plus 14 latencies of 0.6 µs (two 0.3 µs links).
  const double expected = 14 * (0.6 + (1073741824.0 / 8) / (300e9 * 0.78) * 1e6);
  EXPECT_NEAR(stepwise, expected, 1e-3 * expected);
  EXPECT_NEAR(model, stepwise, 0.02 * stepwise);
  EXPECT_NEAR(analytic, stepwise, 0.02 * stepwise);
  EXPECT_NEAR(aggregated, stepwise, 0.02 * stepwise);
  EXPECT_DOUBLE_EQ(analytic_model, model);
  EXPECT_DOUBLE_EQ(aggregated_model, model);
}

}  // namespace
