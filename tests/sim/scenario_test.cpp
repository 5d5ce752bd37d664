// Scenario files: precedence of defaults, profiles, the file and --set, and one-line errors that name the
// file, the line and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/config/run_config.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/scenario.hpp"

namespace dtsim::sim {
namespace {

const std::string kProfiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";

Scenario parse(const std::string& text, const std::vector<std::string>& sets = {}) {
  return parse_scenario("test.ini", text, sets, kProfiles);
}

// The message of the InputError that parsing `text` raises ("" if it does not raise).
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    parse(text, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Same for building the run configuration, where checks spanning several keys happen.
std::string config_error_of(const std::string& text) {
  try {
    make_run_config(parse(text));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Scenario, DefaultsProfilesFileAndCommandLineInThatOrder) {
  const Scenario s = parse("[training]\nlr = 0.2\n[gpu]\nefficiency = 0.3\n", {"training.lr=0.3"});
  EXPECT_EQ(s.integer("cluster.workers"), 8);                      // default
  EXPECT_DOUBLE_EQ(s.quantity("gpu.peak_fp32"), 19.5e12);          // a100-40gb profile
  EXPECT_EQ(s.origin("gpu.peak_fp32").file, kProfiles + "/gpu/a100-40gb.ini");
  EXPECT_GT(s.origin("gpu.peak_fp32").line, 0);
  EXPECT_DOUBLE_EQ(s.real("gpu.efficiency"), 0.3);                 // the file overrides the profile
  EXPECT_EQ(s.origin("gpu.efficiency").line, 4);
  EXPECT_DOUBLE_EQ(s.real("training.lr"), 0.3);                    // --set overrides the file
  EXPECT_TRUE(s.origin("training.lr").command_line);
  EXPECT_EQ(s.text("run.name"), "test");                           // from the file name
  EXPECT_DOUBLE_EQ(s.quantity("fabric.bandwidth"), 25e9);
}

TEST(Scenario, CommentsAndWhitespace) {
  const Scenario s = parse("# a comment\n\n[cluster]   \n  workers   =   4   # trailing comment\n");
  EXPECT_EQ(s.integer("cluster.workers"), 4);
}

TEST(Scenario, RunConfigCarriesTheResolvedValues) {
  const RunConfig c = make_run_config(parse("[cluster]\nworkers = 3\n[model]\nhidden = 64, 32\n[compute]\nmath = bf16\n"));
  EXPECT_EQ(c.workers, 3);
  EXPECT_EQ(c.hidden, (std::vector<int>{64, 32}));
  EXPECT_EQ(c.math, MathMode::Bf16);
  EXPECT_DOUBLE_EQ(c.gpu.sustained(c.math), 312e12 * 0.5);
  EXPECT_EQ(c.global_batch(), 3 * 32);
  EXPECT_EQ(c.scenario_json["cluster"]["workers"], 3);
  EXPECT_EQ(c.scenario_json["fabric"]["bandwidth"], 25e9);
}

TEST(Scenario, EmptyHiddenListMeansLogisticRegression) {
  EXPECT_TRUE(make_run_config(parse("[model]\nhidden =\n")).hidden.empty());
}

TEST(Scenario, EveryKeyAppearsInTheResolvedJson) {
  const auto json = parse("").to_json();
  for (const KeySpec& k : all_keys()) EXPECT_TRUE(json[k.section()].contains(k.field())) << k.name;
}

TEST(ScenarioErrors, UnknownKeySuggestsTheNearestOne) {
  const std::string e = error_of("[training]\nlr = 0.1\nbatch_per_wroker = 8\n");
  EXPECT_TRUE(contains(e, "test.ini:3")) << e;
  EXPECT_TRUE(contains(e, "training.batch_per_wroker")) << e;
  EXPECT_TRUE(contains(e, "did you mean 'training.batch_per_worker'")) << e;
}

TEST(ScenarioErrors, FieldInTheWrongSectionPointsToTheRightOne) {
  const std::string e = error_of("[training]\nworkers = 8\n");
  EXPECT_TRUE(contains(e, "cluster.workers")) << e;
}

TEST(ScenarioErrors, BadUnit) {
  const std::string e = error_of("[fabric]\nbandwidth = 200Gbs\n");
  EXPECT_TRUE(contains(e, "test.ini:2")) << e;
  EXPECT_TRUE(contains(e, "fabric.bandwidth")) << e;
  EXPECT_TRUE(contains(e, "unknown unit 'Gbs'")) << e;
}

TEST(ScenarioErrors, MissingUnit) {
  EXPECT_TRUE(contains(error_of("[fabric]\nlink_latency = 1.3\n"), "has no unit"));
}

TEST(ScenarioErrors, OutOfRange) {
  const std::string e = error_of("[training]\nlr = -0.1\n");
  EXPECT_TRUE(contains(e, "training.lr")) << e;
  EXPECT_TRUE(contains(e, "out of range")) << e;
  EXPECT_TRUE(contains(e, "(0, 100]")) << e;
  EXPECT_TRUE(contains(error_of("[cluster]\nworkers = 0\n"), "cluster.workers"));
  EXPECT_TRUE(contains(error_of("[gpu]\nefficiency = 1.5\n"), "gpu.efficiency"));
}

TEST(ScenarioErrors, WrongTypes) {
  EXPECT_TRUE(contains(error_of("[cluster]\nworkers = eight\n"), "not an integer"));
  EXPECT_TRUE(contains(error_of("[training]\nnesterov = maybe\n"), "not a boolean"));
  EXPECT_TRUE(contains(error_of("[model]\nhidden = 256,,128\n"), "empty element"));
  const std::string e = error_of("[training]\nstrategy = synk\n");
  EXPECT_TRUE(contains(e, "did you mean 'sync'")) << e;
}

TEST(ScenarioErrors, SyntaxAndStructure) {
  EXPECT_TRUE(contains(error_of("[cluster]\nworkers 8\n"), "test.ini:2"));
  EXPECT_TRUE(contains(error_of("workers = 8\n"), "outside of any [section]"));
  // The fix names the section that has the key.
  EXPECT_TRUE(contains(error_of("seed = 3\n"), "put it under [run]")) << error_of("seed = 3\n");
  EXPECT_TRUE(contains(error_of("[cluster\nworkers = 8\n"), "malformed section header"));
  const std::string dup = error_of("[cluster]\nworkers = 8\nworkers = 4\n");
  EXPECT_TRUE(contains(dup, "test.ini:3")) << dup;
  EXPECT_TRUE(contains(dup, "first at line 2")) << dup;
  const std::string section = error_of("[trainng]\nlr = 0.1\n");
  EXPECT_TRUE(contains(section, "did you mean [training]")) << section;
}

TEST(ScenarioErrors, CommandLineOverrides) {
  EXPECT_TRUE(contains(error_of("", {"training.lrr=0.1"}), "command line"));
  EXPECT_TRUE(contains(error_of("", {"training.lrr=0.1"}), "did you mean 'training.lr'"));
  EXPECT_TRUE(contains(error_of("", {"lr"}), "expected --set section.key=value"));
  EXPECT_TRUE(contains(error_of("", {"training.lr=abc"}), "training.lr"));
}

TEST(ScenarioErrors, Profiles) {
  const std::string e = error_of("[gpu]\nprofile = a100-40g\n");
  EXPECT_TRUE(contains(e, "test.ini:2")) << e;
  EXPECT_TRUE(contains(e, "gpu.profile")) << e;
  EXPECT_TRUE(contains(e, "did you mean 'a100-40gb'")) << e;
  // Without a profile every GPU field must be given: reading one that is not fails, at the key.
  EXPECT_EQ(error_of("[gpu]\nprofile =\n"), "") << "a profile section may stay empty until it is read";
  const std::string none = config_error_of("[gpu]\nprofile =\n");
  EXPECT_TRUE(contains(none, "has no value")) << none;
  EXPECT_TRUE(contains(none, "gpu.")) << none;
  try {
    (void)parse("[gpu]\nprofile =\n").quantity("gpu.peak_fp32");
    ADD_FAILURE() << "an unset key was read";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "gpu.peak_fp32: has no value")) << e.what();
  }
  // The other sections' keys without a default are still required when the file is read.
  EXPECT_TRUE(contains(error_of("", {"training.lr="}), "training.lr")) << error_of("", {"training.lr="});
}

// Under cluster.groups the [gpu] section is on no node: it may be left empty, and nothing checks a group's GPU
// against it (the transformer's memory, the network's price).
TEST(ScenarioErrors, NodeGroupsDoNotReadTheGpuSection) {
  const RunConfig c = make_run_config(parse("[cluster]\nworkers = 8\ngroups = a:1:h100-80gb:4; b:1:v100-32gb:4\nintra_node_fabric = nvlink4-nvswitch\n"
                                            "[gpu]\nprofile =\n"));
  ASSERT_EQ(c.layout.groups.size(), 2u);
  EXPECT_EQ(c.gpu.name, c.layout.groups[0].gpu.name);
  const std::vector<const GpuSpec*> gpus = gpus_in_use(c);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1]->name, c.layout.groups[1].gpu.name);
  // A network price in another currency than a group's GPU is refused, naming that GPU; the [gpu] section's
  // currency does not matter.
  const std::string groups = "[cluster]\nworkers = 8\ngroups = a:1:h100-80gb:4; b:1:v100-32gb:4\nintra_node_fabric = nvlink4-nvswitch\n";
  const std::string wrong = config_error_of(groups + "[gpu]\nprice_currency = EUR\n[fabric]\nprice_low = 1\n"
                                            "price_high = 2\nprice_currency = EUR\n");
  EXPECT_TRUE(contains(wrong, "fabric.price_currency")) << wrong;
  EXPECT_TRUE(contains(wrong, "of cluster.groups is priced in 'CNY'")) << wrong;
  EXPECT_EQ(config_error_of(groups + "[gpu]\nprice_currency = EUR\n[fabric]\nprice_low = 1\nprice_high = 2\n"
                                     "price_currency = CNY\n"),
            "");
}

