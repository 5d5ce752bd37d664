// The transformer's keys ([transformer], [lora], data.dataset = qa): what they set, what they refuse and where,
// which of them have no effect, and the data and base a QA run starts from.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/ignored_keys.hpp"
#include "sim/config/qa_setup.hpp"
#include "sim/config/run_config.hpp"
#include "sim/config/run_inputs.hpp"
#include "sim/config/schema.hpp"
#include "sim/scenario/errors.hpp"

namespace dtsim::sim {
namespace {

namespace fs = std::filesystem;

const char* kQa = "[model]\narch = transformer\n[data]\ndataset = qa\ntrain_samples = 200\ntest_samples = 40\n"
                  "[transformer]\ndim = 16\nheads = 2\nlayers = 1\nffn = 32\n[training]\nbatch_per_worker = 8\n";

RunConfig config_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  return make_run_config(parse_scenario("qa.ini", text, sets));
}

// The message of the InputError that `text` raises, or "" when it is accepted.
std::string refusal(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    (void)prepare_run(parse_scenario("qa.ini", text, sets));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string reason_for(const std::string& text, const std::string& key) {
  const Scenario s = parse_scenario("qa.ini", text, {});
  for (const IgnoredKey& k : find_ignored_keys(make_run_config(s), s.origins()))
    if (k.key == key) return k.reason;
  return "";
}

TEST(QaConfig, KeysSetTheTransformerAndItsAdapters) {
  const RunConfig c =
      config_of(std::string(kQa) + "[lora]\nrank = 4\nalpha = 8\ntargets = q, k, mlp\nbase_format = nf4\n");
  EXPECT_EQ(c.qa_model.transformer.dim, 16);
  EXPECT_EQ(c.qa_model.transformer.heads, 2);
  EXPECT_EQ(c.qa_model.transformer.layers, 1);
  EXPECT_EQ(c.qa_model.transformer.ffn, 32);
  EXPECT_EQ(c.qa_model.lora.rank, 4);
  EXPECT_DOUBLE_EQ(c.qa_model.lora.scale(), 2.0);
  EXPECT_TRUE(c.qa_model.lora.q && c.qa_model.lora.k && c.qa_model.lora.mlp);
  EXPECT_FALSE(c.qa_model.lora.v || c.qa_model.lora.o);
  EXPECT_EQ(c.qa_model.base_format, models::WeightFormat::Nf4);
  // The defaults: q and v, no adapters, rotary positions.
  const RunConfig plain = config_of(kQa);
  EXPECT_EQ(plain.qa_model.transformer.positions, models::PositionEncoding::Rotary);
  EXPECT_EQ(config_of(kQa, {"transformer.positions=learned"}).qa_model.transformer.positions,
            models::PositionEncoding::Learned);
  EXPECT_FALSE(plain.qa_model.lora.enabled());
  EXPECT_TRUE(plain.qa_model.lora.q && plain.qa_model.lora.v && !plain.qa_model.lora.k);
}

TEST(QaConfig, RefusesShapesAtTheirKeys) {
  const auto message = [](const std::string& extra, const std::vector<std::string>& sets = {}) {
    try {
      (void)config_of(std::string(kQa) + extra, sets);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string heads = message("", {"transformer.heads=3"});
  EXPECT_TRUE(has(heads, "transformer.heads") && has(heads, "3 heads do not divide transformer.dim = 16")) << heads;
  const std::string target = message("[lora]\nrank = 2\ntargets = q, x\n");
  EXPECT_TRUE(has(target, "lora.targets") && has(target, "'x' is not a projection")) << target;
  const std::string twice = message("[lora]\nrank = 2\ntargets = q, q\n");
  EXPECT_TRUE(has(twice, "'q' is listed twice")) << twice;
  const std::string odd = message("", {"transformer.dim=18"});  // 2 heads of 9
  EXPECT_TRUE(has(odd, "transformer.positions") && has(odd, "= 9 wide, an odd number") &&
              has(odd, "or set transformer.positions = learned"))
      << odd;
  EXPECT_EQ(message("", {"transformer.dim=18", "transformer.positions=learned"}), "");
  const std::string rank = message("[lora]\nrank = 16\n");
  EXPECT_TRUE(has(rank, "lora.rank") && has(rank, "not below")) << rank;
}

TEST(QaConfig, TheTransformerAndTheQaTaskGoTogether) {
  const std::string on_images = refusal("[model]\narch = transformer\n");
  EXPECT_TRUE(has(on_images, "model.arch") && has(on_images, "set data.dataset = qa")) << on_images;
  const std::string mlp = refusal("[data]\ndataset = qa\ntrain_samples = 100\n");
  EXPECT_TRUE(has(mlp, "data.dataset") && has(mlp, "needs model.arch = transformer")) << mlp;
  const std::string natural = refusal(std::string(kQa) + "[data]\npartition = natural\n");
  EXPECT_TRUE(has(natural, "data.partition = groups, e.g. data.label_groups = 'medical:0:2; finance:1:2'")) << natural;
}

TEST(QaConfig, KeysWithoutEffectAreReported) {
  EXPECT_EQ(reason_for("[transformer]\ndim = 32\n", "transformer.dim"),
            "has no effect with model.arch = mlp (only transformer reads [transformer])");
  EXPECT_EQ(reason_for(std::string(kQa) + "[lora]\nalpha = 4\n", "lora.alpha"),
            "has no effect: lora.rank = 0 (no adapters; the whole transformer trains)");
  EXPECT_EQ(reason_for(std::string(kQa) + "[lora]\nrank = 2\nalpha = 4\n", "lora.alpha"), "");
  EXPECT_EQ(reason_for(std::string(kQa) + "[model]\nactivation = tanh\n", "model.activation"),
            "has no effect with model.arch = transformer (its MLP uses GELU)");
  EXPECT_EQ(reason_for(std::string(kQa) + "[model]\ninit = torch-default\n", "model.init"),
            "has no effect with model.arch = transformer (it starts from its own initialisation)");
  EXPECT_EQ(reason_for("[model]\narch = lenet-nopad\ninit = torch-default\n", "model.init"), "");
  EXPECT_EQ(reason_for("[data]\nqa_medical_fraction = 0.9\n", "data.qa_medical_fraction"),
            "has no effect with data.dataset = fashion-mnist (it applies to qa)");
  EXPECT_EQ(reason_for(std::string(kQa) + "[data]\npath = /tmp\n", "data.path"),
            "has no effect with data.dataset = qa (it is generated, not read)");
  EXPECT_EQ(reason_for("[data]\ndataset = synthetic-iid\nsynthetic_alpha = 1\n", "data.synthetic_alpha"),
            "has no effect with data.dataset = synthetic-iid (it applies to synthetic)");
}

TEST(QaConfig, TheDataAreViewsLabelledByDomain) {
  const RunInputs in =
      prepare_run(parse_scenario("qa.ini", std::string(kQa) + "[data]\nqa_medical_fraction = 1\n", {}));
  ASSERT_TRUE(in.qa.has_value());
  EXPECT_EQ(in.train.num_samples, 200);
  EXPECT_EQ(in.test.num_samples, 40);
  EXPECT_EQ(in.train.num_features, in.qa->train.seq_len());
  for (int i = 0; i < in.train.num_samples; ++i) EXPECT_EQ(in.train.labels[i], 0) << i;  // all medical
  int finance = 0;
  for (int i = 0; i < in.test.num_samples; ++i) finance += in.test.labels[i];
  EXPECT_GT(finance, 0);  // the test set holds both domains whatever the training mix
  EXPECT_LT(finance, 40);
  // Token ids as features.
  for (int j = 0; j < in.train.num_features; ++j)
    EXPECT_EQ(in.train.features[j], static_cast<float>(in.qa->train.tokens[j])) << j;
  // The groups partition splits by domain.
  const std::string by_domain = std::string(kQa) +
                                "[cluster]\nworkers = 2\n[data]\npartition = groups\n"
                                "label_groups = medical:0:1; finance:1:1\n";
  const RunInputs split = prepare_run(parse_scenario("qa.ini", by_domain, {}));
  ASSERT_TRUE(split.partition.has_value());
  for (const int32_t i : split.partition->shards[0]) EXPECT_EQ(split.train.labels[i], 0);
  for (const int32_t i : split.partition->shards[1]) EXPECT_EQ(split.train.labels[i], 1);
}

class QaBase : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_qa_base_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write_floats(const std::string& name, size_t count, float value) {
    const std::vector<float> v(count, value);
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), count * 4);
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(QaBase, ABaseFileMustHoldTheModelsParameters) {
  const RunInputs in = prepare_run(parse_scenario("qa.ini", kQa, {}));
  const models::SpanTransformer<float> model(qa_transformer_config(in.config, in.qa->train), {});
  const size_t count = model.base_param_count();
  const std::string missing = refusal(kQa, {"transformer.base=" + (dir_ / "none.bin").string()});
  EXPECT_TRUE(has(missing, "transformer.base") && has(missing, "' not found")) << missing;
  const fs::path short_file = write_floats("short.bin", count - 1, 0.5f);
  const std::string wrong = refusal(kQa, {"transformer.base=" + short_file.string()});
  EXPECT_TRUE(has(wrong, "holds " + std::to_string(4 * (count - 1)) + " bytes")) << wrong;
  EXPECT_TRUE(has(wrong, "(" + std::to_string(count) + " float32 values)")) << wrong;
  // The right size is read as the base.
  const fs::path good = write_floats("good.bin", count, 0.25f);
  const RunInputs ok = prepare_run(parse_scenario("qa.ini", kQa, {"transformer.base=" + good.string()}));
  const models::QaModelSetup setup = qa_model_setup(ok.config, *ok.qa);
  ASSERT_EQ(setup.base.size(), count);
  EXPECT_EQ(setup.base.front(), 0.25f);
  EXPECT_EQ(setup.base.back(), 0.25f);
}

TEST_F(QaBase, ARelativeBaseInAScenarioFileIsRelativeToItsFolder) {
  const RunInputs in = prepare_run(parse_scenario("qa.ini", kQa, {}));
  const models::SpanTransformer<float> model(qa_transformer_config(in.config, in.qa->train), {});
  write_floats("base.bin", model.base_param_count(), 0.1f);
  const fs::path scenario = dir_ / "scenario.ini";
  std::ofstream(scenario) << std::string(kQa) << "[transformer]\nbase = base.bin\n";
  const RunInputs from_file = prepare_run(load_scenario(scenario.string(), {}));
  EXPECT_EQ(from_file.config.qa_model.base_path, (dir_ / "base.bin").string());
}

TEST(QaConfig, MemoryIsCheckedAgainstTheGpu) {
  const std::string small = refusal(kQa, {"gpu.memory=100KB"});
  EXPECT_TRUE(has(small, "gpu.memory") && has(small, "the transformer needs")) << small;
  // What is counted: the base, the trained weights' gradients and Adam's two moments, a batch's activations.
  RunConfig c = config_of(std::string(kQa) + "[lora]\nrank = 2\n[training]\noptimizer = adam\n");
  const RunInputs in = prepare_run(parse_scenario("qa.ini", kQa, {}));
  const models::SpanTransformer<float> lora(qa_transformer_config(c, in.qa->train), c.qa_model.lora);
  const double adapters = static_cast<double>(lora.adapter_param_count());
  EXPECT_DOUBLE_EQ(qa_memory_per_gpu(c, lora), 4.0 * lora.base_param_count() + adapters * (4 + 4 + 8) +
                                                   4.0 * lora.workspace_values(8));
}

}  // namespace
}  // namespace dtsim::sim
