// Keys a user set that the run does not read: each is found with its reason, one per strategy family and per
// compressor family, and keys that do apply (or that nobody set) are never reported.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/ignored_keys.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/strategy.hpp"

namespace dtsim::sim {
namespace {

std::vector<IgnoredKey> ignored_in(const std::string& text, const std::vector<std::string>& sets = {}) {
  const Scenario s = parse_scenario("ignored.ini", text, sets);
  return find_ignored_keys(make_run_config(s), s.origins());
}

// The reason given for `key`, or "" when it is not reported.
std::string reason_for(const std::vector<IgnoredKey>& ignored, const std::string& key) {
  for (const IgnoredKey& k : ignored)
    if (k.key == key) return k.reason;
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(IgnoredKeys, NothingIsReportedWhenEveryKeyApplies) {
  EXPECT_TRUE(ignored_in("[training]\nstrategy = sync\nlr = 0.1\n[sync]\nbucket_size = 1MB\n").empty());
  EXPECT_TRUE(ignored_in("[training]\nstrategy = async-ps\n[ps]\nservers = 2\n").empty());
}

// A federated round's choices that leave nothing to choose, an own factor for every slow worker, and SimGrid's
// network model under analytic collectives.
TEST(IgnoredKeys, SettingsThatOtherSettingsLeaveWithoutEffect) {
  const std::string fed = "[cluster]\nworkers = 8\n[training]\nstrategy = federated\n[fl]\n";
  EXPECT_TRUE(has(reason_for(ignored_in(fed + "sampling = weighted\n"), "fl.sampling"), "every client takes part"));
  EXPECT_TRUE(has(reason_for(ignored_in(fed + "overcommit = 0.5\n"), "fl.overcommit"), "none is left to over-commit"));
  EXPECT_TRUE(ignored_in(fed + "clients_per_round = 4\nsampling = weighted\novercommit = 0.5\n").empty());
  EXPECT_TRUE(has(reason_for(ignored_in(fed + "local_steps = 3\nlocal_epochs = 2\n"), "fl.local_epochs"),
                  "fl.local_steps sets the local work"));
  EXPECT_TRUE(has(reason_for(ignored_in(fed + "local_steps_by_client = 1,2,3,4,5,6,7,8\nlocal_steps = 3\n"),
                             "fl.local_steps"),
                  "fl.local_steps_by_client gives every client"));
  EXPECT_TRUE(has(reason_for(ignored_in(fed + "straggler_policy = partial\n"), "fl.straggler_policy"), "no client straggles"));
  EXPECT_TRUE(ignored_in(fed + "straggler_policy = partial\nstraggler_fraction = 0.5\nlocal_epochs = 2\n").empty());
  EXPECT_TRUE(ignored_in(fed + "straggler_policy = partial\ndeadline = 1s\n").empty());

  EXPECT_TRUE(has(reason_for(ignored_in("[stragglers]\nslow_workers = 3:0.2\nslow_factor = 0.3\n"), "stragglers.slow_factor"),
                  "carries its own factor"));
  EXPECT_TRUE(ignored_in("[stragglers]\nslow_workers = 3:0.2, 4\nslow_factor = 0.3\n").empty());

  EXPECT_TRUE(has(reason_for(ignored_in("[collective]\nfidelity = analytic\n[network]\nmodel = ib\n"), "network.model"),
                  "has no effect with collective.fidelity = analytic"));
  EXPECT_TRUE(ignored_in("[collective]\nfidelity = aggregated\n[network]\nmodel = ib\ncrosstraffic = true\n").empty());
  // A parameter server's traffic is flows at any fidelity.
  EXPECT_EQ(reason_for(ignored_in("[training]\nstrategy = async-ps\n[collective]\nfidelity = analytic\n[network]\n"
                                  "crosstraffic = true\n"),
                       "network.crosstraffic"),
            "");
}

// A CUDA graph issues no kernel one by one (the host's dispatch is never paid), and saves nothing where a
// kernel costs nothing to issue.
TEST(IgnoredKeys, KernelIssueSettingsThatChangeNothing) {
  EXPECT_TRUE(has(reason_for(ignored_in("[gpu]\nlaunch_overhead = 5us\n[compute]\ncuda_graphs = true\n"
                                        "host_dispatch = 3us\n"),
                             "compute.host_dispatch"),
                  "has no effect with compute.cuda_graphs = true"));
  EXPECT_TRUE(has(reason_for(ignored_in("[gpu]\nlaunch_overhead = 0s\n[compute]\ncuda_graphs = true\n"),
                             "compute.cuda_graphs"),
                  "issuing a kernel costs nothing to save"));
  EXPECT_TRUE(ignored_in("[gpu]\nlaunch_overhead = 5us\n[compute]\ncuda_graphs = true\n").empty());
  EXPECT_TRUE(ignored_in("[gpu]\nlaunch_overhead = 0s\n[compute]\nhost_dispatch = 3us\n").empty());
  // The dispatch alone is worth capturing away, whatever the launch costs.
  EXPECT_EQ(reason_for(ignored_in("[gpu]\nlaunch_overhead = 0s\n[compute]\ncuda_graphs = true\nhost_dispatch = 3us\n"),
                       "compute.cuda_graphs"),
            "");
}

TEST(IgnoredKeys, AWarmupStartWithoutAWarmup) {
  EXPECT_EQ(reason_for(ignored_in("[training]\nwarmup_start_lr = base\n"), "training.warmup_start_lr"),
            "has no effect without a warmup (training.warmup_epochs or training.warmup_steps)");
  EXPECT_TRUE(ignored_in("[training]\nwarmup_steps = 10\nwarmup_start_lr = base\n").empty());
  // Set empty, the start is unset (clearing a scenario's start along with its warmup): nothing to warn about.
  EXPECT_EQ(reason_for(ignored_in("[training]\nwarmup_start_lr =\n"), "training.warmup_start_lr"), "");
  // Parsed: "base" takes the unscaled training.lr, a number is kept, anything else is refused at its line.
  const RunConfig c = make_run_config(parse_scenario("w.ini", "[training]\nwarmup_steps = 10\nwarmup_start_lr = 0.02\n", {}));
  ASSERT_TRUE(c.schedule.warmup_start_lr.has_value());
  EXPECT_DOUBLE_EQ(*c.schedule.warmup_start_lr, 0.02);
  EXPECT_TRUE(make_run_config(parse_scenario("w.ini", "[training]\nwarmup_start_lr = base\n", {})).schedule.warmup_start_base);
  try {
    (void)make_run_config(parse_scenario("w.ini", "[training]\nwarmup_steps = 10\nwarmup_start_lr = fast\n", {}));
    FAIL() << "refused";
  } catch (const std::exception& e) {
    EXPECT_TRUE(has(e.what(), "training.warmup_start_lr")) << e.what();
    EXPECT_TRUE(has(e.what(), "'fast' is neither a learning rate")) << e.what();
  }
}

TEST(IgnoredKeys, PartitionSettingsWithoutTheirPartition) {
  EXPECT_EQ(reason_for(ignored_in("[data]\npartition = iid\nlabels_assignment = random\n"), "data.labels_assignment"),
            "has no effect with data.partition = iid (it applies to labels)");
  EXPECT_TRUE(ignored_in("[data]\npartition = labels\nlabels_assignment = random\n").empty());
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\ncap_batch_at_shard = true\n"), "training.cap_batch_at_shard"),
                  "has no effect with data.partition = none"));
  EXPECT_TRUE(ignored_in("[training]\ncap_batch_at_shard = true\n[data]\npartition = dirichlet\n").empty());
}

// Whether a cap applies depends on the shards: with every shard at least a batch it has no effect, said so.
TEST(IgnoredKeys, ACapThatNoShardNeeds) {
  const std::string base =
      "[cluster]\nworkers = 10\n[training]\nstrategy = federated\ncap_batch_at_shard = true\n"
      "[data]\ntrain_samples = 600\ntest_samples = 100\npartition = labels\n";
  // 600 samples over 10 workers holding 2 labels each: shards of about 60.
  const RunInputs small_batch = prepare_run(parse_scenario("cap.ini", base, {"training.batch_per_worker=20"}));
  const std::string reason = reason_for(small_batch.ignored_keys, "training.cap_batch_at_shard");
  EXPECT_TRUE(has(reason, "has no effect: the smallest shard holds ")) << reason;
  EXPECT_TRUE(has(reason, " samples, at least the batch of 20")) << reason;
  const RunInputs large_batch = prepare_run(parse_scenario("cap.ini", base, {"training.batch_per_worker=100"}));
  EXPECT_EQ(reason_for(large_batch.ignored_keys, "training.cap_batch_at_shard"), "");
  // Any batch is a valid cap, even one larger than the data: every client then takes its whole shard...
  EXPECT_NO_THROW((void)prepare_run(parse_scenario("cap.ini", base, {"training.batch_per_worker=1000000"})));
  // ...while without the cap such a batch is refused at its key.
  try {
    (void)prepare_run(parse_scenario("cap.ini", base, {"training.batch_per_worker=1000000",
                                                       "training.cap_batch_at_shard=false"}));
    FAIL() << "refused";
  } catch (const std::exception& e) {
    EXPECT_TRUE(has(e.what(), "training.batch_per_worker: batch 1000000 exceeds the 600 training samples")) << e.what();
  }
}

TEST(IgnoredKeys, PsKeysUnderSyncNameTheStrategyThatReadsThem) {
  const auto ignored = ignored_in("[training]\nstrategy = sync\n[ps]\nservers = 2\nstaleness_bound = 3\n");
  ASSERT_EQ(ignored.size(), 2u);
  EXPECT_EQ(ignored[0].key, "ps.servers");
  EXPECT_EQ(ignored[0].reason, "has no effect with training.strategy = sync (only async-ps reads [ps])");
  EXPECT_EQ(ignored[0].where.describe(), "ignored.ini:4");
  EXPECT_EQ(ignored[1].key, "ps.staleness_bound");
}

TEST(IgnoredKeys, EveryStrategyFamilyReportsTheOthersSections) {
  // Synchronous keys under federated learning and the parameter server, federated keys under sync.
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\nstrategy = federated\n[sync]\noverlap = true\n"), "sync.overlap"),
                  "only sync and local read [sync]"));
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\nstrategy = async-ps\n[local]\nlocal_steps = 4\n"), "local.local_steps"),
                  "with training.strategy = async-ps (only local reads [local])"));
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\nstrategy = sync\n[fl]\nrounds = 5\n"), "fl.rounds"),
                  "only federated reads [fl]"));
  // Local SGD reads both [sync] and [local].
  EXPECT_TRUE(ignored_in("[training]\nstrategy = local\n[sync]\noverlap = true\n[local]\nlocal_steps = 4\n").empty());
}