TEST(ScenarioErrors, ProfileFilesAreCheckedLikeScenarios) {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim_profile_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "bad.ini") << "[gpu]\nname = x\npeak_fp32 = 10 bogus\n";
    std::ofstream(dir / "foreign.ini") << "[training]\nlr = 0.1\n";
  }
  const std::string bad = error_of("[gpu]\nprofile = " + (dir / "bad.ini").string() + "\n");
  EXPECT_TRUE(contains(bad, "bad.ini:3")) << bad;
  EXPECT_TRUE(contains(bad, "gpu.peak_fp32")) << bad;
  const std::string foreign = error_of("[gpu]\nprofile = " + (dir / "foreign.ini").string() + "\n");
  EXPECT_TRUE(contains(foreign, "holds only a [gpu] section")) << foreign;
  std::filesystem::remove_all(dir);
}

TEST(ScenarioErrors, MissingScenarioFile) {
  try {
    load_scenario("/nonexistent/scenario.ini", {}, kProfiles);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/scenario.ini")) << e.what();
    EXPECT_TRUE(contains(e.what(), "not found")) << e.what();
  }
}

TEST(ScenarioErrors, CombinationsOfKeys) {
  EXPECT_TRUE(contains(config_error_of("[training]\nwarmup_epochs = 1\nwarmup_steps = 10\n"), "training.warmup_steps"));
  EXPECT_TRUE(contains(config_error_of("[data]\ndataset = synthetic\n[model]\narch = lenet\n"), "model.arch"));
  EXPECT_TRUE(contains(config_error_of("[data]\npartition = natural\n"), "data.partition"));
  EXPECT_TRUE(contains(config_error_of("[data]\npartition = groups\n"), "data.label_groups"));
  const std::string sum = config_error_of("[data]\npartition = groups\nlabel_groups = a:0-4:2; b:5-9:2\n");
  EXPECT_TRUE(contains(sum, "hold 4 workers but cluster.workers is 8")) << sum;
  const std::string overlap = config_error_of("[data]\npartition = groups\nlabel_groups = a:0-5:4; b:5-9:4\n");
  EXPECT_TRUE(contains(overlap, "test.ini:3")) << overlap;
  EXPECT_TRUE(contains(overlap, "label 5 is in two groups")) << overlap;
}

