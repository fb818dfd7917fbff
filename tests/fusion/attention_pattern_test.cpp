// Scaled-dot-product attention as exporters spell it out becomes one flash-attention kernel whose
// bytes are Q, K, V, the mask and O: the score matrix never leaves the chip.
#include <gtest/gtest.h>

#include "fusion_test_support.h"

namespace modelcost::testing {
namespace {

constexpr int64_t kHeads = 4, kSeq = 64, kDim = 32;  // a head size the flash kernel runs

// q [1,H,S,D] k [1,H,S,D] v -> (q k^T) / sqrt(D) + mask -> Softmax -> IsNaN guard -> @ v -> merge heads.
void add_masked_attention(ModelBuilder& b) {
  b.input("q", kFloat, Shape{1, kHeads, kSeq, kDim});
  b.input("k", kFloat, Shape{1, kHeads, kSeq, kDim});
  b.input("v", kFloat, Shape{1, kHeads, kSeq, kDim});
  b.input("mask", kFloat, Shape{1, 1, kSeq, kSeq});
  b.floats("scale", {4.0f}, {});
  b.floats("zero", {0.0f}, {});
  b.ints("merged", {1, kSeq, kHeads * kDim});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  b.node("Div", {"s", "scale"}, {"ss"});
  b.node("Add", {"ss", "mask"}, {"sm"});
  set_attr(b.node("Softmax", {"sm"}, {"p"}), "axis", int64_t{-1});
  b.node("IsNaN", {"p"}, {"nan"});
  b.node("Where", {"nan", "zero", "p"}, {"pg"});
  b.node("MatMul", {"pg", "v"}, {"o"});
  set_attr(b.node("Transpose", {"o"}, {"ot"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("Reshape", {"ot", "merged"}, {"y"});
  b.output("y");
}

TEST(AttentionPattern, MaskedAttentionIsOneKernelWithoutScores) {
  ModelBuilder b;
  add_masked_attention(b);
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  const FusedGroup& g = f.plan.groups[0];
  EXPECT_EQ(g.pattern, "attention");
  EXPECT_EQ(g.label, "attention+mask");
  EXPECT_EQ(g.members.size(), 10u);
  EXPECT_DOUBLE_EQ(g.bytes_read, f.bytes("q") + f.bytes("k") + f.bytes("v") + f.bytes("mask") + f.bytes("scale") + f.bytes("zero"));
  EXPECT_DOUBLE_EQ(g.bytes_written, f.bytes("y"));
  EXPECT_DOUBLE_EQ(g.flops, f.total_flops());
}

// Grouped-query attention with rotary embeddings, a KV-cache Concat and a causal Where mask.
TEST(AttentionPattern, CausalGqaRotaryWithKvCache) {
  constexpr int64_t kKvHeads = 2, kPast = 32, kTotal = kSeq + kPast;
  ModelBuilder b;
  b.input("q", kFloat, Shape{1, kHeads, kSeq, kDim});
  b.input("k", kFloat, Shape{1, kKvHeads, kSeq, kDim});
  b.input("v", kFloat, Shape{1, kKvHeads, kSeq, kDim});
  b.input("past_k", kFloat, Shape{1, kKvHeads, kPast, kDim});
  b.input("past_v", kFloat, Shape{1, kKvHeads, kPast, kDim});
  b.input("cos", kFloat, Shape{1, 1, kSeq, kDim});
  b.input("sin", kFloat, Shape{1, 1, kSeq, kDim});
  b.input("causal", kBool, Shape{1, 1, kSeq, kTotal});
  b.floats("ninf", {-1e9f}, {});
  b.ints("axis1", {2});
  b.ints("rep", {1, kKvHeads, 2, kTotal, kDim});
  b.ints("heads", {1, kHeads, kTotal, kDim});
  b.ints("s0", {0});
  b.ints("s1", {kDim / 2});
  b.ints("s2", {kDim});
  b.ints("ax", {3});
  // rotary: x cos + rotate_half(x) sin, for q and k
  for (const std::string x : {"q", "k"}) {
    b.node("Mul", {x, "cos"}, {x + "c"});
    b.node("Slice", {x, "s0", "s1", "ax"}, {x + "1"});
    b.node("Slice", {x, "s1", "s2", "ax"}, {x + "2"});
    b.node("Neg", {x + "2"}, {x + "n"});
    set_attr(b.node("Concat", {x + "n", x + "1"}, {x + "h"}), "axis", int64_t{3});
    b.node("Mul", {x + "h", "sin"}, {x + "s"});
    b.node("Add", {x + "c", x + "s"}, {x + "r"});
  }
  set_attr(b.node("Concat", {"past_k", "kr"}, {"kall"}), "axis", int64_t{2});
  set_attr(b.node("Concat", {"past_v", "v"}, {"vall"}), "axis", int64_t{2});
  for (const std::string x : {"kall", "vall"}) {  // repeat K/V heads for the query heads
    b.node("Unsqueeze", {x, "axis1"}, {x + "u"});
    b.node("Expand", {x + "u", "rep"}, {x + "e"});
    b.node("Reshape", {x + "e", "heads"}, {x + "g"});
  }
  set_attr(b.node("Transpose", {"kallg"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"qr", "kt"}, {"s"});
  b.node("Where", {"causal", "s", "ninf"}, {"sm"});
  set_attr(b.node("Softmax", {"sm"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "vallg"}, {"y"});
  b.output("y");
  Fused f(b, 18);
  ASSERT_EQ(f.plan.groups.size(), 1u) << f.describe();
  const FusedGroup& g = f.plan.groups[0];
  EXPECT_EQ(g.label, "attention+mask+rotary+gqa");
  double expected = 0;
  for (const char* t : {"q", "k", "v", "past_k", "past_v", "cos", "sin", "causal", "ninf"}) expected += f.bytes(t);
  EXPECT_LE(g.bytes_read, expected + 64);  // shape constants aside
  EXPECT_GE(g.bytes_read, expected);
  EXPECT_DOUBLE_EQ(g.bytes_written, f.bytes("y"));
}

// x @ wq + bq -> split heads -> attention with k and v. `bias_alias` names an op placed between
// the bias weight and the Add (exporters route a shared weight through Identity), or "".
void add_projected_attention(ModelBuilder& b, const std::string& bias_alias) {
  b.input("x", kFloat, Shape{kSeq, kHeads * kDim});
  b.weight("wq", kFloat, {kHeads * kDim, kHeads * kDim});
  b.weight("bq", kFloat, {kHeads * kDim});
  b.input("k", kFloat, Shape{1, kHeads, kDim, kSeq});
  b.input("v", kFloat, Shape{1, kHeads, kSeq, kDim});
  b.ints("split", {1, kSeq, kHeads, kDim});
  std::string bias = "bq";
  if (!bias_alias.empty()) {
    b.node(bias_alias, {"bq"}, {"bq_shared"});
    bias = "bq_shared";
  }
  b.node("MatMul", {"x", "wq"}, {"qm"});
  b.node("Add", {bias, "qm"}, {"qb"});
  b.node("Reshape", {"qb", "split"}, {"qr"});
  set_attr(b.node("Transpose", {"qr"}, {"q"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.node("MatMul", {"q", "k"}, {"s"});
  set_attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
}

// q k^T -> Softmax -> @ v over heads of `head_size`.
void add_plain_attention(ModelBuilder& b, int64_t head_size) {
  for (const char* x : {"q", "k", "v"}) b.input(x, kFloat, Shape{1, kHeads, kSeq, head_size});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s"});
  set_attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
}

// The runtime's flash kernel runs head sizes up to 128: a larger one is planned, and run, as a
// runtime without the kernel runs its members (K's transpose read in place by the score product,
// the softmax alone, the value product), each priced as its own kernel; a fully fusing runtime's
// plan keeps it one kernel.
TEST(AttentionPattern, HeadSizeTheKernelLacksIsPlannedApart) {
  ModelBuilder b, again;
  add_plain_attention(b, 160);
  add_plain_attention(again, 160);
  Fused runtime(b);
  ASSERT_EQ(runtime.plan.groups.size(), 3u) << runtime.describe();
  EXPECT_EQ(runtime.apart(), 3u);
  EXPECT_EQ(runtime.group_of("kt"), runtime.group_of("s"));
  EXPECT_NE(runtime.plan.groups[1].apart_reason.find("head size 160"), std::string::npos) << runtime.plan.groups[1].apart_reason;
  EXPECT_EQ(runtime.plan.groups[1].kernel.cls, KernelClass::kReduction);
  Fused every(again, 0, FusionReach::kEveryPattern);
  ASSERT_EQ(every.plan.groups.size(), 1u) << every.describe();
  EXPECT_EQ(every.plan.groups[0].pattern, "attention");
}

// A Q normalised over its last axis (XCiT's cross-covariance attention normalises Q and K over
// the tokens) keeps its normalisation out of the attention match: the row kernel runs it, in
// either plan, and the attention reads its output.
TEST(AttentionPattern, NormalisedQueryStaysItsOwnRowKernel) {
  ModelBuilder b;
  b.input("q", kFloat, Shape{1, kHeads, kSeq, kDim});
  for (const char* x : {"k", "v"}) b.input(x, kFloat, Shape{1, kHeads, kSeq, kDim});
  b.floats("eps", {1e-12f}, {});
  b.ints("shape", {1, kHeads, kSeq, kDim});
  set_attr(b.node("ReduceL2", {"q"}, {"n"}), "axes", std::vector<int64_t>{-1});
  b.node("Clip", {"n", "eps"}, {"c"});
  b.node("Expand", {"c", "shape"}, {"e"});
  b.node("Div", {"q", "e"}, {"qn"});
  set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("MatMul", {"qn", "kt"}, {"s"});
  set_attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t{-1});
  b.node("MatMul", {"p", "v"}, {"y"});
  b.output("y");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.apart(), 0u) << f.describe();
  EXPECT_EQ(f.group_of("qn"), f.group_of("n"));
  EXPECT_EQ(f.group("y").pattern, "attention");
}

// A head size between the kernel's 32, 64 and 128 runs the next one's kernel: one kernel, its
// math padded (48 as 64).
TEST(AttentionPattern, HeadSizeBetweenTheKernelsRunsPadded) {
  ModelBuilder b;
  add_plain_attention(b, 48);
  Fused runtime(b);
  ASSERT_EQ(runtime.plan.groups.size(), 1u) << runtime.describe();
  EXPECT_EQ(runtime.apart(), 0u);
  EXPECT_EQ(runtime.plan.groups[0].kernel.cls, KernelClass::kAttention);
  EXPECT_DOUBLE_EQ(runtime.plan.groups[0].kernel.math_padding, 64.0 / 48.0);
}

TEST(AttentionPattern, ProjectionBiasStaysInTheGemmEpilogue) {
  ModelBuilder b;
  add_projected_attention(b, "");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.label_of("qb"), "matmul+bias");
  EXPECT_EQ(f.pattern_of("q"), "attention");
  EXPECT_DOUBLE_EQ(f.group("y").bytes_read, f.bytes("qb") + f.bytes("k") + f.bytes("v"));
}

// A bias behind an Identity is still the projection's bias: it runs in the GEMM's epilogue (the
// Identity folds into that group, ahead of nothing), not inside the attention kernel.
TEST(AttentionPattern, ProjectionBiasBehindIdentityStaysInTheGemmEpilogue) {
  ModelBuilder b;
  add_projected_attention(b, "Identity");
  Fused f(b);
  ASSERT_EQ(f.plan.groups.size(), 2u) << f.describe();
  EXPECT_EQ(f.label_of("qb"), "matmul+bias");
  EXPECT_EQ(f.pattern_of("qb"), "epilogue");
  EXPECT_EQ(f.group_of("bq_shared"), f.group_of("qm"));
  EXPECT_EQ(f.pattern_of("q"), "attention");
  EXPECT_DOUBLE_EQ(f.group("qb").bytes_read, f.bytes("x") + f.bytes("wq") + f.bytes("bq"));
  EXPECT_DOUBLE_EQ(f.group("y").bytes_read, f.bytes("qb") + f.bytes("k") + f.bytes("v"));
}

}  // namespace
}  // namespace modelcost::testing
