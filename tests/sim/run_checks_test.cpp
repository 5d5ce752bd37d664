// The configuration's seams: the cross-section rules run on a typed RunConfig built without any scenario,
// errors are located through KeyOrigins alone, compression settings are resolved once per run, and every
// choice key offers exactly the names of its enum's table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "models/architectures.hpp"
#include "models/loss_scaler.hpp"
#include "models/lr_schedule.hpp"
#include "models/mixed_precision.hpp"
#include "models/optimizer.hpp"
#include "sim/config/run_checks.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {
namespace {

// A small valid configuration: 4 workers on a star, synchronous, no faults.
RunConfig small_config() {
  RunConfig c;
  c.workers = 4;
  c.gpu.peak_fp32 = c.gpu.peak_tf32 = c.gpu.peak_bf16 = 1e12;
  c.gpu.efficiency = 1.0;
  c.fabric.bandwidth = 1e9;
  return c;
}

// The InputError check_run_config raises for `c`, located in "typed.ini"; "" when it accepts it.
std::string error_of(const RunConfig& c, const std::map<std::string, Origin>& where = {}) {
  try {
    check_run_config(c, KeyOrigins("typed.ini", where));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RunChecks, AcceptAValidTypedConfiguration) { EXPECT_EQ(error_of(small_config()), ""); }

TEST(RunChecks, RefuseFaultsUnderAStrategyThatCannotSurviveThem) {
  RunConfig c = small_config();
  c.heterogeneity.faults.events = {FaultEvent{FaultTarget::Worker, 1, 2.0}};
  EXPECT_EQ(error_of(c), "") << "sync survives a failed worker";
  c.strategy = Strategy::Local;
  const std::string error = error_of(c, {{"faults.events", Origin::at("typed.ini", 7)}});
  EXPECT_EQ(error.rfind("typed.ini:7: faults.events: training.strategy 'local' cannot survive failures yet", 0), 0u)
      << error;
}

TEST(RunChecks, RefuseLinkFailuresUnderTheParameterServerOnly) {
  RunConfig c = small_config();
  c.heterogeneity.faults.events = {FaultEvent{FaultTarget::Link, 1, 2.0}};
  EXPECT_EQ(error_of(c), "");
  c.strategy = Strategy::AsyncPs;
  EXPECT_NE(error_of(c).find("faults.events: async-ps survives worker and node failures, not link failures"),
            std::string::npos);
}

TEST(RunChecks, ApplyFederatedRulesOnlyToFederatedRuns) {
  RunConfig c = small_config();
  c.optimizer.kind = models::OptimizerKind::Adam;
  c.fl.requested_clients_per_round = 9;
  EXPECT_EQ(error_of(c), "") << "[fl] is not read by sync";
  c.strategy = Strategy::Federated;
  EXPECT_NE(error_of(c).find("fl.clients_per_round: 9 clients per round but only 4 clients"), std::string::npos);
  c.fl.requested_clients_per_round = 0;
  EXPECT_NE(error_of(c).find("training.optimizer: federated clients train with local SGD"), std::string::npos);
  c.optimizer.kind = models::OptimizerKind::Sgd;
  c.schedule.decay = models::LrDecay::Cosine;
  EXPECT_NE(error_of(c).find("training.decay: federated clients use training.lr decayed per round by fl.lr_decay"), std::string::npos);
  // The key that asks for a schedule is the one blamed.
  c.schedule.decay = models::LrDecay::Constant;
  c.schedule.warmup_steps = 10;
  EXPECT_NE(error_of(c).find("training.warmup_steps: federated clients use training.lr decayed per round"),
            std::string::npos) << error_of(c);
  c.schedule.warmup_steps = 0;
  c.schedule.scaling = models::LrScaling::Sqrt;
  EXPECT_NE(error_of(c).find("training.lr_scaling: federated clients"), std::string::npos) << error_of(c);
}

TEST(RunChecks, RefuseCompressionWhereTheStrategyCannotServeIt) {
  RunConfig c = small_config();
  c.compression.settings.kind = models::CompressorKind::Sign;
  c.compression.settings.majority_vote = true;
  EXPECT_EQ(error_of(c), "") << "sync takes a majority vote";
  c.strategy = Strategy::AsyncPs;
  EXPECT_NE(error_of(c).find("compression.majority_vote: a majority vote needs a synchronous group; async-ps"),
            std::string::npos);
  c = small_config();
  c.compression.settings.kind = models::CompressorKind::TopK;
  c.precision.loss_scaling = models::LossScaleMode::Dynamic;
  EXPECT_NE(error_of(c).find("precision.loss_scaling: loss scaling cannot be combined with gradient compression"),
            std::string::npos);
  c.precision.loss_scaling = models::LossScaleMode::None;
  c.momentum = 0.9;
  c.compression.settings.momentum_correction = 0.9;
  EXPECT_NE(error_of(c).find("compression.momentum_correction:"), std::string::npos);
}

TEST(RunChecks, RefuseAShapeThatCannotHoldTheStrategysServers) {
  RunConfig c = small_config();
  c.layout.topology = Topology::Torus;
  c.layout.torus_dims = {2, 2};
  EXPECT_EQ(error_of(c), "") << "four workers fill a 2x2 torus";
  c.strategy = Strategy::Federated;  // adds an aggregator host: five endpoints
  EXPECT_NE(error_of(c).find("cluster.torus_dims"), std::string::npos) << error_of(c);
}

TEST(RunChecks, RefuseImageModelsOnFlatSyntheticData) {
  RunConfig c = small_config();
  c.data.dataset = DatasetSource::Synthetic;
  c.arch = models::Architecture::Mlp;
  EXPECT_EQ(error_of(c), "");
  c.arch = models::Architecture::LeNet;
  EXPECT_NE(error_of(c).find("model.arch: 'lenet' needs images, but data.dataset is 'synthetic'"), std::string::npos);
}

// Training allreduces its gradients, so an algorithm that only serves all-to-all is refused at the key;
// `dtsim collective` (ConfigUse::CollectiveCommand) times any collective and takes it.
TEST(RunChecks, RefuseAnAlgorithmWithoutAllreduceForTrainingOnly) {
  RunConfig c = small_config();
  c.collectives.algorithm = Algorithm::Direct;
  const std::string error = error_of(c, {{"collective.algorithm", Origin::at("typed.ini", 3)}});
  EXPECT_EQ(error.rfind("typed.ini:3: collective.algorithm: 'direct' does not implement allreduce, which training runs", 0),
            0u)
      << error;
  EXPECT_NO_THROW(check_run_config(c, KeyOrigins("typed.ini", {}), ConfigUse::CollectiveCommand));
}

TEST(KeyOrigins, LocateErrorsAndTellWhatTheUserSet) {
  const KeyOrigins origins("run.ini", {{"training.lr", Origin::at("run.ini", 4)},
                                       {"training.epochs", Origin::from_command_line()},
                                       {"gpu.memory", Origin::at("profiles/a100.ini", 9)},
                                       {"training.momentum", Origin::default_value()}});
  EXPECT_TRUE(origins.set_by_user("training.lr"));
  EXPECT_TRUE(origins.set_by_user("training.epochs"));
  EXPECT_FALSE(origins.set_by_user("gpu.memory")) << "a profile's value is not the user's";
  EXPECT_FALSE(origins.set_by_user("training.momentum"));
  EXPECT_FALSE(origins.set_by_user("no.such_key"));
  const auto message = [&](const std::string& key) {
    try {
      origins.fail(key, "bad", "fix it");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("training.lr"), "run.ini:4: training.lr: bad; fix it");
  EXPECT_EQ(message("training.momentum").rfind("run.ini", 0), 0u) << "a default points at the scenario file";
}

TEST(KeyOrigins, MatchTheScenarioTheyCameFrom) {
  const Scenario s = parse_scenario("mine.ini", "[training]\nlr = 0.1\n", {"training.epochs=2"});
  const KeyOrigins origins = s.origins();
  EXPECT_EQ(origins.of("training.lr").line, 2);
  EXPECT_TRUE(origins.set_by_user("training.lr"));
  EXPECT_TRUE(origins.of("training.epochs").command_line);
  EXPECT_FALSE(origins.set_by_user("training.momentum"));
}

TEST(ResolvedCompression, CountsEpochsInStepsOrInRounds) {
  RunInputs in;
  in.config.compression.settings.kind = models::CompressorKind::TopK;
  in.config.compression.settings.start_step = 5;
  in.config.compression.start_epoch = 2;
  in.length.steps_per_epoch = 30;
  EXPECT_EQ(resolved_compression(in).start_step, 60) << "two epochs of 30 steps";
  in.config.strategy = Strategy::AsyncPs;
  EXPECT_EQ(resolved_compression(in).start_step, 60);
  in.config.strategy = Strategy::Federated;
  EXPECT_EQ(resolved_compression(in).start_step, 5) << "federated: two rounds, later than step 5 is not";
  in.config.compression.start_epoch = 8;
  EXPECT_EQ(resolved_compression(in).start_step, 8);
}

// A choice key's list is its enum's table: parsing, printing and the documented choices cannot drift apart.
TEST(ChoiceKeys, OfferExactlyTheirTablesNames) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> tables = {
      {"compute.device", gpu::device_names()},
      {"compute.math", math_mode_table().names()},
      {"network.model", network_model_table().names()},
      {"model.arch", models::architecture_table().names()},
      {"model.activation", models::activation_table().names()},
      {"data.dataset", dataset_source_table().names()},
      {"data.partition", partition_kind_table().names()},
      {"training.strategy", strategy_table().names()},
      {"training.optimizer", models::optimizer_kind_table().names()},
      {"training.lr_scaling", models::lr_scaling_table().names()},
      {"training.decay", models::lr_decay_table().names()},
      {"precision.weights", models::number_format_table().names()},
      {"precision.loss_scaling", models::loss_scale_mode_table().names()},
      {"sync.fault_reaction", fault_reaction_table().names()},
      {"fl.sampling", client_sampling_table().names()},
      {"fl.weighting", client_weighting_table().names()},
      {"fl.straggler_policy", straggler_policy_table().names()},
  };
  for (const auto& [key, names] : tables) {
    const KeySpec* spec = find_key(key);
    ASSERT_NE(spec, nullptr) << key;
    EXPECT_EQ(spec->choices, names) << key;
  }
}

TEST(ChoiceKeys, ParseIntoTheirEnums) {
  const Scenario s = parse_scenario("enums.ini",
                                    "[compute]\ndevice = cpu\nmath = bf16\n[network]\nmodel = ib\n"
                                    "[data]\ndataset = synthetic-iid\npartition = iid\n"
                                    "[training]\noptimizer = lamb\nlr_scaling = sqrt\ndecay = cosine\n"
                                    "[precision]\nweights = bf16\nloss_scaling = static\n"
                                    "[sync]\nfault_reaction = restart\n",
                                    {});
  const RunConfig c = make_run_config(s);
  EXPECT_EQ(c.device, gpu::Device::Cpu);
  EXPECT_EQ(c.math, MathMode::Bf16);
  EXPECT_EQ(c.network_model, NetworkModel::Ib);
  EXPECT_EQ(c.data.dataset, DatasetSource::SyntheticIid);
  EXPECT_EQ(c.data.partition, PartitionKind::Iid);
  EXPECT_EQ(c.optimizer.kind, models::OptimizerKind::Lamb);
  EXPECT_EQ(c.schedule.scaling, models::LrScaling::Sqrt);
  EXPECT_EQ(c.schedule.decay, models::LrDecay::Cosine);
  EXPECT_EQ(c.precision.weights, gpu::NumberFormat::Bf16);
  EXPECT_EQ(c.precision.loss_scaling, models::LossScaleMode::Static);
  EXPECT_EQ(c.sync.fault_reaction, FaultReaction::Restart);
}

}  // namespace
}  // namespace dtsim::sim