TEST(IgnoredKeys, FromTheCommandLineToo) {
  const auto ignored = ignored_in("[training]\nstrategy = sync\n", {"ps.servers=4"});
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0].where.describe(), "command line (--set)");
}

TEST(IgnoredKeys, EveryCompressorFamilyReportsSettingsItDoesNotRead) {
  // No compressor: nothing of [compression] applies.
  EXPECT_EQ(reason_for(ignored_in("[compression]\nratio = 0.1\n"), "compression.ratio"),
            "has no effect: compression.kind = none");
  // Sign: a sparsifier's ratio; sparsification: QSGD's levels; quantisation: PowerSGD's rank; low rank: the
  // top-k ratio; cast: the majority vote.
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = sign\nratio = 0.1\n"), "compression.ratio"),
                  "has no effect with compression.kind = sign (it applies to topk or randomk)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = topk\nqsgd_levels = 3\n"), "compression.qsgd_levels"),
                  "with compression.kind = topk (it applies to qsgd)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = qsgd\nrank = 2\n"), "compression.rank"),
                  "with compression.kind = qsgd (it applies to powersgd)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = powersgd\nratio = 0.1\n"), "compression.ratio"),
                  "with compression.kind = powersgd"));
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = fp16\nqsgd_bucket = 64\n"), "compression.qsgd_bucket"),
                  "with compression.kind = fp16"));
  // Random-k with shared indices sends none, so their encoding does not matter; sent, it does.
  EXPECT_TRUE(has(reason_for(ignored_in("[compression]\nkind = randomk\nindices = int32\n"), "compression.indices"),
                  "random-k with shared indices sends no indices"));
  EXPECT_EQ(reason_for(ignored_in("[compression]\nkind = randomk\nshared_indices = false\nindices = int32\n"),
                       "compression.indices"),
            "");
  // One node and no server: nothing crosses the network between nodes, so its NICs and fabric values do
  // nothing; its price is still billed. Two nodes, or a parameter server, use it.
  const std::string one_node = "[cluster]\nworkers = 8\ngpus_per_node = 8\nintra_node_fabric = nvlink3-nvswitch\n";
  EXPECT_TRUE(has(reason_for(ignored_in(one_node + "nics_per_node = 8\n"), "cluster.nics_per_node"),
                  "every worker is in one node and there is no server"));
  EXPECT_TRUE(has(reason_for(ignored_in(one_node + "[fabric]\nprofile = roce-400\n"), "fabric.profile"),
                  "no traffic crosses the network between nodes"));
  EXPECT_EQ(reason_for(ignored_in(one_node + "[fabric]\nprice_low = 1\nprice_high = 2\nprice_currency = CNY\n"),
                       "fabric.price_low"),
            "");
  EXPECT_EQ(reason_for(ignored_in("[cluster]\nworkers = 16\ngpus_per_node = 8\nintra_node_fabric = nvlink3-nvswitch\n"
                                  "nics_per_node = 8\n"),
                       "cluster.nics_per_node"),
            "");
  EXPECT_EQ(reason_for(ignored_in(one_node + "nics_per_node = 8\n[training]\nstrategy = async-ps\n"),
                       "cluster.nics_per_node"),
            "");
  // cluster.gpus_per_node under groups that each give their own count; read by a group that gives none.
  EXPECT_TRUE(has(reason_for(ignored_in("[cluster]\nworkers = 12\ngpus_per_node = 2\nintra_node_fabric = nvlink3-nvswitch\n"
                                        "groups = a:2:a100-80gb:4; b:4:v100-32gb:1\n"),
                             "cluster.gpus_per_node"),
                  "every cluster.groups group gives its own GPUs per node"));
  EXPECT_EQ(reason_for(ignored_in("[cluster]\nworkers = 12\ngpus_per_node = 2\nintra_node_fabric = nvlink3-nvswitch\n"
                                  "groups = a:2:a100-80gb:4; b:2:v100-32gb\n"),
                       "cluster.gpus_per_node"),
            "");
  // A cast to the gradients' own format sends the same bytes but sums in that format: it has an effect.
  EXPECT_EQ(reason_for(ignored_in("[precision]\ngradients = bf16\n[compression]\nkind = bf16\n"), "compression.kind"),
            "");
  // Local SGD with H > 1 and no synchronous start averages models only: every compression key, kind included,
  // has no effect (the run's bytes and model are those of no compression); with a synchronous start it applies.
  const std::string local = "[training]\nstrategy = local\n[local]\nlocal_steps = 4\n[compression]\nkind = topk\n"
                            "ratio = 0.1\n";
  EXPECT_TRUE(has(reason_for(ignored_in(local), "compression.kind"), "averages models, not gradients"));
  EXPECT_TRUE(has(reason_for(ignored_in(local), "compression.ratio"), "averages models, not gradients"));
  EXPECT_TRUE(ignored_in(local + "[local]\n", {"local.sync_until_step=10"}).empty());
  EXPECT_TRUE(ignored_in(local, {"local.local_steps=1"}).empty());
  // What a kind reads is never reported.
  EXPECT_TRUE(ignored_in("[compression]\nkind = topk\nratio = 0.1\nerror_feedback = true\n").empty());
  EXPECT_TRUE(ignored_in("[compression]\nkind = powersgd\nrank = 2\n").empty());
}

