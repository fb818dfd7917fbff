// Products of one input by constant weights of one shape (Q, K and V; gate and up) are one
// batched GEMM kernel reading the input once, where nothing else is left of their epilogues.
#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

constexpr int64_t kHeads = 4, kSeq = 64, kDim = 32, kHidden = kHeads * kDim;

// x [1,S,hidden] -> `name` = (x @ w + bias) split into heads [1,H,S,D] (kv_heads heads).
void add_projection(ModelBuilder& b, const std::string& name, int64_t heads, bool bias) {
  b.weight("w_" + name, kFloat, {kHidden, heads * kDim});
  std::string out = name + "_p";
  b.node("MatMul", {"x", "w_" + name}, {out});
  if (bias) {
    b.weight("b_" + name, kFloat, {heads * kDim});
    b.node("Add", {out, "b_" + name}, {name + "_b"});
    out = name + "_b";
  }
  b.ints("split_" + name, {1, kSeq, heads, kDim});
  b.node("Reshape", {out, "split_" + name}, {name + "_r"});
  set_attr(b.node("Transpose", {name + "_r"}, {name}), "perm", std::vector<int64_t>{0, 2, 1, 3});
}

// softmax(q k^T / 4) v, heads merged back to [1,S,hidden]: one attention kernel.
void add_attention(ModelBuilder& b) {
  b.floats("scale", {4.0f}, {});
  b.ints("merged", {1, kSeq, kHidden});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  b.node("Div", {"s", "scale"}, {"ss"});
  set_attr(b.node("Softmax", {"ss"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"o"});
  set_attr(b.node("Transpose", {"o"}, {"ot"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("Reshape", {"ot", "merged"}, {"y"});
  b.output("y");
}

TEST(SiblingProducts, QueryKeyValueWithBiasesAreOneBatchedGemm) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, kSeq, kHidden});
  for (const char* name : {"q", "k", "v"}) add_projection(b, name, kHeads, /*bias=*/true);
  add_attention(b);
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  const FusedGroup& g = f.group("q_b");
  EXPECT_EQ(g.pattern, "sibling_products");
  EXPECT_EQ(g.label, "3x matmul+bias");
  EXPECT_EQ(g.members.size(), 6u);
  EXPECT_EQ(f.group_of("k_b"), f.group_of("q_b"));
  EXPECT_EQ(f.group_of("v_p"), f.group_of("q_b"));
  EXPECT_EQ(f.pattern_of("y"), "attention");
  // The input is read once; the weights and biases once each; the three results are written.
  double weights = 0, results = 0;
  for (const char* name : {"q", "k", "v"}) {
    weights += f.bytes(std::string("w_") + name) + f.bytes(std::string("b_") + name);
    results += f.bytes(std::string(name) + "_b");
  }
  EXPECT_DOUBLE_EQ(g.bytes_read, f.bytes("x") + weights);
  EXPECT_DOUBLE_EQ(g.bytes_written, results);
  EXPECT_EQ(g.kernel.cls, KernelClass::kGemm);
  EXPECT_DOUBLE_EQ(g.kernel.k, double(kHidden));
  EXPECT_DOUBLE_EQ(g.kernel.n, double(kHidden));
  EXPECT_DOUBLE_EQ(g.kernel.rows, 0.0);  // several products: no one-row stream
  // The results in member order, as the batched call writes them side by side.
  const std::vector<int> outputs = sibling_outputs(g, f.run->analysis);
  ASSERT_EQ(outputs.size(), 3u);
  const auto& tensors = f.run->analysis.graph->tensors;
  EXPECT_EQ(tensors[outputs[0]].name, "q_b");
  EXPECT_EQ(tensors[outputs[1]].name, "k_b");
  EXPECT_EQ(tensors[outputs[2]].name, "v_b");
  EXPECT_TRUE(sibling_outputs(f.group("y"), f.run->analysis).empty());
}

// Five products of one input: Q, K and V of one weight shape, a gated MLP's gate and up of
// another. Each shape is one set.
TEST(SiblingProducts, EachWeightShapeIsOneSet) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, kSeq, kHidden});
  for (const char* name : {"q", "k", "v"}) add_projection(b, name, kHeads, /*bias=*/false);
  add_attention(b);
  b.weight("wg", kFloat, {kHidden, 2 * kHidden});
  b.weight("wu", kFloat, {kHidden, 2 * kHidden});
  b.node("MatMul", {"x", "wg"}, {"gate"});
  b.node("Sigmoid", {"gate"}, {"sg"});
  b.node("Mul", {"gate", "sg"}, {"silu"});
  b.node("MatMul", {"x", "wu"}, {"up"});
  b.node("Mul", {"silu", "up"}, {"h"});
  b.output("h");
  Fused f(b);
  EXPECT_EQ(f.label_of("q_p"), "3x matmul") << f.describe();
  EXPECT_EQ(f.group_of("v_p"), f.group_of("q_p"));
  EXPECT_EQ(f.label_of("gate"), "2x matmul");
  EXPECT_EQ(f.group_of("up"), f.group_of("gate"));
  EXPECT_NE(f.group_of("up"), f.group_of("q_p"));
}

// A product whose result has elementwise work of its own (an activation, a product with a bias
// where its sibling has none) keeps its epilogue group.
TEST(SiblingProducts, ProductsWithOtherEpiloguesStayApart) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{16, 64});
  for (const char* w : {"w1", "w2", "w3"}) b.weight(w, kFloat, {64, 64});
  b.weight("bias", kFloat, {64});
  b.node("MatMul", {"x", "w1"}, {"a"});
  b.node("Relu", {"a"}, {"ra"});
  b.node("MatMul", {"x", "w2"}, {"c"});
  b.node("MatMul", {"x", "w3"}, {"d"});
  b.node("Add", {"d", "bias"}, {"db"});
  b.node("Add", {"ra", "c"}, {"s"});
  b.node("Add", {"s", "db"}, {"y"});
  b.output("y");
  Fused f(b);
  for (const auto& g : f.plan.groups) EXPECT_NE(g.pattern, "sibling_products") << f.describe();
}

}  // namespace
}  // namespace modelcost::testing