TEST(LabelGroups, ParsesNamesRangesListsAndWorkers) {
  const auto groups = parse_label_groups(" medical : 0-2,7 : 3 ; finance:3-6,8-9:5 ;");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "medical");
  EXPECT_EQ(groups[0].labels, (std::vector<int>{0, 1, 2, 7}));
  EXPECT_EQ(groups[0].workers, 3);
  EXPECT_EQ(groups[1].labels, (std::vector<int>{3, 4, 5, 6, 8, 9}));
  EXPECT_EQ(groups[1].workers, 5);
  EXPECT_TRUE(parse_label_groups("").empty());
  EXPECT_THROW(parse_label_groups("medical:0-4"), ValueError);
  EXPECT_THROW(parse_label_groups("medical:4-0:2"), ValueError);
  EXPECT_THROW(parse_label_groups("medical:0-4:0"), ValueError);
}

TEST(Keys, RegistryIsConsistent) {
  for (const KeySpec& k : all_keys()) {
    EXPECT_NE(k.name.find('.'), std::string::npos) << k.name;
    EXPECT_FALSE(k.help.empty()) << k.name;
    EXPECT_EQ(find_key(k.name), &k);
    if (!k.default_text.empty()) {
      EXPECT_NO_THROW(validate_value(k, k.default_text)) << k.name;
    }
    if (k.type == ValueType::Choice) {
      EXPECT_FALSE(k.choices.empty()) << k.name;
    }
  }
}

}  // namespace
}  // namespace dtsim::sim