TEST(IgnoredKeys, FederatedAlgorithmsModelsAndOptimizers) {
  // (fl.prox_mu with another algorithm is refused outright by the fl module, so it never gets here.)
  EXPECT_EQ(reason_for(ignored_in("[training]\nstrategy = federated\n[fl]\nalgorithm = fedprox\nprox_mu = 0.1\n"),
                       "fl.prox_mu"),
            "");
  EXPECT_TRUE(has(reason_for(ignored_in("[data]\ndataset = synthetic\n[model]\narch = logreg\nhidden = 64\n"), "model.hidden"),
                  "has no effect with model.arch = logreg (only mlp takes hidden widths)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\noptimizer = adam\nnesterov = true\n"), "training.nesterov"),
                  "has no effect with training.optimizer = adam (it applies to sgd or lars)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\noptimizer = sgd\nbeta2 = 0.99\n"), "training.beta2"),
                  "(it applies to adam, adamw or lamb)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\ndecay = cosine\ndecay_gamma = 0.5\n"), "training.decay_gamma"),
                  "has no effect with training.decay = cosine (it applies to step)"));
  EXPECT_TRUE(has(reason_for(ignored_in("[precision]\nloss_scale = 1024\n"), "precision.loss_scale"),
                  "with precision.loss_scaling = none"));
  EXPECT_TRUE(has(reason_for(ignored_in("[data]\npartition = iid\ndirichlet_alpha = 0.1\n"), "data.dirichlet_alpha"),
                  "with data.partition = iid (it applies to dirichlet)"));
}

