// Attention family. With B batch, N query heads, S query length, T keys attended to, h / vh the
// head sizes: macs = projection + B*N*S*T*(h + vh); flops = 2*macs + projection work
// + B*N*S*T * (1 scale + 1 if masked + 5 softmax) + 3 per rotated element (docs/ops/attention.md).
#include <gtest/gtest.h>

#include "ops/defs/ms_test_support.h"

namespace modelcost::testing {
namespace {

// ---- Attention (merged QKV weights) ----

TEST(AttentionMerged, ProjectionAndProductsWithMask) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{2, 8, 32});
  b.weight("w", kFloat, {32, 96});
  b.weight("bias", kFloat, {96});
  b.input("mask", kInt32, Shape{2});
  auto& n = b.node("Attention", {"x", "w", "bias", "mask"}, {"Y", "present"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y").output("present");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 8, 32}));
  EXPECT_EQ(run->shape("present"), (Shape{2, 2, 4, 8, 8}));
  const double projection = 2 * 8 * 32 * 96, scores = 2 * 4 * 8 * 8;
  const NodeCost& c = run->cost("Y");
  EXPECT_DOUBLE_EQ(c.macs, projection + scores * 16);
  EXPECT_DOUBLE_EQ(c.flops, 2 * (projection + scores * 16) + 2 * 8 * 96 + scores * 7);
  EXPECT_FALSE(c.estimate);
  EXPECT_DOUBLE_EQ(c.params, 32 * 96 + 96);
}

TEST(AttentionMerged, PastExtendsTheKeysAndPresent) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{2, 8, 32});
  b.weight("w", kFloat, {32, 96});
  b.input("past", kFloat, Shape{2, 2, 4, 6, 8});
  auto& n = b.node("Attention", {"x", "w", "", "", "past"}, {"Y", "present"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  set_attr(n, "unidirectional", static_cast<int64_t>(1));  // causal: still the full S x T product
  b.output("Y").output("present");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("present"), (Shape{2, 2, 4, 14, 8}));
  const double projection = 2 * 8 * 32 * 96, scores = 2 * 4 * 8 * 14;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, projection + scores * 16);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * (projection + scores * 16) + scores * 6);
}

TEST(AttentionMerged, QkvHiddenSizesGiveTheValueWidth) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{2, 8, 32});
  b.weight("w", kFloat, {32, 128});
  auto& n = b.node("Attention", {"x", "w"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  set_attr(n, "qkv_hidden_sizes", std::vector<int64_t>{32, 32, 64});
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 8, 64}));
  const double scores = 2 * 4 * 8 * 8;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 2 * 8 * 32 * 128 + scores * (8 + 16));
}

