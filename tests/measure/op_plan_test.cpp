#include "measure/op_plan.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

OpPlan plan_of(const AnalysisRun& run, const std::string& node, const std::string& dtype = "") {
  return plan_operation(make_node_spec(run.node(node), dtype));
}

}  // namespace

TEST(MeasureOpPlan, ConstantWithoutItsContentsRunsNothing) {
  // A weight-free copy keeps a Constant's dims and drops its data (Swin's shifted-window mask):
  // nothing runs, the Add reading it takes a buffer.
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 49});
  onnx::TensorProto mask;
  mask.set_data_type(kFloat);
  for (int64_t d : {1, 4, 49}) mask.add_dims(d);
  set_attr(b.node("Constant", {}, {"mask"}), "value", mask);
  b.node("Add", {"x", "mask"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  EXPECT_TRUE(is_zero_cost(plan_of(*run, "mask")));
  EXPECT_TRUE(std::holds_alternative<ElementwisePlan>(plan_of(*run, "y")));
}

TEST(MeasureOpPlan, TransposeBecomesStridedCopy) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 3, 4});
  set_attr(b.node("Transpose", {"x"}, {"y"}), "perm", std::vector<int64_t>{2, 0, 1});
  b.output("y");
  auto run = analyse(b);
  const auto p = std::get<CopyPlan>(plan_of(*run, "y"));
  ASSERT_EQ(p.copies.size(), 1u);
  // Output [4,2,3]; input strides [12,4,1] permuted to [1,12,4]. The last two output dims are
  // contiguous in the input too (12 = 4 * 3), so they merge: dims [4,6], source strides [1,4].
  EXPECT_EQ(p.copies[0].dims, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(p.copies[0].src_strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(p.copies[0].dst_strides, (std::vector<int64_t>{6, 1}));
}

TEST(MeasureOpPlan, SliceOffsetAndStep) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4, 10});
  b.ints("starts", {1}).ints("ends", {9}).ints("axes", {1}).ints("steps", {2});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  const auto p = std::get<CopyPlan>(plan_of(*run, "y"));
  EXPECT_EQ(p.copies[0].src_offset, 1);
  EXPECT_EQ(p.copies[0].dims, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(p.copies[0].src_strides, (std::vector<int64_t>{10, 2}));
}

TEST(MeasureOpPlan, ConcatOffsetsMergeContiguousDims) {
  ModelBuilder b;
  b.input("a", kFloat, Shape{2, 3, 5}).input("c", kFloat, Shape{2, 4, 5});
  set_attr(b.node("Concat", {"a", "c"}, {"y"}), "axis", int64_t{1});
  b.output("y");
  auto run = analyse(b);
  const auto p = std::get<CopyPlan>(plan_of(*run, "y"));
  ASSERT_EQ(p.copies.size(), 2u);
  // Second input lands after 3 rows of 5 in each [7,5] slab; its [4,5] rows merge into 20.
  EXPECT_EQ(p.copies[1].dst_offset, 15);
  EXPECT_EQ(p.copies[1].dims, (std::vector<int64_t>{2, 20}));
  EXPECT_EQ(p.copies[1].dst_strides, (std::vector<int64_t>{35, 1}));
}

TEST(MeasureOpPlan, BroadcastStrides) {
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(broadcast_strides({4}, {2, 3, 4}), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(MeasureOpPlan, MatMulSharedWeightFoldsBatchIntoRows) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 197, 768}).weight("w", kFloat, Shape{768, 3072});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  const MatMulParams m = std::get<MatMulParams>(plan_of(*run, "y"));
  EXPECT_EQ(m.batch, 1);
  EXPECT_EQ(m.m, 394);
  EXPECT_EQ(m.k, 768);
  EXPECT_EQ(m.n, 3072);
}