TEST(IgnoredKeys, TopologyAndCollectiveKeysFollowTheirRegistries) {
  EXPECT_TRUE(has(reason_for(ignored_in("[cluster]\ntopology = star\ntorus_dims = 2,4\n"), "cluster.torus_dims"),
                  "has no effect with cluster.topology = star (it applies to torus)"));
  EXPECT_TRUE(ignored_in("[cluster]\ntopology = torus\ntorus_dims = 2,4\n").empty());
  EXPECT_TRUE(has(reason_for(ignored_in("[collective]\nalgorithm = ring\ninter_node = tree\n"), "collective.inter_node"),
                  "has no effect with collective.algorithm = ring (it applies to hierarchical)"));
}

TEST(IgnoredKeys, PcieSwitchKeysNeedASwitchAndTrafficToANic) {
  EXPECT_EQ(reason_for(ignored_in("[cluster]\ngpus_per_pcie_switch = 4\n"), "cluster.gpus_per_pcie_switch"),
            "has no effect: cluster.pcie_switch is empty (no PCIe switch between GPUs and NICs)");
  EXPECT_TRUE(ignored_in("[cluster]\nworkers = 4\npcie_switch = pcie4-x16\ngpus_per_pcie_switch = 1\n").empty());
  // One node and no server: nothing leaves it.
  const std::string one_node = "[cluster]\nworkers = 8\ngpus_per_node = 8\nnics_per_node = 8\n"
                               "intra_node_fabric = nvlink3-nvswitch\npcie_switch = pcie4-x16\n";
  EXPECT_EQ(reason_for(ignored_in(one_node), "cluster.pcie_switch"),
            "has no effect: every worker is in one node and there is no server, so no traffic reaches a NIC");
  EXPECT_TRUE(ignored_in(one_node + "[training]\nstrategy = async-ps\n").empty()) << "the server is behind a NIC";
}

