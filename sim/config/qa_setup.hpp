// A transformer run on the QA task (model.arch = transformer, data.dataset = qa): what is checked before it starts,
// and the model its objective trains.
#pragma once

#include <cstddef>

#include "models/qa/qa_objective.hpp"
#include "sim/config/data_setup.hpp"
#include "sim/config/run_config.hpp"
#include "sim/scenario/key_origins.hpp"

namespace dtsim::sim {

// [transformer] shaped for the task: its vocabulary and sequence length come from the data.
models::TransformerConfig qa_transformer_config(const RunConfig& config, const models::QaDataset& train);

// The checks made before the run: the base file against the model's size, the job's memory on every kind of GPU,
// the parameter-server shards against the trained tensors. InputError at the key to change.
void check_qa_run(const RunConfig& config, const QaData& qa, const KeyOrigins& origins);

// The objective's model: the shaped transformer, its adapters, and its base, read from transformer.base or
// initialised from run.model_seed. Throws std::runtime_error when the base file cannot be read (check_qa_run has
// refused a missing or mis-sized one already).
models::QaModelSetup qa_model_setup(const RunConfig& config, const QaData& qa);

// Bytes one GPU holds for the run: the base as stored, the trained weights, their gradients and optimizer state,
// and one batch's activations and backward scratch.
double qa_memory_per_gpu(const RunConfig& config, const models::SpanTransformer<float>& model);

}  // namespace dtsim::sim