TEST(MeasureOpPlan, BatchedMatMulAndGemmBias) {
  ModelBuilder b;
  b.input("q", kFloat, Shape{1, 12, 197, 64}).input("k", kFloat, Shape{1, 12, 64, 197});
  b.node("MatMul", {"q", "k"}, {"s"});
  b.input("x", kFloat, Shape{8, 768}).weight("w", kFloat, Shape{1000, 768}).weight("bias", kFloat, Shape{1000});
  set_attr(b.node("Gemm", {"x", "w", "bias"}, {"g"}), "transB", int64_t{1});
  b.output("s").output("g");
  auto run = analyse(b);
  const MatMulParams s = std::get<MatMulParams>(plan_of(*run, "s"));
  EXPECT_EQ(s.batch, 12);
  EXPECT_EQ(s.a_batch_stride, 197 * 64);
  EXPECT_EQ(s.b_batch_stride, 64 * 197);
  const MatMulParams g = std::get<MatMulParams>(plan_of(*run, "g"));
  EXPECT_TRUE(g.trans_b);
  EXPECT_EQ(g.m, 8);
  EXPECT_EQ(g.n, 1000);
  EXPECT_EQ(g.k, 768);
  EXPECT_EQ(g.bias, MatMulParams::Bias::kRow);
}

// The plan takes its window from the shape rule's geometry: SAME_UPPER puts the odd pad at the end.
TEST(MeasureOpPlan, ConvAndPoolPadsComeFromTheRuleWindow) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{1, 4, 7, 7});
  b.weight("w", kFloat, Shape{8, 4, 3, 3});
  onnx::NodeProto& conv_node = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv_node, "auto_pad", std::string("SAME_UPPER"));
  set_attr(conv_node, "strides", std::vector<int64_t>{2, 2});
  onnx::NodeProto& pool_node = b.node("MaxPool", {"x"}, {"p"});
  set_attr(pool_node, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(pool_node, "strides", std::vector<int64_t>{2, 2});
  set_attr(pool_node, "ceil_mode", int64_t{1});
  b.output("y").output("p");
  auto run = analyse(b);
  const auto conv = std::get<ConvParams>(plan_of(*run, "y"));
  EXPECT_EQ(conv.out_size, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(conv.pads, (std::vector<int64_t>{1, 1, 1, 1}));  // (4-1)*2 + 3 - 7 = 2 pads in all
  const auto window = std::get<PoolParams>(plan_of(*run, "p"));
  EXPECT_EQ(window.pads, (std::vector<int64_t>{0, 0, 0, 0}));  // ceil_mode's partial window is no pad
}

TEST(MeasureOpPlan, ZeroCostAndUnsupportedNodesSayWhy) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 6});
  b.ints("shape", {3, 4});
  b.input("x2", kFloat, Shape{3, 3});
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Det", {"x2"}, {"d"});
  b.output("r").output("d");
  auto run = analyse(b);
  EXPECT_TRUE(is_zero_cost(plan_of(*run, "r")));
  const OpPlan det = plan_of(*run, "d");
  EXPECT_TRUE(is_unsupported(det));
  EXPECT_NE(plan_reason(det).find("Det"), std::string::npos) << plan_reason(det);
}

// A spec made up in code (the calibration grid's) is planned by the same rule, through a
// one-node graph of it.
TEST(MeasureOpPlan, SpecMadeUpInCodeIsPlannedByItsRule) {
  NodeSpec spec;
  spec.op_type = "Conv";
  spec.opset = 17;
  TensorSpec x, w, y;
  x.present = w.present = y.present = true;
  x.dtype = w.dtype = y.dtype = kFloat16;
  x.shape = {2, 8, 14, 14};
  w.shape = {8, 1, 3, 3};
  y.shape = {2, 8, 7, 7};
  spec.inputs = {x, w};
  spec.outputs = {y};
  spec.attributes.int_lists["strides"] = {2, 2};
  spec.attributes.int_lists["pads"] = {1, 1, 1, 1};
  spec.attributes.ints["group"] = 8;
  const auto conv = std::get<ConvParams>(plan_operation(spec));
  EXPECT_EQ(conv.groups, 8);
  EXPECT_EQ(conv.kernel, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.pads, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv.strides, (std::vector<int64_t>{2, 2}));
}

