// RotaryEmbedding: 3 flops per rotated element, rotary_embedding_dim of each head rotated
// (docs/ops/attention.md).
#include <gtest/gtest.h>

#include "ops/defs/ms_test_support.h"

namespace modelcost::testing {
namespace {

TEST(RotaryEmbedding, Microsoft) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{2, 6, 32});
  b.input("x4", kFloat, Shape{2, 4, 6, 8});
  b.input("pos", kInt64, Shape{2, 6});
  b.weight("cos", kFloat, {16, 4});
  b.weight("sin", kFloat, {16, 4});
  b.weight("cos2", kFloat, {16, 2});
  b.weight("sin2", kFloat, {16, 2});
  auto& full = b.node("RotaryEmbedding", {"x", "pos", "cos", "sin"}, {"Y"}, kMs);
  set_attr(full, "num_heads", static_cast<int64_t>(4));
  auto& partial = b.node("RotaryEmbedding", {"x", "pos", "cos2", "sin2"}, {"P"}, kMs);
  set_attr(partial, "num_heads", static_cast<int64_t>(4));
  set_attr(partial, "rotary_embedding_dim", static_cast<int64_t>(4));
  b.node("RotaryEmbedding", {"x4", "pos", "cos", "sin"}, {"Y4"}, kMs);
  b.output("Y").output("P").output("Y4");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 6, 32}));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 3 * 384);
  EXPECT_DOUBLE_EQ(run->cost("P").flops, 3 * 384 / 2);  // 4 of each head's 8 dims rotate
  EXPECT_EQ(run->shape("Y4"), (Shape{2, 4, 6, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y4").flops, 3 * 384);
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 0);
}

// ai.onnx RotaryEmbedding (opset 23) is written against the node's domain; the loader admits
// opsets up to 21, so this model imports 21.
TEST(RotaryEmbedding, OnnxOpset23) {
  ModelBuilder b(21);
  b.input("x", kFloat, Shape{2, 6, 4, 8});
  b.input("x3", kFloat, Shape{2, 6, 32});
  b.weight("cos", kFloat, {2, 6, 4});
  b.weight("sin", kFloat, {2, 6, 4});
  b.node("RotaryEmbedding", {"x", "cos", "sin"}, {"Y"});
  auto& three = b.node("RotaryEmbedding", {"x3", "cos", "sin"}, {"Y3"});
  set_attr(three, "num_heads", static_cast<int64_t>(4));
  set_attr(three, "rotary_embedding_dim", static_cast<int64_t>(4));
  b.output("Y").output("Y3");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 6, 4, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 3 * 384);
  EXPECT_DOUBLE_EQ(run->cost("Y3").flops, 3 * 384 / 2);
}

}  // namespace
}  // namespace modelcost::testing
