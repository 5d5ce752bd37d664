// The shipped catalog (models/workloads/): every file loads, its parameter count matches the published one
// within 0.5 %, and the file reader refuses bad descriptions with the file, line and field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <tuple>
#include <vector>

#include "models/workload/catalog.hpp"

namespace dtsim::models {
namespace {

const std::string kDir = DTSIM_WORKLOAD_DIR;

TEST(WorkloadCatalog, EveryFileMatchesItsPublishedParameterCount) {
  const auto files = catalog_files(kDir);
  ASSERT_GE(files.size(), 6u);
  for (const auto& file : files) {
    const Workload w = load_workload(file);
    ASSERT_GT(w.published_parameters.value, 0) << file;
    const double error = std::abs(double(w.parameters()) / w.published_parameters.value - 1);
    EXPECT_LT(error, 0.005) << w.name << ": " << w.parameters() << " against " << w.published_parameters.value;
    EXPECT_FALSE(w.sources.empty());
  }
}

TEST(WorkloadCatalog, CountsEqualTheHandDerivedOnes) {
  // Derived by hand from each architecture's shapes (docs/workloads.md shows the sums); Hugging Face's
  // checkpoints load with these numbers of weights.
  EXPECT_EQ(find_workload("resnet50", kDir).parameters(), 25557032u);
  EXPECT_EQ(find_workload("gpt2-xl", kDir).parameters(), 1557611200u);
  EXPECT_EQ(find_workload("llama-7b", kDir).parameters(), 6738415616u);
  EXPECT_EQ(find_workload("llama2-70b", kDir).parameters(), 68976648192u);
  // BertModel (335,141,888 with the pooler) plus the pre-training heads: the masked-LM transform
  // (1024 x 1024 + 1024, norm 2048), the output bias (30,522; the matrix is the tied embedding) and the
  // next-sentence classifier (1024 x 2 + 2).
  EXPECT_EQ(find_workload("bert-large", kDir).parameters(), 335141888u + 1049600 + 2048 + 30522 + 2050);
  // MPT as llm-foundry benchmarks it: per block 12 d² of products, 9 d of biases and 4 d of two LayerNorms;
  // a tied embedding of 50,368 tokens, learned positions of 2048, and a final LayerNorm. The benchmark table's
  // NumParams (published_parameters) is this sum for every size.
  for (const auto& [name, hidden, layers] : std::vector<std::tuple<std::string, uint64_t, uint64_t>>{
           {"mpt-760m", 1536, 24}, {"mpt-1b", 2048, 24}, {"mpt-3b", 2560, 32}, {"mpt-7b", 4096, 32},
           {"mpt-13b", 5120, 40}, {"mpt-30b", 7168, 48}, {"mpt-70b", 8192, 80}}) {
    const Workload mpt = find_workload(name, kDir);
    EXPECT_EQ(mpt.parameters(), layers * (12 * hidden * hidden + 13 * hidden) + (50368 + 2048 + 2) * hidden) << name;
    EXPECT_EQ(double(mpt.parameters()), mpt.published_parameters.value) << name;
  }
  const Workload lora = find_workload("llama-7b-lora", kDir);
  EXPECT_EQ(lora.trainable(), 32u * 2 * 16 * (4096 + 4096));
  EXPECT_EQ(lora.parameters(), 6738415616u + lora.trainable());
}

TEST(WorkloadCatalog, ResNet50ForwardFlopsMatchTorchvision) {
  // torchvision's ResNet-50 page: 4.09 GFLOPS per 224 x 224 image, counted as multiply-adds (rounded to 0.01).
  const Workload w = find_workload("resnet50", kDir);
  EXPECT_NEAR(w.forward_flops() / 2 / 4.09e9, 1.0, 0.0025);
  EXPECT_EQ(w.sample, "image");
}

TEST(WorkloadCatalog, FindsByNameOrPathAndListsTheKnownOnes) {
  EXPECT_EQ(find_workload(kDir + "/gpt2-xl.json", kDir).name, "gpt2-xl");
  try {
    find_workload("gpt3", kDir);
    FAIL();
  } catch (const WorkloadFileError& e) {
    EXPECT_NE(std::string(e.what()).find("known: bert-large, gpt2-xl, llama-7b, llama-7b-lora, llama2-70b, mpt-13b, mpt-1b, mpt-30b, mpt-3b, mpt-70b, mpt-760m, mpt-7b, resnet50"), std::string::npos)
        << e.what();
  }
}

std::string error_of(const std::string& text) {
  try {
    parse_workload(text, "w.json");
  } catch (const WorkloadFileError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kTiny = R"({
  "name": "tiny",
  "title": "t",
  "architecture": "transformer",
  "sources": ["here"],
  "transformer": {
    "layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "vocab": 100, "sequence": 16,
    "feed_forward": "gelu", "norm": "layernorm"%s
  }
})";

std::string tiny(const std::string& extra) {
  std::string text = kTiny;
  text.replace(text.find("%s"), 2, extra);
  return text;
}

TEST(WorkloadFile, ErrorsNameTheFileLineAndField) {
  EXPECT_EQ(error_of(tiny("")), "(no error)");
  EXPECT_EQ(error_of(tiny(",\n    \"lora_rank\": 4")),
            "w.json:9: transformer.lora_rank: is not a field here; fields: layers, hidden, heads, kv_heads, ffn, "
            "vocab, sequence, max_positions, token_types, feed_forward, norm, bias, embedding_norm, final_norm, "
            "lm_head, span_head, tied_embeddings, head_transform, head_bias, pooler, pooler_classes, dropout, "
            "flash_attention, causal, lora");
  EXPECT_EQ(error_of(tiny(", \"kv_heads\": 3")),
            "w.json:8: transformer.kv_heads: must divide heads (4): each key/value head serves a whole group");
  EXPECT_EQ(error_of(tiny(", \"bias\": 1")), "w.json:8: transformer.bias: must be true or false, not 1");
  std::string relu = tiny("");
  relu.replace(relu.find("\"gelu\""), 6, "\"relu\"");
  const std::string swiglu = error_of(relu);
  EXPECT_EQ(swiglu, "w.json:8: transformer.feed_forward: \"relu\" is not known; use gelu or swiglu");
  EXPECT_NE(error_of("{\"name\": ").find("w.json:1: is not valid JSON"), std::string::npos);
  std::string no_sources = tiny("");
  no_sources.replace(no_sources.find("[\"here\"]"), 8, "[]");
  EXPECT_EQ(error_of(no_sources), "w.json:5: sources: must list at least one source (URL, paper or arXiv)");
  // An adapter's rank is below the smaller side of the matrix it adapts: the hidden width (64) for q, the
  // feed-forward's 256 being wider (as the QA transformer's lora.rank).
  const std::string wide = error_of(tiny(", \"lora\": {\"rank\": 64, \"alpha\": 16, \"targets\": [\"q\", \"up\"]}"));
  EXPECT_NE(wide.find("transformer.lora.rank: is 64, not below the narrowest adapted projection's 64"), std::string::npos)
      << wide;
  EXPECT_NE(wide.find("use at most 63"), std::string::npos) << wide;
  EXPECT_EQ(error_of(tiny(", \"lora\": {\"rank\": 63, \"alpha\": 16, \"targets\": [\"q\", \"up\"]}")), "(no error)");
  std::string both = tiny("");
  both.insert(both.rfind('}'), ", \"resnet\": {}");
  EXPECT_EQ(error_of(both), "w.json:10: resnet: does not apply to architecture transformer; remove it");
}

TEST(WorkloadFile, TheNameMustBeTheFileName) {
  const auto path = std::filesystem::temp_directory_path() / "dtsim-workload-other.json";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string text = tiny("");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  try {
    load_workload(path.string());
    FAIL();
  } catch (const WorkloadFileError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: name: is \"tiny\" but the file is dtsim-workload-other.json"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace dtsim::models