TEST(MeasureOpPlan, DtypeOptionCastsFloatTensorsOnly) {
  ModelBuilder b;
  b.input("x", kFloat, Shape{4, 5}).input("i", kInt64, Shape{3});
  b.node("Gather", {"x", "i"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  const NodeSpec spec = make_node_spec(run->node("y"), "fp16");
  EXPECT_EQ(spec.inputs[0].dtype, kFloat16);
  EXPECT_EQ(spec.inputs[1].dtype, kInt64);
  EXPECT_EQ(spec.outputs[0].dtype, kFloat16);
  const auto p = std::get<GatherPlan>(plan_operation(spec));
  EXPECT_EQ(p.axis_len, 4);
  EXPECT_EQ(p.inner, 5);
  EXPECT_EQ(p.indices, 3);
  EXPECT_THROW(make_node_spec(run->node("y"), "fp64"), modelcost::Error);
}

TEST(MeasureOpPlan, TileIsOneStridedCopyOverRepeatAndInputDims) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3});
  b.ints("reps", {2, 2});
  b.node("Tile", {"x", "reps"}, {"y"});
  b.output("y");
  auto run = analyse(b);
  const auto p = std::get<CopyPlan>(plan_of(*run, "y"));
  // Output [4,6]: dims [rep0 2, d0 2, rep1 2, d1 3]; source strides [0,3,0,1]; destination
  // strides [2*6, 6, 3, 1] (a repeat steps over a whole input extent).
  EXPECT_EQ(p.copies[0].dims, (std::vector<int64_t>{2, 2, 2, 3}));
  EXPECT_EQ(p.copies[0].src_strides, (std::vector<int64_t>{0, 3, 0, 1}));
  EXPECT_EQ(p.copies[0].dst_strides, (std::vector<int64_t>{12, 6, 3, 1}));
}

TEST(MeasureOpPlan, NormsWhereAndCast) {
  ModelBuilder b(15);
  b.input("x", kFloat, Shape{2, 4, 3, 5});
  for (const char* p : {"s", "bb", "m", "v"}) b.weight(p, kFloat, Shape{4});
  set_attr(b.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"bn"}), "epsilon", 1e-3f);
  b.node("InstanceNormalization", {"x", "s", "bb"}, {"in"});
  b.input("c", kBool, Shape{3, 1}).input("a", kFloat, Shape{3, 5}).input("z", kFloat, Shape{5});
  b.node("Where", {"c", "a", "z"}, {"w"});
  set_attr(b.node("Cast", {"a"}, {"h"}), "to", int64_t{kFloat16});
  b.input("i", kInt64, Shape{4});
  set_attr(b.node("Cast", {"i"}, {"f"}), "to", int64_t{kFloat});
  b.output("bn").output("in").output("w").output("h").output("f");
  auto run = analyse(b);
  const auto bn = std::get<BatchNormPlan>(plan_of(*run, "bn"));
  const auto in = std::get<GroupNormPlan>(plan_of(*run, "in"));
  EXPECT_EQ(in.batch, 2);
  EXPECT_EQ(in.groups, 4);
  EXPECT_EQ(in.spatial, 15);
  EXPECT_FALSE(in.per_group_affine);
  EXPECT_EQ(bn.outer, 2);
  EXPECT_EQ(bn.axis_len, 4);
  EXPECT_EQ(bn.inner, 15);
  EXPECT_NEAR(bn.epsilon, 1e-3, 1e-9);
  const auto w = std::get<ElementwisePlan>(plan_of(*run, "w"));
  EXPECT_EQ(w.op, ElementwiseOp::kWhere);
  ASSERT_EQ(w.input_strides.size(), 3u);
  EXPECT_EQ(w.input_strides[0], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(w.input_strides[1], (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(w.input_strides[2], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(std::get<ElementwisePlan>(plan_of(*run, "h")).op, ElementwiseOp::kIdentity);
  EXPECT_EQ(std::get<ElementwisePlan>(plan_of(*run, "f")).op, ElementwiseOp::kIdentity);  // int64 -> float: generic kernel
}

}  // namespace modelcost::testing
