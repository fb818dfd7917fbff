// The fusion stage on the shared reference models: the kernels a runtime runs for each.
#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

std::unique_ptr<Fused> fused_model(const std::string& file, const ShapeOptions& options = {},
                                   FusionReach reach = FusionReach::kMeasuredRuntime) {
  if (!shared_models_present()) return nullptr;
  return std::make_unique<Fused>(analyse_file(shared_model(file), options), reach);
}

ShapeOptions sequence(int64_t seq) {
  ShapeOptions o;
  o.dims["batch"] = 1;
  o.dims["seq"] = seq;
  return o;
}

size_t count_pattern(const Fused& f, const std::string& pattern) {
  size_t n = 0;
  for (const auto& g : f.plan.groups) n += g.pattern == pattern ? 1 : 0;
  return n;
}

TEST(FusionSharedModels, ResNet50OneKernelPerConv) {
  for (const char* file : {"resnet50_op13.onnx", "resnet50_op18.onnx"}) {
    auto f = fused_model(file);
    if (!f) GTEST_SKIP() << "shared models not present";
    EXPECT_EQ(f->count_label("conv"), 53u) << file << "\n" << f->describe();
    EXPECT_EQ(f->count_label("conv+bias+relu+add") + f->count_label("conv+relu+add"), 16u) << file;
    EXPECT_GE(f->plan.kernels(), 55u) << file;
    EXPECT_LE(f->plan.kernels(), 58u) << file << "\n" << f->describe();
    for (const auto& g : f->plan.groups)  // every Relu and residual Add runs in a conv's epilogue
      if (g.label.find("relu") != std::string::npos || g.label.find("add") != std::string::npos)
        EXPECT_EQ(g.pattern, "epilogue") << file << " #" << g.id << " " << g.label;
  }
}

TEST(FusionSharedModels, VitB16AttentionGeluLayerNorm) {
  for (const char* file : {"vit_b_16_op17.onnx", "vit_b_16_op18.onnx"}) {
    auto f = fused_model(file);
    if (!f) GTEST_SKIP() << "shared models not present";
    EXPECT_EQ(count_pattern(*f, "attention"), 12u) << file << "\n" << f->describe();
    EXPECT_EQ(f->count_label("gelu"), 12u) << file << "\n" << f->describe();
    // The final norm and the class token's Gather, and the class token's Concat and the position
    // embedding's Add, are no kernel the runtime has: each runs apart.
    EXPECT_EQ(f->count_label("layer_norm"), 24u) << file;
    EXPECT_EQ(f->apart(), 4u) << file << "\n" << f->describe();
    // Every layer's QKV bias runs in the in-projection GEMM's epilogue, also where the exporter
    // reads it through an Identity of layer 0's bias (layers 1-11): none inside attention.
    size_t qkv_projections = 0;
    for (const auto& g : f->plan.groups) {
      qkv_projections += g.label == "matmul+bias" ? 1 : 0;
      if (g.pattern != "attention") continue;
      for (size_t m : g.members)
        EXPECT_NE(f->run->analysis.nodes[m].node->op_type, "Add") << file << " #" << g.id << "\n" << f->describe();
    }
    EXPECT_EQ(qkv_projections, 12u) << file << "\n" << f->describe();
  }
}

TEST(FusionSharedModels, BertBaseMaskedAttention) {
  auto f = fused_model("bert_base_op17.onnx", sequence(128));
  if (!f) GTEST_SKIP() << "shared models not present";
  EXPECT_EQ(f->count_label("attention+mask"), 12u) << f->describe();
  EXPECT_EQ(f->count_label("gelu"), 12u) << f->describe();
  // The embeddings' gathers and adds do not fuse into the first norm's kernel: they run apart.
  EXPECT_EQ(f->count_label("layer_norm"), 24u) << f->describe();
  EXPECT_GE(f->apart(), 2u) << f->describe();
}

TEST(FusionSharedModels, Gpt2CausalAttentionAndTanhGelu) {
  auto f = fused_model("gpt2_op18.onnx", sequence(128));
  if (!f) GTEST_SKIP() << "shared models not present";
  EXPECT_EQ(f->count_label("attention+mask"), 12u) << f->describe();
  EXPECT_EQ(f->count_label("gelu"), 12u) << f->describe();
  EXPECT_EQ(f->count_label("layer_norm"), 25u) << f->describe();
}

TEST(FusionSharedModels, TinyLlamaRotaryGqaRmsNormSwiGlu) {
  // A serving runtime's plan: every norm one kernel. The runtime of --measure runs each
  // spelled-out RMSNorm as one generated row kernel too; only the mask's cumulative sum and the
  // work after it run apart.
  auto f = fused_model("tinyllama_1b_op18.onnx", sequence(128), FusionReach::kEveryPattern);
  if (!f) GTEST_SKIP() << "shared models not present";
  EXPECT_EQ(f->count_label("attention+mask+rotary+gqa"), 22u) << f->describe();
  EXPECT_EQ(f->count_label("rms_norm"), 45u) << f->describe();
  auto measured = fused_model("tinyllama_1b_op18.onnx", sequence(128));
  EXPECT_EQ(measured->count_label("rms_norm"), 45u);
  EXPECT_LE(measured->apart(), 6u);
  EXPECT_EQ(f->count_label("swiglu"), 22u) << f->describe();
  // Flash attention never writes the S x S scores: the groups move far fewer bytes than the nodes.
  double node_bytes = 0, group_bytes = 0;
  for (const auto& n : f->run->analysis.nodes) node_bytes += n.cost.bytes();
  for (const auto& g : f->plan.groups) group_bytes += g.bytes();
  EXPECT_LT(group_bytes, 0.8 * node_bytes);
}

}  // namespace
}  // namespace modelcost::testing
