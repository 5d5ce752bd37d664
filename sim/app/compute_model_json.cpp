#include "sim/app/compute_model_json.hpp"

#include <string>

#include "models/workload/memory.hpp"
#include "sim/config/numerics_setup.hpp"

namespace dtsim::sim {

namespace {

nlohmann::ordered_json gpu_json(const GpuSpec& gpu, MatmulModel model, MathMode math) {
  nlohmann::ordered_json g = {{"name", gpu.name}, {"peak_flops", gpu.peak(math)},
                              {"memory_bandwidth", gpu.memory_bandwidth},
                              {"launch_overhead_s", gpu.launch_overhead}};
  if (model == MatmulModel::Roofline) {
    // Products at peak × efficiency: the one number every product shares.
    g["efficiency"] = gpu.efficiency;
  } else {
    g["achievable_flops"] = gpu.achievable(math);
    // Memory traffic at the measured streaming fraction of the datasheet's bandwidth.
    g["memory_efficiency"] = gpu.memory_efficiency;
    g["multiprocessors"] = gpu.multiprocessors;
    g["tile"] = std::to_string(gpu.matmul_tile_m) + "x" + std::to_string(gpu.matmul_tile_n);
    // Fused attention (FlashAttention layers): from the measured table in BF16, else its FLOPs at the rate above.
    const bool table = attention_table_applies(gpu, math);
    g["fused_attention"] = table ? "table" : "achievable_flops";
    if (table) g["attention_table"] = gpu.attention_table_file;
  }
  return g;
}

}  // namespace

nlohmann::ordered_json compute_model_json(const RunConfig& c, MathMode math) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  if (c.layout.groups.empty()) {
    gpus.push_back(gpu_json(c.gpu, c.matmul, math));
  } else {
    for (const NodeGroup& group : c.layout.groups) {
      nlohmann::ordered_json g = gpu_json(group.gpu, c.matmul, math);
      g["group"] = group.name;
      gpus.push_back(g);
    }
  }
  return {{"matmul", to_string(c.matmul)},
          {"math", to_string(math)},
          {"optimizer_kernels", models::optimizer_kernels_table().name(c.optimizer_kernels)},
          {"host_dispatch_s", c.kernel_issue.host_dispatch},
          {"cuda_graphs", c.kernel_issue.cuda_graphs},
          {"gpus", gpus}};
}

}  // namespace dtsim::sim