TEST(IgnoredKeys, AnIntraNodeFabricNeedsANodeOfSeveralGpus) {
  const std::string fabric = "[cluster]\nworkers = 8\nintra_node_fabric = nvlink4-nvswitch\n";
  EXPECT_EQ(reason_for(ignored_in(fabric), "cluster.intra_node_fabric"),
            "has no effect: every node holds one GPU, so no traffic stays inside a node (set cluster.gpus_per_node "
            "for multi-GPU nodes)");
  EXPECT_TRUE(ignored_in(fabric + "gpus_per_node = 2\n").empty());
  // One group of two-GPU nodes is enough; groups of single GPUs are not.
  EXPECT_TRUE(ignored_in(fabric + "groups = a:2:a100-40gb:2; b:4:v100-32gb:1\n").empty());
  EXPECT_FALSE(reason_for(ignored_in(fabric + "groups = a:4:a100-40gb:1; b:4:v100-32gb:1\n"),
                          "cluster.intra_node_fabric").empty());
}

TEST(IgnoredKeys, CollectivesAndStepCountsFollowTheStrategy) {
  const std::string keys = "[training]\nepochs = 2\nmax_steps = 10\n[eval]\nper_epoch = 3\n"
                           "[collective]\nalgorithm = tree\nfidelity = analytic\n";
  EXPECT_TRUE(ignored_in(keys).empty()) << "sync reads them all";
  EXPECT_TRUE(ignored_in(keys, {"training.strategy=local"}).empty());
  const std::vector<IgnoredKey> ps = ignored_in(keys, {"training.strategy=async-ps"});
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(reason_for(ps, "collective.algorithm"),
            "has no effect with training.strategy = async-ps (only sync and local combine gradients with collectives)");
  EXPECT_FALSE(reason_for(ps, "collective.fidelity").empty());
  const std::vector<IgnoredKey> fl = ignored_in(keys, {"training.strategy=federated"});
  ASSERT_EQ(fl.size(), 5u);
  EXPECT_EQ(reason_for(fl, "training.epochs"), "has no effect with training.strategy = federated (a run lasts "
                                               "fl.rounds rounds of fl.local_epochs or fl.local_steps each)");
  EXPECT_FALSE(reason_for(fl, "training.max_steps").empty());
  EXPECT_EQ(reason_for(fl, "eval.per_epoch"),
            "has no effect with training.strategy = federated (it evaluates every fl.eval_every rounds)");
}

