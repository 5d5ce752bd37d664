#include "models/workload/memory.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace dtsim::models {

const NameTable<OptimizerKernels>& optimizer_kernels_table() {
  static const NameTable<OptimizerKernels> table{{OptimizerKernels::Fused, "fused"}, {OptimizerKernels::Foreach, "foreach"}};
  return table;
}

void validate(const MemorySetup& s) {
  if (s.data_parallel < 1) throw std::invalid_argument("data_parallel must be at least 1");
  if (s.zero_stage < 0 || s.zero_stage > 3) throw std::invalid_argument("zero_stage must be 0, 1, 2 or 3");
  if (!(s.micro_batch > 0)) throw std::invalid_argument("micro_batch must be positive");
  if (!(s.weight_bytes > 0) || !(s.gradient_bytes > 0) || !(s.activation_bytes > 0) || s.optimizer_bytes < 0)
    throw std::invalid_argument("element sizes must be positive");
}

MemoryBreakdown state_memory(double parameters, double trainable, const MemorySetup& s) {
  validate(s);
  const double n = s.data_parallel;
  MemoryBreakdown m;
  // Stage 1 shards what only the optimizer step touches (moments and the fp32 master copy), stage 2 the
  // gradients too, stage 3 the weights themselves (gathered layer by layer when needed).
  m.weights = s.weight_bytes * parameters / (s.zero_stage >= 3 ? n : 1);
  const bool master = s.master_weights && s.weight_bytes < 4;
  m.master_weights = (master ? 4.0 * trainable : 0.0) / (s.zero_stage >= 1 ? n : 1);
  m.optimizer = s.optimizer_bytes * trainable / (s.zero_stage >= 1 ? n : 1);
  m.gradients = s.gradient_bytes * trainable / (s.zero_stage >= 2 ? n : 1);
  return m;
}

MemoryBreakdown memory_per_gpu(const Workload& w, const MemorySetup& s) {
  MemoryBreakdown m = state_memory(static_cast<double>(w.parameters()), static_cast<double>(w.trainable()), s);
  m.activations = s.micro_batch * w.saved_bytes(s.activation_bytes, s.checkpointing);
  return m;
}

std::string format_gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, bytes >= 10e9 ? "%.0f GB" : "%.1f GB", bytes / 1e9);
  return text;
}

namespace {
std::string format_count(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}
}  // namespace

std::vector<std::string> ways_to_fit(const Workload& w, const MemorySetup& setup, double capacity) {
  std::vector<std::string> ways;
  const auto fits = [&](const MemorySetup& s) { return memory_per_gpu(w, s).total() <= capacity; };
  if (fits(setup)) return ways;
  const auto offer = [&](const MemorySetup& s, const std::string& what) {
    const double need = memory_per_gpu(w, s).total();
    if (need <= capacity) ways.push_back(what + " (" + format_gigabytes(need) + ")");
  };
  if (!setup.checkpointing) {
    MemorySetup s = setup;
    s.checkpointing = true;
    offer(s, "activation checkpointing");
  }
  for (int stage = setup.zero_stage + 1; stage <= 3; ++stage) {
    MemorySetup s = setup;
    s.zero_stage = stage;
    offer(s, "ZeRO stage " + std::to_string(stage));
    if (!setup.checkpointing && ways.empty()) {
      s.checkpointing = true;
      offer(s, "ZeRO stage " + std::to_string(stage) + " with activation checkpointing");
    }
  }
  // A smaller micro-batch: the largest halving of it that fits as it is (gradient accumulation keeps the global
  // batch), else micro-batch 1 with checkpointing.
  if (setup.micro_batch > 1) {
    MemorySetup s = setup;
    bool offered = false;
    for (double m = std::floor(setup.micro_batch / 2); m >= 1 && !offered; m = std::floor(m / 2)) {
      s.micro_batch = m;
      if (fits(s)) {
        offer(s, "micro-batch " + format_count(m) + " and gradient accumulation to keep the global batch");
        offered = true;
      }
    }
    if (!offered && ways.empty()) {
      s.micro_batch = 1;
      s.checkpointing = true;
      offer(s, "micro-batch 1 with activation checkpointing and gradient accumulation to keep the global batch");
    }
  }
  if (ways.empty()) {
    // More GPUs: the ZeRO-sharded state shrinks as 1/N, the activations stay. The fewest GPUs with the least
    // change: the lowest stage first, checkpointing only where no stage fits without it.
    bool offered = false;
    for (int n = std::max(2, setup.data_parallel * 2); n <= (1 << 20) && !offered; n *= 2)
      for (const bool checkpoint : {setup.checkpointing, true})
        for (int stage = std::max(1, setup.zero_stage); stage <= 3 && !offered; ++stage) {
          MemorySetup s = setup;
          s.data_parallel = n;
          s.zero_stage = stage;
          s.checkpointing = checkpoint;
          if (!fits(s)) continue;
          offer(s, "ZeRO stage " + std::to_string(stage) + (checkpoint && !setup.checkpointing ? " with activation checkpointing" : "") +
                       " over " + std::to_string(n) + " GPUs");
          offered = true;
        }
  }
  // LoRA drops the gradients, master weights and moments of the frozen weights, not the weights themselves nor
  // the activations: offered only where those alone fit, with that floor (the adapters add little to it).
  // Frozen weights too large for one GPU can still be sharded by ZeRO stage 3, and activations checkpointed.
  if (w.family == "transformer" && w.trainable() == w.parameters()) {
    for (const auto& [shard, checkpoint] : {std::pair{false, false}, {false, true}, {true, false}, {true, true}}) {
      if ((shard && (setup.zero_stage == 3 || setup.data_parallel < 2)) || (checkpoint && setup.checkpointing)) continue;
      MemorySetup s = setup;
      if (shard) s.zero_stage = 3;
      if (checkpoint) s.checkpointing = true;
      MemoryBreakdown frozen = state_memory(static_cast<double>(w.parameters()), 0.0, s);
      frozen.activations = memory_per_gpu(w, s).activations;
      if (frozen.total() > capacity) continue;
      const std::string with = shard && checkpoint ? " with ZeRO stage 3 and activation checkpointing"
                               : shard             ? " with ZeRO stage 3"
                               : checkpoint        ? " with activation checkpointing"
                                                   : "";
      ways.push_back("LoRA fine-tuning" + with + ", which trains adapters only (at least " +
                     format_gigabytes(frozen.total()) +
                     ": the frozen weights and the activations; the catalog's llama-7b-lora shows how)");
      break;
    }
  }
  return ways;
}

}  // namespace dtsim::models