TEST(AttentionMerged, RejectsAttributesNoRuntimeAccepts) {
  ModelBuilder sizes = ms_model();
  sizes.input("x", kFloat, Shape{2, 8, 32});
  sizes.weight("w", kFloat, {32, 96});
  auto& n = sizes.node("Attention", {"x", "w"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  set_attr(n, "qkv_hidden_sizes", std::vector<int64_t>{32, 32, 64});
  sizes.output("Y");
  expect_node_error(sizes, "Y", "qkv_hidden_sizes do not add up");

  ModelBuilder heads = ms_model();
  heads.input("x", kFloat, Shape{2, 8, 32});
  heads.weight("w", kFloat, {32, 96});
  heads.node("Attention", {"x", "w"}, {"Y"}, kMs);
  heads.output("Y");
  expect_node_error(heads, "Y", "attribute num_heads is required");
}

TEST(AttentionMerged, DecoderMaskedSelfAttentionAppendsOneToken) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{2, 1, 32});
  b.weight("w", kFloat, {32, 96});
  b.weight("bias", kFloat, {96});
  b.input("past", kFloat, Shape{2, 2, 4, 5, 8});
  b.input("past_len", kInt32, Shape{1});  // past_sequence_length: required by ORT's schema
  auto& n = b.node("DecoderMaskedSelfAttention", {"x", "w", "bias", "", "past", "", "past_len"}, {"Y", "present"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y").output("present");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 1, 32}));
  EXPECT_EQ(run->shape("present"), (Shape{2, 2, 4, 6, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 2 * 32 * 96 + 2 * 4 * 1 * 6 * 16);
}

// ---- MultiHeadAttention ----

TEST(AttentionMultiHead, SeparateQueryKeyValueWithBias) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{2, 8, 32});
  b.input("k", kFloat, Shape{2, 10, 32});
  b.input("v", kFloat, Shape{2, 10, 64});
  b.weight("bias", kFloat, {128});
  auto& n = b.node("MultiHeadAttention", {"q", "k", "v", "bias"}, {"Y", "pk", "pv"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y").output("pk").output("pv");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 8, 64}));
  EXPECT_EQ(run->shape("pk"), (Shape{2, 4, 10, 8}));
  EXPECT_EQ(run->shape("pv"), (Shape{2, 4, 10, 16}));
  const double scores = 2 * 4 * 8 * 10;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, scores * 24);
  // bias on q (8 x 32) and on k, v (10 x (32 + 64)) per batch
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * scores * 24 + 2 * (8 * 32 + 10 * 96) + scores * 6);
}

TEST(AttentionMultiHead, PackedQkvCachedKeyAndPast) {
  ModelBuilder b = ms_model();
  b.input("qkv", kFloat, Shape{2, 8, 4, 3, 8});
  b.input("q", kFloat, Shape{2, 8, 32});
  b.input("kc", kFloat, Shape{2, 4, 12, 8});
  b.input("vc", kFloat, Shape{2, 4, 12, 8});
  b.input("k", kFloat, Shape{2, 8, 32});
  b.input("pk", kFloat, Shape{2, 4, 6, 8});
  b.input("pv", kFloat, Shape{2, 4, 6, 8});
  auto& packed = b.node("MultiHeadAttention", {"qkv"}, {"P"}, kMs);
  set_attr(packed, "num_heads", static_cast<int64_t>(4));
  auto& cross = b.node("MultiHeadAttention", {"q", "kc", "vc"}, {"C"}, kMs);
  set_attr(cross, "num_heads", static_cast<int64_t>(4));
  auto& past = b.node("MultiHeadAttention", {"q", "k", "k", "", "", "", "pk", "pv"}, {"D", "present_k", "present_v"}, kMs);
  set_attr(past, "num_heads", static_cast<int64_t>(4));
  b.output("P").output("C").output("D").output("present_k");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("P"), (Shape{2, 8, 32}));
  EXPECT_DOUBLE_EQ(run->cost("P").macs, 2 * 4 * 8 * 8 * 16);
  EXPECT_EQ(run->shape("C"), (Shape{2, 8, 32}));
  EXPECT_DOUBLE_EQ(run->cost("C").macs, 2 * 4 * 8 * 12 * 16);
  EXPECT_EQ(run->shape("present_k"), (Shape{2, 4, 14, 8}));
  EXPECT_DOUBLE_EQ(run->cost("D").macs, 2 * 4 * 8 * 14 * 16);
}

// ---- GroupQueryAttention: q [1, 5, 64] (8 heads of 8), k / v [1, 5, 16] (2 kv heads), past 7 ----

ModelBuilder gqa(bool known_total, bool rotary) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{1, 5, 64});
  b.input("k", kFloat, Shape{1, 5, 16});
  b.input("v", kFloat, Shape{1, 5, 16});
  b.input("pk", kFloat, Shape{1, 2, 7, 8});
  b.input("pv", kFloat, Shape{1, 2, 7, 8});
  b.input("seqlens", kInt32, Shape{1});
  if (known_total) int_initializer(b, "total", kInt32, {12}, {});
  else b.input("total", kInt32, Shape{});
  std::vector<std::string> inputs = {"q", "k", "v", "pk", "pv", "seqlens", "total"};
  if (rotary) {
    b.weight("cos", kFloat, {16, 4});
    b.weight("sin", kFloat, {16, 4});
    inputs.push_back("cos");
    inputs.push_back("sin");
  }
  auto& n = b.node("GroupQueryAttention", inputs, {"Y", "present_k", "present_v"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(8));
  set_attr(n, "kv_num_heads", static_cast<int64_t>(2));
  if (rotary) set_attr(n, "do_rotary", static_cast<int64_t>(1));
  b.output("Y").output("present_k").output("present_v");
  return b;
}