TEST(IgnoredKeys, ScalingNeedsABaseBatchOtherThanTheGlobalOne) {
  EXPECT_EQ(reason_for(ignored_in("[training]\nlr_scaling = linear\n"), "training.lr_scaling"),
            "has no effect: training.base_batch is unset, so training.lr is the rate of the global batch itself "
            "(set base_batch to the batch the rate was tuned for)");
  // quickstart's global batch: 8 workers × 32 by default.
  EXPECT_EQ(reason_for(ignored_in("[training]\nlr_scaling = sqrt\nbase_batch = 256\n"), "training.lr_scaling"),
            "has no effect: training.base_batch equals the global batch (256), so the rate is scaled by 1");
  EXPECT_TRUE(ignored_in("[training]\nlr_scaling = sqrt\nbase_batch = 64\n").empty());
}

TEST(IgnoredKeys, TheRingPipelinesOnlyItsChainWhichTrainingNeverRuns) {
  EXPECT_EQ(reason_for(ignored_in("[collective]\npipeline_chunk = 1MiB\n"), "collective.pipeline_chunk"),
            "has no effect with collective.algorithm = ring, which reads it for broadcast and reduce only (it "
            "applies to tree or auto)");
  EXPECT_TRUE(ignored_in("[collective]\nalgorithm = tree\npipeline_chunk = 1MiB\n").empty());
  EXPECT_TRUE(ignored_in("[collective]\nalgorithm = auto\npipeline_chunks_max = 16\n").empty());
}

TEST(IgnoredKeys, NodeGroupsTakeTheirGpusFromTheirProfiles) {
  const std::string groups = "[cluster]\nworkers = 8\ngroups = a:4:a100-40gb; b:4:v100-32gb\n";
  EXPECT_TRUE(ignored_in(groups).empty());
  const std::vector<IgnoredKey> gpu = ignored_in(groups + "[gpu]\nprofile = h100-80gb\nefficiency = 0.3\n");
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_EQ(reason_for(gpu, "gpu.efficiency"), "has no effect: every node belongs to a cluster.groups group, whose "
                                               "GPU comes from that group's profile alone");
  EXPECT_TRUE(ignored_in("[gpu]\nefficiency = 0.3\n").empty());
}

// collective.tuner and gpu.compute_capability act where auto chooses for the ring or NCCL's tree.
TEST(IgnoredKeys, TheTunerAndTheComputeCapabilityNeedAnAutoChoice) {
  const std::vector<IgnoredKey> ring = ignored_in("[collective]\ntuner = fastest\n[gpu]\ncompute_capability = 9.0\n");
  EXPECT_EQ(reason_for(ring, "collective.tuner"),
            "has no effect: neither collective.algorithm nor collective.protocol is auto, so nothing is chosen");
  EXPECT_EQ(reason_for(ring, "gpu.compute_capability"), "has no effect with collective.tuner = fastest (only NCCL's "
                                                        "tuner reads it)");
  EXPECT_TRUE(ignored_in("[collective]\nalgorithm = auto\n[gpu]\ncompute_capability = 9.0\n").empty());
  EXPECT_TRUE(ignored_in("[collective]\nprotocol = auto\ntuner = fastest\n").empty());
  // Halving-doubling is no NCCL algorithm: its protocol is the fastest whatever the tuner.
  EXPECT_TRUE(has(reason_for(ignored_in("[collective]\nalgorithm = halving-doubling\nprotocol = auto\ntuner = nccl\n"),
                             "collective.tuner"),
                  "auto chooses nothing for the ring or NCCL's tree here"));
  // The parameter server sends point to point.
  EXPECT_TRUE(has(reason_for(ignored_in("[training]\nstrategy = async-ps\n[collective]\nalgorithm = auto\n"
                                        "[gpu]\ncompute_capability = 9.0\n"),
                             "gpu.compute_capability"),
                  "has no effect with training.strategy = async-ps"));
}

