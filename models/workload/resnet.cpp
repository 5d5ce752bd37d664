#include "models/workload/resnet.hpp"

#include <stdexcept>
#include <string>

namespace dtsim::models {
namespace {

// The spatial size after a k × k window with the given stride and padding (integer division, as frameworks do).
int out_size(int in, int k, int stride, int pad) { return (in + 2 * pad - k) / stride + 1; }

class ResNetBuilder {
 public:
  explicit ResNetBuilder(const ResNetSpec& spec) : spec_(spec), c_(spec.channels), hw_(spec.image) {}

  std::vector<LayerCost> build() {
    conv("stem.conv", -1, spec_.stem_width, 7, 2, 3);
    batchnorm("stem.bn", -1);
    relu("stem.relu", -1);
    maxpool("stem.maxpool", 3, 2, 1);
    int block = 0;
    for (std::size_t st = 0; st < spec_.stages.size(); ++st) {
      const ResNetStage& stage = spec_.stages[st];
      for (int i = 0; i < stage.blocks; ++i, ++block)
        bottleneck("layer" + std::to_string(st + 1) + "." + std::to_string(i) + ".", block, stage.width,
                   i == 0 ? stage.stride : 1);
    }
    global_average_pool();
    fully_connected();
    return std::move(layers_);
  }

 private:
  LayerCost& add(std::string name, std::string kind, int block) {
    return append_layer(layers_, std::move(name), std::move(kind), block);
  }

  double elements() const { return static_cast<double>(c_) * hw_ * hw_; }

  // A trained convolution or dense layer: `weights` parameters, `macs` multiply-adds per sample from `in` to
  // `out` activation elements; it keeps its input, and its backward computes input and weight gradients.
  static void trained_product(LayerCost& l, double weights, double macs, double in, double out) {
    l.parameters = static_cast<std::uint64_t>(weights);
    l.trainable = l.parameters;
    l.forward_flops = 2 * macs;
    l.backward_flops = 2 * l.forward_flops;
    l.input_elements = in;
    l.forward_traffic = in + out;
    l.backward_traffic = 2 * in + out;
    l.saved_elements = in;
    l.forward_kernels = 1;
    l.backward_kernels = 2;
  }

  // A product of `rows` × `outputs` over `inner` per sample, with its input and weight gradients.
  static void products(LayerCost& l, double rows, double outputs, double inner) {
    using G = LayerProduct::Grows;
    l.forward_products = {{{rows, outputs, inner}, G::Rows}};
    l.backward_products = {{{rows, inner, outputs}, G::Rows}, {{outputs, inner, rows}, G::Inner}};
  }

  // A k × k convolution without bias (a batch norm follows): k² C_in C_out weights, 2 k² C_in C_out H W FLOPs.
  void conv(const std::string& name, int block, int out_channels, int k, int stride, int pad) {
    LayerCost& l = add(name, "conv", block);
    const double in = elements();
    const int out_hw = out_size(hw_, k, stride, pad);
    const double weights = static_cast<double>(k) * k * c_ * out_channels;
    const double out = static_cast<double>(out_channels) * out_hw * out_hw;
    trained_product(l, weights, weights * out_hw * out_hw, in, out);
    // As an implicit GEMM: output pixels × output channels over k² input channels; backward, the input
    // gradient (pixels × k² C_in over C_out, then folded back) and the weight gradient summed over pixels.
    const double pixels = static_cast<double>(out_hw) * out_hw, patch = static_cast<double>(k) * k * c_;
    products(l, pixels, out_channels, patch);
    c_ = out_channels;
    hw_ = out_hw;
  }

  void batchnorm(const std::string& name, int block) {
    LayerCost& l = add(name, "batchnorm", block);
    l.parameters = 2ULL * c_;  // scale and shift; the running statistics are buffers, not parameters
    l.trainable = l.parameters;
    l.input_elements = elements();
    l.forward_traffic = 3 * elements();  // statistics pass, then normalise
    l.backward_traffic = 4 * elements();
    l.saved_elements = elements();
    l.forward_kernels = 1;
    l.backward_kernels = 1;
  }

  void relu(const std::string& name, int block) {
    LayerCost& l = add(name, "activation", block);
    l.input_elements = elements();
    l.forward_traffic = 2 * elements();
    l.backward_traffic = 3 * elements();
    l.saved_elements = elements();  // its output (in place), whose sign is the gradient's mask
    l.forward_kernels = 1;
    l.backward_kernels = 1;
  }

