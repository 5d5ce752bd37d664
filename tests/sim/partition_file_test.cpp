// data.partition = file: a partition read from a JSON file reaches the run shard for shard, its path resolves
// like a profile's, and every way the file can be wrong is one InputError naming the file and the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/partition.hpp"
#include "sim/config/ignored_keys.hpp"
#include "sim/config/partition_file.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class PartitionFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim-partition-file-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // The error message of preparing a small federated run over `file` with `workers` workers ("" if none).
  std::string run_error(const std::string& file, int workers = 2) const {
    try {
      (void)prepare(file, workers);
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "data.partition_file") << e.what();
      return e.what();
    }
    return "";
  }

  RunInputs prepare(const std::string& file, int workers = 2) const {
    const std::string text = "[cluster]\nworkers = " + std::to_string(workers) +
                             "\n[training]\nstrategy = federated\nbatch_per_worker = 4\n[data]\ntrain_samples = 300\n"
                             "test_samples = 50\npartition = file\npartition_file = " + file + "\n";
    return prepare_run(parse_scenario("file.ini", text, {}, std::string(DTSIM_SOURCE_DIR) + "/network_profiles"));
  }

  fs::path dir_;
};

TEST_F(PartitionFile, TheRunTrainsOnExactlyTheShardsWritten) {
  const std::string file = write("split.json", R"({"source": "test", "shards": [[7, 3, 250, 0], [1, 2, 299]]})");
  const RunInputs in = prepare(file);
  ASSERT_TRUE(in.partition.has_value());
  const std::vector<std::vector<int32_t>> sorted = {{0, 3, 7, 250}, {1, 2, 299}};
  EXPECT_EQ(in.partition->shards, sorted);
  EXPECT_EQ(in.partition->hash, models::partition_hash(sorted));
  EXPECT_TRUE(in.ignored_keys.empty());
}

TEST_F(PartitionFile, EachWayTheFileCanBeWrongNamesTheFileAndTheKey) {
  const std::string missing = (dir_ / "missing.json").string();
  EXPECT_TRUE(has(run_error(missing), missing + ": data.partition_file: partition file not found")) << run_error(missing);
  const std::string folder = dir_.string();
  EXPECT_TRUE(has(run_error(folder), folder + ": data.partition_file: partition file is a folder, not a file"))
      << run_error(folder);

  const std::string broken = write("broken.json", "{\"shards\": [[1, 2],\n  [3,\n");
  const std::string b = run_error(broken);
  EXPECT_TRUE(has(b, broken + ":3: data.partition_file: not valid JSON")) << b;

  const std::string shapes[] = {R"([[1, 2], [3]])", R"({"shards": []})", R"({"shards": [[1], 2]})",
                                R"({"shards": [[1], [-4]]})", R"({"shards": [[1], [2.5]]})"};
  for (const std::string& shape : shapes) {
    const std::string f = write("shape.json", shape);
    const std::string e = run_error(f);
    EXPECT_TRUE(has(e, f + ": data.partition_file: ")) << shape << " → " << e;
    EXPECT_TRUE(has(e, "write {\"shards\": [[indices of worker 0]")) << e;
  }

  const std::string three = write("three.json", R"({"shards": [[1], [2], [3]]})");
  EXPECT_TRUE(has(run_error(three), "lists 3 shards but there are 2 workers; set cluster.workers = 3"));
  const std::string outside = write("outside.json", R"({"shards": [[1], [300]]})");
  EXPECT_TRUE(has(run_error(outside), "shard 1 holds sample 300, outside the training set's 0..299"));
  const std::string twice = write("twice.json", R"({"shards": [[1, 5], [5]]})");
  EXPECT_TRUE(has(run_error(twice), "sample 5 is in shard 0 and in shard 1"));
  const std::string empty = write("empty.json", R"({"shards": [[1, 5], []]})");
  try {
    (void)prepare(empty);
    FAIL() << "an empty shard is refused";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "worker 1 receives no training sample")) << e.what();
  }
}

TEST_F(PartitionFile, ARelativePathIsTheScenarioFoldersInAFileAndTheWorkingFoldersOnTheCommandLine) {
  const fs::path scenario = dir_ / "sub" / "s.ini";
  fs::create_directories(scenario.parent_path());
  std::ofstream(scenario) << "[data]\npartition = file\npartition_file = split.json\n";
  const std::string profiles = std::string(DTSIM_SOURCE_DIR) + "/network_profiles";
  EXPECT_EQ(make_run_config(load_scenario(scenario.string(), {}, profiles)).data.partition_file,
            (dir_ / "sub" / "split.json").string());
  EXPECT_EQ(make_run_config(load_scenario(scenario.string(), {"data.partition_file=other.json"}, profiles))
                .data.partition_file,
            "other.json");
}

TEST_F(PartitionFile, TheKeysAreCheckedAgainstEachOther) {
  try {
    (void)make_run_config(parse_scenario("f.ini", "[data]\npartition = file\n", {}));
    FAIL() << "file without a path is refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "data.partition");
    EXPECT_TRUE(has(e.what(), "data.partition_file is empty")) << e.what();
  }
  const Scenario s = parse_scenario("f.ini", "[data]\npartition = iid\npartition_file = split.json\n", {});
  const std::vector<IgnoredKey> ignored = find_ignored_keys(make_run_config(s), s.origins());
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0].key, "data.partition_file");
  EXPECT_EQ(ignored[0].reason, "has no effect with data.partition = iid (it applies to file)");
}

TEST(PartitionFromShards, SortsHashesAndRefusesWhatIsNotAPartition) {
  const models::Partition p = models::partition_from_shards({{9, 1}, {4}}, 10);
  EXPECT_EQ(p.shards, (std::vector<std::vector<int32_t>>{{1, 9}, {4}}));
  EXPECT_EQ(p.hash, models::partition_hash(p.shards));
  EXPECT_THROW(models::partition_from_shards({}, 10), std::invalid_argument);
  EXPECT_THROW(models::partition_from_shards({{1, 1}}, 10), std::invalid_argument);
  EXPECT_THROW(models::partition_from_shards({{10}}, 10), std::invalid_argument);
  try {
    (void)models::partition_from_shards({{3}, {2, 3}}, 10);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "sample 3 is in shard 0 and in shard 1");
  }
  try {
    (void)models::partition_from_shards({{3, 3}}, 10);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "sample 3 is in shard 0 twice");
  }
}

}  // namespace
}  // namespace dtsim::sim
