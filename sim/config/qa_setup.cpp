#include "sim/config/qa_setup.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/input_file.hpp"
#include "sim/config/numerics_setup.hpp"
#include "sim/config/strategy.hpp"
#include "sim/scenario/units.hpp"

namespace dtsim::sim {

namespace fs = std::filesystem;

models::TransformerConfig qa_transformer_config(const RunConfig& c, const models::QaDataset& train) {
  models::TransformerConfig t = c.qa_model.transformer;
  t.vocab = train.vocab_size;
  t.seq_len = train.seq_len();
  return t;
}

double qa_memory_per_gpu(const RunConfig& c, const models::SpanTransformer<float>& model) {
  const models::MemorySetup setup = run_memory_setup(c);
  const double trained = static_cast<double>(model.trained_param_count());
  // A trained base is its own weights; adapters are weights beside the frozen base.
  const double stored_base =
      static_cast<double>(models::base_storage_bytes(model, c.qa_model.base_format));  // the frozen base
  const double weights = model.lora().enabled() ? stored_base + 4.0 * trained : 4.0 * trained;
  const double activations = 4.0 * static_cast<double>(model.workspace_values(c.batch_per_worker));
  return weights + trained * (4.0 + setup.optimizer_bytes) + activations;
}

void check_qa_run(const RunConfig& c, const QaData& qa, const KeyOrigins& at) {
  const models::SpanTransformer<float> model(qa_transformer_config(c, qa.train), c.qa_model.lora);
  if (!c.qa_model.base_path.empty()) {
    const std::string& path = c.qa_model.base_path;
    if (const models::InputFileProblem problem = models::input_file_problem(path))
      at.fail("transformer.base", "'" + path + "' " + problem.reason,
              "name the model.bin of a run that trained the whole transformer (output.save_model = true)");
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    const uintmax_t want = model.base_param_count() * sizeof(float);
    if (ec || size != want)
      at.fail("transformer.base",
              "'" + path + "' holds " + std::to_string(ec ? 0 : size) + " bytes, but a base of this shape is " +
                  std::to_string(want) + " (" + std::to_string(model.base_param_count()) + " float32 values)",
              "use the model.bin of a run with the same [transformer] shape and lora.rank = 0");
  }
  const double need = qa_memory_per_gpu(c, model);
  for (const GpuSpec* gpu : gpus_in_use(c)) {
    if (need <= gpu->memory) continue;
    at.fail(c.layout.groups.empty() ? "gpu.memory" : "cluster.groups",
            "the transformer needs " + format_quantity(need, Dimension::Bytes) + " per GPU but the " + gpu->name +
                " has " + format_quantity(gpu->memory, Dimension::Bytes),
            "lower training.batch_per_worker or use a smaller [transformer]");
  }
  if (reads_section(c.strategy, "ps")) {
    const size_t tensors = model.lora().enabled() ? model.adapter_tensors().size() : model.base_tensors().size();
    if (tensors < static_cast<size_t>(c.ps.servers))
      at.fail("ps.servers",
              "the transformer trains " + std::to_string(tensors) + " tensors, too few for " +
                  std::to_string(c.ps.servers) + " shards of whole tensors",
              "use at most " + std::to_string(tensors) + " shards");
  }
}

models::QaModelSetup qa_model_setup(const RunConfig& c, const QaData& qa) {
  models::QaModelSetup setup;
  setup.model = qa_transformer_config(c, qa.train);
  setup.lora = c.qa_model.lora;
  setup.base_format = c.qa_model.lora.enabled() ? c.qa_model.base_format : models::WeightFormat::Fp32;
  setup.base_weights = c.precision.weights;
  const models::SpanTransformer<float> model(setup.model, setup.lora);
  setup.base.resize(model.base_param_count());
  if (c.qa_model.base_path.empty()) {
    model.init_base(setup.base.data(), c.model_seed());
    return setup;
  }
  std::ifstream in(c.qa_model.base_path, std::ios::binary);
  in.read(reinterpret_cast<char*>(setup.base.data()), static_cast<std::streamsize>(setup.base.size() * sizeof(float)));
  if (!in || in.gcount() != static_cast<std::streamsize>(setup.base.size() * sizeof(float)))
    throw std::runtime_error("cannot read the transformer base '" + c.qa_model.base_path + "'");
  return setup;
}

}  // namespace dtsim::sim