  void maxpool(const std::string& name, int k, int stride, int pad) {
    LayerCost& l = add(name, "pool", -1);
    const double in = elements();
    hw_ = out_size(hw_, k, stride, pad);
    l.input_elements = in;
    l.forward_traffic = in + elements();
    l.backward_traffic = in + elements();
    l.saved_elements = in;  // the input, to find each window's maximum again
    l.forward_kernels = 1;
    l.backward_kernels = 1;
  }

  // conv 1×1 → bn → relu → conv 3×3 (stride) → bn → relu → conv 1×1 (× expansion) → bn, plus the shortcut
  // (a strided 1×1 conv and bn where the shape changes), added, then relu.
  void bottleneck(const std::string& p, int block, int width, int stride) {
    const int in_c = c_, in_hw = hw_, out_c = width * spec_.expansion;
    conv(p + "conv1", block, width, 1, 1, 0);
    batchnorm(p + "bn1", block);
    relu(p + "relu1", block);
    conv(p + "conv2", block, width, 3, stride, 1);
    batchnorm(p + "bn2", block);
    relu(p + "relu2", block);
    conv(p + "conv3", block, out_c, 1, 1, 0);
    batchnorm(p + "bn3", block);
    if (stride != 1 || in_c != out_c) {
      const int c = c_, hw = hw_;
      c_ = in_c;
      hw_ = in_hw;
      conv(p + "downsample.conv", block, out_c, 1, stride, 0);
      batchnorm(p + "downsample.bn", block);
      c_ = c;
      hw_ = hw;
    }
    LayerCost& l = add(p + "add", "add", block);
    l.input_elements = 2 * elements();
    l.forward_traffic = 3 * elements();
    l.backward_traffic = 2 * elements();
    l.forward_kernels = 1;
    relu(p + "relu3", block);
  }

  void global_average_pool() {
    LayerCost& l = add("avgpool", "pool", -1);
    l.input_elements = elements();
    l.forward_traffic = elements() + c_;
    l.backward_traffic = elements() + c_;
    l.forward_kernels = 1;
    l.backward_kernels = 1;
    hw_ = 1;
  }

  void fully_connected() {
    LayerCost& l = add("fc", "linear", -1);
    const double in = c_, out = spec_.classes;
    trained_product(l, in * out + out, in * out, in, out);
    products(l, 1, out, in);
    append_loss_layer(layers_, out);
  }

  const ResNetSpec& spec_;
  int c_, hw_;
  std::vector<LayerCost> layers_;
};

}  // namespace

void validate(const ResNetSpec& spec) {
  require_field(spec.image >= 1, "image", "must be a positive whole number");
  require_field(spec.channels > 0, "channels", "must be a positive whole number");
  require_field(spec.stem_width > 0, "stem_width", "must be a positive whole number");
  require_field(spec.expansion > 0 && spec.expansion <= 64, "expansion", "must be a whole number from 1 to 64");
  require_field(!spec.stages.empty(), "stages", "must list at least one stage");
  // The stem halves the image twice (convolution and pool), each stride-2 stage once more; the padding keeps
  // at least one pixel, which this checks rather than assumes.
  int size = out_size(out_size(spec.image, 7, 2, 3), 3, 2, 1);
  long blocks = 0;
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const auto& st = spec.stages[i];
    const std::string f = "stages[" + std::to_string(i) + "]";
    require_field(st.blocks > 0, f + ".blocks", "must be a positive whole number");
    require_field(st.width > 0 && st.width <= 1'000'000, f + ".width", "must be a whole number from 1 to 10^6");
    require_field(st.stride == 1 || st.stride == 2, f + ".stride", "must be 1 or 2");
    if (st.stride == 2) size = out_size(size, 3, 2, 1);
    blocks += st.blocks;
    require_field(blocks <= 10'000, f + ".blocks", "brings the network past 10,000 blocks");
  }
  require_field(size >= 1, "image", "is too small for the stem and the stride-2 stages (" + std::to_string(size) +
                                        " pixels left)");
  require_field(spec.classes > 0, "classes", "must be a positive whole number");
}

std::vector<LayerCost> resnet_layers(const ResNetSpec& spec) {
  validate(spec);
  return ResNetBuilder(spec).build();
}

}  // namespace dtsim::models