// NCCL takes the least compute capability of the cluster's GPUs; one not known reads as 8.0.
TEST(CollectiveOptions, ComputeCapabilityIsTheLeastOfTheClustersGpus) {
  const auto cc = [](const std::string& text) {
    return collective_options(make_run_config(parse_scenario("cc.ini", text, {}))).compute_capability;
  };
  EXPECT_EQ(cc("[gpu]\nprofile = h100-80gb\n"), 90);
  EXPECT_EQ(cc("[gpu]\nprofile = v100-32gb\n"), 70);
  EXPECT_EQ(cc("[cluster]\nworkers = 8\ngroups = a:4:h100-80gb; b:4:a100-40gb\n"), 80);
  EXPECT_EQ(cc("[gpu]\nprofile = h100-80gb\ncompute_capability = 0\n"), 80);
  const CollectiveOptions o =
      collective_options(make_run_config(parse_scenario("bw.ini", "[cluster]\nworkers = 16\ngpus_per_node = 8\n"
                                                                  "intra_node_fabric = nvlink4-nvswitch\n", {})));
  EXPECT_DOUBLE_EQ(o.intra_node_bandwidth, 450e9 * 0.82);  // the profile's bandwidth × efficiency
  EXPECT_DOUBLE_EQ(o.nic_bandwidth, 25e9 * 0.96);          // ib-hdr-200, the default fabric
}

TEST(IgnoredKeys, ZeroLeavesNoAllreduceForTheAlgorithm) {
  const std::string zero = "[sync]\nzero_stage = 2\n[collective]\nalgorithm = tree\nchannels = 2\n";
  const std::vector<IgnoredKey> keys = ignored_in(zero);
  ASSERT_EQ(keys.size(), 1u) << "the rings still read channels";
  EXPECT_EQ(reason_for(keys, "collective.algorithm"),
            "has no effect with sync.zero_stage = 2: ZeRO's reduce-scatters and all-gathers run as rings, and no "
            "allreduce is left to choose an algorithm for");
  EXPECT_TRUE(ignored_in("[collective]\nalgorithm = tree\n").empty());
}

TEST(IgnoredKeys, AnActivationNeedsAHiddenLayer) {
  EXPECT_EQ(reason_for(ignored_in("[model]\narch = logreg\nactivation = tanh\n"), "model.activation"),
            "has no effect with model.arch = logreg (it has no hidden layer; it applies to mlp, lenet, cnn or "
            "lenet-nopad)");
  EXPECT_TRUE(ignored_in("[model]\narch = lenet\nactivation = tanh\n").empty());
  EXPECT_TRUE(ignored_in("[model]\narch = mlp\nactivation = gelu\n").empty());
}

TEST(IgnoredKeys, StragglerSettingsNeedSomeoneToSlow) {
  EXPECT_EQ(reason_for(ignored_in("[stragglers]\nslow_factor = 0.3\n"), "stragglers.slow_factor"),
            "has no effect: no worker is slow (set stragglers.slow_workers or stragglers.slow_fraction)");
  EXPECT_TRUE(ignored_in("[stragglers]\nslow_factor = 0.3\nslow_workers = 2\n").empty());
  EXPECT_TRUE(ignored_in("[cluster]\nworkers = 8\n[stragglers]\nslow_factor = 0.3\nslow_fraction = 0.25\n").empty());
  EXPECT_EQ(reason_for(ignored_in("[stragglers]\nstep_slowdown = 3\n"), "stragglers.step_slowdown"),
            "has no effect with stragglers.step_probability = 0 (no step is slowed)");
  EXPECT_TRUE(ignored_in("[stragglers]\nstep_slowdown = 3\nstep_probability = 0.1\n").empty());
  EXPECT_EQ(reason_for(ignored_in("[stragglers]\nstep_slowdown = 1\nstep_probability = 0.1\n"),
                       "stragglers.step_probability"),
            "has no effect with stragglers.step_slowdown = 1 (a slowed step takes as long as any other)");
}