TEST(AttentionGroupQuery, KnownTotalSequenceLength) {
  auto run = analyse(gqa(true, false));
  EXPECT_EQ(run->shape("Y"), (Shape{1, 5, 64}));
  EXPECT_EQ(run->shape("present_k"), (Shape{1, 2, 12, 8}));
  const double scores = 1 * 8 * 5 * 12;
  const NodeCost& c = run->cost("Y");
  EXPECT_DOUBLE_EQ(c.macs, scores * 16);
  EXPECT_DOUBLE_EQ(c.flops, 2 * scores * 16 + scores * 6);
  EXPECT_FALSE(c.estimate);
}

TEST(AttentionGroupQuery, UnknownTotalIsBoundedByPastPlusNew) {
  auto run = analyse(gqa(false, false));
  EXPECT_EQ(run->shape("present_k"), (Shape{1, 2, 12, 8}));
  EXPECT_TRUE(run->tensor("present_k").estimate);
  EXPECT_TRUE(run->cost("Y").estimate);
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 8 * 5 * 12 * 16);
}

TEST(AttentionGroupQuery, RotaryAddsThreeFlopsPerRotatedQueryAndKeyElement) {
  auto run = analyse(gqa(true, true));
  const double scores = 8 * 5 * 12, rotated = 5 * (8 + 2) * 8;
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * scores * 16 + scores * 6 + 3 * rotated);
}

TEST(AttentionGroupQuery, PackedQkvAndHeadChecks) {
  ModelBuilder b = ms_model();
  b.input("qkv", kFloat, Shape{1, 5, 96});  // (8 + 2 * 2) heads of 8
  b.input("seqlens", kInt32, Shape{1});
  int_initializer(b, "total", kInt32, {5}, {});
  auto& n = b.node("GroupQueryAttention", {"qkv", "", "", "", "", "seqlens", "total"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(8));
  set_attr(n, "kv_num_heads", static_cast<int64_t>(2));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{1, 5, 64}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 8 * 5 * 5 * 16);

  ModelBuilder bad = gqa(true, false);
  for (auto& a : *bad.graph().mutable_node(0)->mutable_attribute())
    if (a.name() == "kv_num_heads") a.set_i(3);
  expect_node_error(bad, "Y", "is not a multiple of kv_num_heads 3");
}

// ---- packed (padding removed) forms ----

TEST(AttentionPacked, PackedAttentionBoundsWithThePaddedLength) {
  ModelBuilder b = ms_model();
  b.input("x", kFloat, Shape{10, 32});
  b.weight("w", kFloat, {32, 96});
  b.weight("bias", kFloat, {96});
  b.input("offsets", kInt32, Shape{2, 8});
  b.input("cu", kInt32, Shape{3});
  auto& n = b.node("PackedAttention", {"x", "w", "bias", "offsets", "cu"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{10, 32}));
  const double projection = 10 * 32 * 96, scores = 2 * 4 * 8 * 8;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, projection + scores * 16);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * (projection + scores * 16) + 10 * 96 + scores * 6);
  EXPECT_TRUE(run->cost("Y").estimate);  // 10 real tokens of 16 padded slots
}

TEST(AttentionPacked, PackedMultiHeadAttention) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{16, 32});
  b.input("offsets", kInt32, Shape{2, 8});
  b.input("cu", kInt32, Shape{3});
  auto& n = b.node("PackedMultiHeadAttention", {"q", "q", "q", "", "offsets", "cu"}, {"Y"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{16, 32}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 2 * 4 * 8 * 8 * 16);
  EXPECT_FALSE(run->cost("Y").estimate);  // no padding: 16 tokens fill 2 x 8
}