TEST(IgnoredKeys, FaultReactionSettingsNeedAFailure) {
  const std::string keys = "[sync]\nfault_timeout = 5s\nrestart_time = 10s\ncheckpoint_every = 10\n";
  // Without a failure nothing of the reaction runs, under restart too (no checkpoint is written).
  for (const std::string reaction : {"elastic", "restart"}) {
    const std::vector<IgnoredKey> none = ignored_in(keys + "fault_reaction = " + reaction + "\n");
    ASSERT_EQ(none.size(), 4u) << reaction;
    for (const IgnoredKey& k : none)
      EXPECT_EQ(k.reason, "has no effect: no failure is scheduled (faults.events is empty)") << k.key;
  }
  // With one, checkpoints and the restart time belong to restart.
  const std::string failure = "[cluster]\nworkers = 4\n[faults]\nevents = worker 1 down at 1s\n";
  EXPECT_TRUE(ignored_in(failure + keys + "fault_reaction = restart\n").empty());
  const std::vector<IgnoredKey> elastic = ignored_in(failure + keys + "fault_reaction = elastic\n");
  ASSERT_EQ(elastic.size(), 2u);
  EXPECT_EQ(reason_for(elastic, "sync.restart_time"),
            "has no effect with sync.fault_reaction = elastic (only restart waits for the node)");
  EXPECT_EQ(reason_for(elastic, "sync.checkpoint_every"),
            "has no effect with sync.fault_reaction = elastic (only restart writes checkpoints)");
  // A repair under elastic: the worker never rejoins, so the 'up at' part changes nothing (it used to be
  // dropped without a word); under restart, or in async-ps, it does.
  const std::string repaired = "[cluster]\nworkers = 4\n[faults]\nevents = worker 1 down at 1s up at 2s\n";
  EXPECT_EQ(reason_for(ignored_in(repaired + "[sync]\nfault_reaction = elastic\n"), "faults.events"),
            "has no effect in its repair: 'worker 1 up at 2 s': sync.fault_reaction = elastic goes on without a "
            "failed worker and never takes it back (restart waits for it)");
  EXPECT_EQ(reason_for(ignored_in(repaired + "[sync]\nfault_reaction = restart\n"), "faults.events"), "");
  EXPECT_EQ(reason_for(ignored_in(failure + "[sync]\nfault_reaction = elastic\n"), "faults.events"), "");
  EXPECT_EQ(reason_for(ignored_in(repaired + "[training]\nstrategy = async-ps\n"), "faults.events"), "");
}

// One synchronous worker calls no collective: every collective key is without effect (the tree was accepted).
TEST(IgnoredKeys, OneWorkerCallsNoCollective) {
  const std::string one = "[cluster]\nworkers = 1\n[collective]\nalgorithm = tree\n";
  EXPECT_EQ(reason_for(ignored_in(one), "collective.algorithm"),
            "has no effect: one worker calls no collective (cluster.workers = 1)");
  EXPECT_EQ(reason_for(ignored_in(one, {"cluster.workers=2"}), "collective.algorithm"), "");
}

TEST(IgnoredKeys, StalenessSettingsFollowTheRule) {
  const std::string ps = "[training]\nstrategy = async-ps\n[ps]\n";
  EXPECT_TRUE(has(reason_for(ignored_in(ps + "staleness_lr = inverse\nstaleness_threshold = 4\n"), "ps.staleness_threshold"),
                  "with ps.staleness_lr = inverse (it applies to hinge)"));
  EXPECT_TRUE(ignored_in(ps + "staleness_lr = hinge\nstaleness_threshold = 4\nstaleness_exponent = 2\n").empty());
}

TEST(IgnoredKeys, DefaultsAreNeverReported) {
  // Defaults and profile values are never reported, however the run is configured.
  for (const std::string& strategy : strategy_names()) {
    const std::string text = "[training]\nstrategy = " + strategy + "\n";
    for (const IgnoredKey& k : ignored_in(text)) ADD_FAILURE() << strategy << ": " << k.describe();
  }
}

}  // namespace
}  // namespace dtsim::sim