TEST(AttentionDecoder, DecoderMaskedMultiHeadAttentionWithPast) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{2, 1, 32});
  b.input("pk", kFloat, Shape{2, 4, 9, 8});
  b.input("pv", kFloat, Shape{2, 4, 9, 8});
  auto& n = b.node("DecoderMaskedMultiHeadAttention", {"q", "q", "q", "", "", "pk", "pv"}, {"Y", "present_k", "present_v"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  b.output("Y").output("present_k");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 1, 32}));
  EXPECT_EQ(run->shape("present_k"), (Shape{2, 4, 10, 8}));
  const double scores = 2 * 4 * 1 * 10;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, scores * 16);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * scores * 16 + scores * 6);
}

TEST(AttentionSparse, SparseAttentionIsCountedDenseAndMarkedEstimate) {
  ModelBuilder b = ms_model();
  b.input("q", kFloat, Shape{1, 4, 32});
  b.input("k", kFloat, Shape{1, 4, 16});
  b.input("v", kFloat, Shape{1, 4, 16});
  b.input("pk", kFloat, Shape{1, 2, 16, 8});
  b.input("pv", kFloat, Shape{1, 2, 16, 8});
  b.input("rows", kInt32, Shape{1, 2});
  b.input("cols", kInt32, Shape{1, 3});
  int_initializer(b, "total", kInt32, {10}, {});
  b.input("lens", kInt32, Shape{1});
  auto& n = b.node("SparseAttention", {"q", "k", "v", "pk", "pv", "rows", "cols", "total", "lens"}, {"Y", "present_k", "present_v"}, kMs);
  set_attr(n, "num_heads", static_cast<int64_t>(4));
  set_attr(n, "kv_num_heads", static_cast<int64_t>(2));
  set_attr(n, "sparse_block_size", static_cast<int64_t>(16));
  b.output("Y").output("present_k");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{1, 4, 32}));
  EXPECT_EQ(run->shape("present_k"), (Shape{1, 2, 16, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 4 * 4 * 10 * 16);
  EXPECT_TRUE(run->cost("Y").estimate);
}

// ai.onnx Attention (opset 23) is written against the node's domain; the loader admits opsets up
// to 21, so these models import 21.
TEST(AttentionOnnx, AttentionOfOpset23With4dAnd3dInputs) {
  ModelBuilder b(21);
  b.input("q", kFloat, Shape{2, 8, 5, 16});
  b.input("k", kFloat, Shape{2, 2, 7, 16});
  b.input("v", kFloat, Shape{2, 2, 7, 32});
  b.input("mask", kFloat, Shape{5, 7});
  b.input("q3", kFloat, Shape{2, 5, 128});
  b.input("k3", kFloat, Shape{2, 7, 32});
  b.input("v3", kFloat, Shape{2, 7, 64});
  b.node("Attention", {"q", "k", "v", "mask"}, {"Y", "present_k", "present_v", "qk"});
  auto& three = b.node("Attention", {"q3", "k3", "v3"}, {"Y3"});
  set_attr(three, "q_num_heads", static_cast<int64_t>(8));
  set_attr(three, "kv_num_heads", static_cast<int64_t>(2));
  b.output("Y").output("present_k").output("present_v").output("qk").output("Y3");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 8, 5, 32}));
  EXPECT_EQ(run->shape("present_k"), (Shape{2, 2, 7, 16}));
  EXPECT_EQ(run->shape("present_v"), (Shape{2, 2, 7, 32}));
  EXPECT_EQ(run->shape("qk"), (Shape{2, 8, 5, 7}));
  const double scores = 2 * 8 * 5 * 7;
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, scores * (16 + 32));
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 2 * scores * 48 + scores * 7);
  EXPECT_EQ(run->shape("Y3"), (Shape{2, 5, 256}));
  EXPECT_DOUBLE_EQ(run->cost("Y3").macs, scores * (16 + 32));
}

}  // namespace
}  // namespace modelcost::testing
