// Tensor family (layout and shape ops): reinterpretations move 0 bytes, copies read every input
// and write every output, none does arithmetic. Folding chains of TorchScript-style exports
// are in tensor_indexing_test.cpp (they mix Gather, Where and these ops).
#include <gtest/gtest.h>

#include <climits>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {
namespace {

std::vector<int64_t> folded(const AnalysisRun& run, const std::string& tensor) {
  const auto& value = run.tensor(tensor).value;
  return value ? value->ints : std::vector<int64_t>{};
}

void expect_copy_cost(const AnalysisRun& run, const std::string& node, double read, double written) {
  const NodeCost& c = run.cost(node);
  EXPECT_TRUE(c.known) << node;
  EXPECT_DOUBLE_EQ(c.macs, 0) << node;
  EXPECT_DOUBLE_EQ(c.flops, 0) << node;
  EXPECT_DOUBLE_EQ(c.bytes_read, read) << node;
  EXPECT_DOUBLE_EQ(c.bytes_written, written) << node;
}

}  // namespace

TEST(TensorReinterpret, ReshapeLikeOpsMoveNoBytes) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 1, 4}).ints("target", {6, 4}).ints("axis2", {2});
  b.node("Identity", {"x"}, {"identity"});
  b.node("Reshape", {"x", "target"}, {"reshape"});
  b.node("Flatten", {"x"}, {"flatten"});
  b.node("Squeeze", {"x", "axis2"}, {"squeeze"});
  b.node("Unsqueeze", {"x", "axis2"}, {"unsqueeze"});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Size", {"x"}, {"size"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("identity"), (Shape{2, 3, 1, 4}));
  EXPECT_EQ(run->shape("reshape"), (Shape{6, 4}));
  EXPECT_EQ(run->shape("flatten"), (Shape{2, 12}));
  EXPECT_EQ(run->shape("squeeze"), (Shape{2, 3, 4}));
  EXPECT_EQ(run->shape("unsqueeze"), (Shape{2, 3, 1, 1, 4}));
  EXPECT_EQ(run->shape("shape"), (Shape{4}));
  EXPECT_EQ(run->tensor("shape").dtype, kInt64);
  EXPECT_EQ(folded(*run, "shape"), (std::vector<int64_t>{2, 3, 1, 4}));
  EXPECT_EQ(run->shape("size"), (Shape{}));
  EXPECT_EQ(folded(*run, "size"), (std::vector<int64_t>{24}));
  for (const char* op : {"identity", "reshape", "flatten", "squeeze", "unsqueeze", "shape", "size"}) {
    EXPECT_EQ(run->tensor(op).dtype, std::string(op) == "shape" || std::string(op) == "size" ? kInt64 : kFloat) << op;
    expect_copy_cost(*run, op, 0, 0);
  }
}

TEST(TensorShape, StartAndEndAttributes) {
  ModelBuilder b(15);
  b.input("x", kFloat, Shape{2, 3, 4, 5});
  set_attr(b.node("Shape", {"x"}, {"tail"}), "start", int64_t{1});
  set_attr(b.node("Shape", {"x"}, {"last_two"}), "start", int64_t{-2});
  set_attr(b.node("Shape", {"x"}, {"head"}), "end", int64_t{-1});
  auto& middle = b.node("Shape", {"x"}, {"middle"});
  set_attr(middle, "start", int64_t{1});
  set_attr(middle, "end", int64_t{3});
  auto& clamped = b.node("Shape", {"x"}, {"clamped"});
  set_attr(clamped, "start", int64_t{-10});
  set_attr(clamped, "end", int64_t{10});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "tail"), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(folded(*run, "last_two"), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(folded(*run, "head"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(folded(*run, "middle"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(run->shape("middle"), (Shape{2}));
  EXPECT_EQ(folded(*run, "clamped"), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(TensorCast, IntToFloatAndBackFolds) {
  ModelBuilder b(13);
  b.ints("dims", {3, -2, 0});
  b.floats("f", {2.7f, -2.7f, 0.0f});
  set_attr(b.node("Cast", {"dims"}, {"as_float"}), "to", int64_t{kFloat});
  set_attr(b.node("Cast", {"f"}, {"as_int"}), "to", int64_t{kInt64});
  set_attr(b.node("Cast", {"f"}, {"as_bool"}), "to", int64_t{kBool});
  b.node("CastLike", {"dims", "f"}, {"like"});
  auto run = analyse(b);
  EXPECT_EQ(run->tensor("as_float").dtype, kFloat);
  EXPECT_EQ(run->shape("as_float"), (Shape{3}));
  ASSERT_TRUE(run->tensor("as_float").value);
  EXPECT_EQ(run->tensor("as_float").value->floats, (std::vector<double>{3, -2, 0}));
  EXPECT_EQ(folded(*run, "as_int"), (std::vector<int64_t>{2, -2, 0}));  // truncation toward zero
  EXPECT_EQ(folded(*run, "as_bool"), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(run->tensor("like").dtype, kFloat);
  EXPECT_EQ(run->tensor("like").value->floats, (std::vector<double>{3, -2, 0}));
  expect_copy_cost(*run, "as_float", 3 * 8, 3 * 4);  // a conversion: bytes, no flops
  expect_copy_cost(*run, "as_bool", 3 * 4, 3 * 1);
  expect_copy_cost(*run, "like", 3 * 8 + 3 * 4, 3 * 4);
}

TEST(TensorReshape, ZeroCopiesMinusOneInfersAllowzeroKeepsZero) {
  ModelBuilder b(14);
  b.input("x", kFloat, Shape{2, 3, 4}).input("empty", kFloat, Shape{0, 3});
  b.ints("copy_infer", {0, -1}).ints("zero_three", {0, 3}).ints("infer_last", {4, -1});
  b.node("Reshape", {"x", "copy_infer"}, {"copied"});
  b.node("Reshape", {"x", "infer_last"}, {"inferred"});
  set_attr(b.node("Reshape", {"empty", "zero_three"}, {"allowzero"}), "allowzero", int64_t{1});
  b.node("Reshape", {"empty", "infer_last"}, {"empty_inferred"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("copied"), (Shape{2, 12}));
  EXPECT_EQ(run->shape("inferred"), (Shape{4, 6}));
  EXPECT_EQ(run->shape("allowzero"), (Shape{0, 3}));
  EXPECT_EQ(run->shape("empty_inferred"), (Shape{4, 0}));
}

TEST(TensorReshape, OldAttributeFormAndValuesPassThrough) {
  ModelBuilder b(4);
  b.ints("v", {1, 2, 3, 4, 5, 6});
  set_attr(b.node("Reshape", {"v"}, {"matrix"}), "shape", std::vector<int64_t>{2, -1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("matrix"), (Shape{2, 3}));
  EXPECT_EQ(folded(*run, "matrix"), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(TensorReshape, BadTargetsNameTheNode) {
  {
    ModelBuilder b(14);
    b.input("x", kFloat, Shape{2, 3, 4}).ints("target", {5, 5});
    b.node("Reshape", {"x", "target"}, {"bad_count"});
    expect_node_error(b, "bad_count", "cannot reshape [2,3,4] (24 elements) to [5,5]");
  }
  {
    ModelBuilder b(14);
    b.input("x", kFloat, Shape{2, 3, 4}).ints("target", {-1, -1});
    b.node("Reshape", {"x", "target"}, {"two_infers"});
    expect_node_error(b, "two_infers", "more than one -1");
  }
  {
    ModelBuilder b(14);
    b.input("x", kFloat, Shape{2, 3, 4}).ints("target", {5, -1});
    b.node("Reshape", {"x", "target"}, {"indivisible"});
    expect_node_error(b, "indivisible", "cannot reshape");
  }
}

TEST(TensorFlatten, AxisVariants) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4});
  set_attr(b.node("Flatten", {"x"}, {"axis0"}), "axis", int64_t{0});
  set_attr(b.node("Flatten", {"x"}, {"axis2"}), "axis", int64_t{2});
  set_attr(b.node("Flatten", {"x"}, {"axis_last"}), "axis", int64_t{-1});
  set_attr(b.node("Flatten", {"x"}, {"axis3"}), "axis", int64_t{3});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("axis0"), (Shape{1, 24}));
  EXPECT_EQ(run->shape("axis2"), (Shape{6, 4}));
  EXPECT_EQ(run->shape("axis_last"), (Shape{6, 4}));
  EXPECT_EQ(run->shape("axis3"), (Shape{24, 1}));
}

TEST(TensorSqueeze, AxesAttributeOpset11AndInputOpset13) {
  ModelBuilder b11(11);
  b11.input("x", kFloat, Shape{1, 3, 1, 4});
  set_attr(b11.node("Squeeze", {"x"}, {"squeezed"}), "axes", std::vector<int64_t>{0, -2});
  set_attr(b11.node("Unsqueeze", {"x"}, {"unsqueezed"}), "axes", std::vector<int64_t>{0, 5});
  b11.node("Squeeze", {"x"}, {"all_ones"});
  auto run11 = analyse(b11);
  EXPECT_EQ(run11->shape("squeezed"), (Shape{3, 4}));
  EXPECT_EQ(run11->shape("unsqueezed"), (Shape{1, 1, 3, 1, 4, 1}));
  EXPECT_EQ(run11->shape("all_ones"), (Shape{3, 4}));

  ModelBuilder b13(13);
  b13.input("x", kFloat, Shape{1, 3, 1, 4}).ints("axes", {0, -2}).ints("new_axes", {-1, 1});
  b13.node("Squeeze", {"x", "axes"}, {"squeezed"});
  b13.node("Unsqueeze", {"x", "new_axes"}, {"unsqueezed"});
  b13.node("Squeeze", {"x"}, {"all_ones"});
  auto run13 = analyse(b13);
  EXPECT_EQ(run13->shape("squeezed"), (Shape{3, 4}));
  EXPECT_EQ(run13->shape("unsqueezed"), (Shape{1, 1, 3, 1, 4, 1}));
  EXPECT_EQ(run13->shape("all_ones"), (Shape{3, 4}));
}

TEST(TensorSqueeze, BadAxesNameTheNode) {
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{1, 3}).ints("axes", {1});
    b.node("Squeeze", {"x", "axes"}, {"not_one"});
    expect_node_error(b, "not_one", "cannot squeeze axis 1 of size 3");
  }
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{3}).ints("axes", {0, 0});
    b.node("Unsqueeze", {"x", "axes"}, {"repeated"});
    expect_node_error(b, "repeated", "axis 0 repeated");
  }
}

TEST(TensorConcat, ShapeBytesAndFolding) {
  ModelBuilder b(13);
  b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{2, 5});
  b.ints("m", {1, 2, 3, 4}, {2, 2}).ints("n", {5, 6}, {2, 1});
  set_attr(b.node("Concat", {"a", "b"}, {"joined"}), "axis", int64_t{-1});
  set_attr(b.node("Concat", {"m", "n"}, {"folded"}), "axis", int64_t{1});
  set_attr(b.node("Concat", {"m", "m"}, {"rows"}), "axis", int64_t{0});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("joined"), (Shape{2, 8}));
  expect_copy_cost(*run, "joined", (6 + 10) * 4, 16 * 4);
  EXPECT_EQ(run->shape("folded"), (Shape{2, 3}));
  EXPECT_EQ(folded(*run, "folded"), (std::vector<int64_t>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(folded(*run, "rows"), (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));

  ModelBuilder e(13);
  e.ints("none", {}, {0}).ints("some", {4, 5}).ints("more", {6});
  set_attr(e.node("Concat", {"none", "some", "none", "more"}, {"with_empty"}), "axis", int64_t{0});
  auto empty_run = analyse(e);
  EXPECT_EQ(empty_run->shape("with_empty"), (Shape{3}));
  EXPECT_EQ(folded(*empty_run, "with_empty"), (std::vector<int64_t>{4, 5, 6}));
}

TEST(TensorConcat, MismatchedShapesNameTheNode) {
  ModelBuilder b(13);
  b.input("a", kFloat, Shape{2, 3}).input("b", kFloat, Shape{4, 5});
  set_attr(b.node("Concat", {"a", "b"}, {"bad_concat"}), "axis", int64_t{1});
  expect_node_error(b, "bad_concat", "input shapes [2,3] and [4,5] differ off the axis");
}

TEST(TensorSplit, AttributeSizesBeforeOpset13) {
  ModelBuilder b(11);
  b.input("x", kFloat, Shape{2, 10});
  auto& s = b.node("Split", {"x"}, {"p0", "p1"});
  set_attr(s, "axis", int64_t{1});
  set_attr(s, "split", std::vector<int64_t>{4, 6});
  b.node("Split", {"x"}, {"h0", "h1"});  // equal parts along axis 0
  auto run = analyse(b);
  EXPECT_EQ(run->shape("p0"), (Shape{2, 4}));
  EXPECT_EQ(run->shape("p1"), (Shape{2, 6}));
  EXPECT_EQ(run->shape("h0"), (Shape{1, 10}));
  expect_copy_cost(*run, "p0", 20 * 4, 20 * 4);  // writes every part
}

TEST(TensorSplit, InputSizesOpset13Fold) {
  ModelBuilder b(13);
  b.ints("v", {10, 20, 30, 40, 50}).ints("sizes", {2, 3});
  b.node("Split", {"v", "sizes"}, {"first", "second"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("first"), (Shape{2}));
  EXPECT_EQ(run->shape("second"), (Shape{3}));
  EXPECT_EQ(folded(*run, "first"), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(folded(*run, "second"), (std::vector<int64_t>{30, 40, 50}));
  expect_copy_cost(*run, "first", 5 * 8 + 2 * 8, 5 * 8);
}

TEST(TensorSplit, NumOutputsOpset18HasASmallerLastPart) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{10, 2});
  set_attr(b.node("Split", {"x"}, {"a", "b", "c", "d"}), "num_outputs", int64_t{4});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("a"), (Shape{3, 2}));
  EXPECT_EQ(run->shape("b"), (Shape{3, 2}));
  EXPECT_EQ(run->shape("c"), (Shape{3, 2}));
  EXPECT_EQ(run->shape("d"), (Shape{1, 2}));
}

TEST(TensorSplit, BadSizesNameTheNode) {
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{10}).ints("sizes", {3, 3});
    b.node("Split", {"x", "sizes"}, {"s0", "s1"});
    expect_node_error(b, "s0", "split sizes do not add up to the axis");
  }
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{10});
    b.node("Split", {"x"}, {"t0", "t1", "t2"});
    expect_node_error(b, "t0", "does not split into 3 equal parts");
  }
}

TEST(TensorSlice, NegativeStepsAndInt64Sentinels) {
  ModelBuilder b(13);
  b.ints("v", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  b.ints("minus_one", {-1}).ints("int64_min", {INT64_MIN}).ints("int64_max", {INT64_MAX});
  b.ints("two", {2}).ints("minus_three", {-3}).ints("one", {1}).ints("zero", {0}).ints("axis0", {0});
  b.node("Slice", {"v", "minus_one", "int64_min", "axis0", "minus_one"}, {"reversed"});
  b.node("Slice", {"v", "two", "int64_max"}, {"from_two"});
  b.node("Slice", {"v", "int64_max", "zero", "axis0", "minus_three"}, {"every_third_back"});
  b.node("Slice", {"v", "one", "int64_max", "axis0", "two"}, {"odd"});
  b.node("Slice", {"v", "minus_three", "minus_one"}, {"near_end"});
  b.node("Slice", {"v", "two", "one"}, {"empty"});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "reversed"), (std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(folded(*run, "from_two"), (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(folded(*run, "every_third_back"), (std::vector<int64_t>{9, 6, 3}));  // index 0 excluded
  EXPECT_EQ(folded(*run, "odd"), (std::vector<int64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(folded(*run, "near_end"), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(run->shape("empty"), (Shape{0}));
}

TEST(TensorSlice, MultiAxisShapesAndAttributeForm) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4, 6, 8});
  b.ints("starts", {1, -4}).ints("ends", {INT64_MAX, 100}).ints("axes", {2, 0}).ints("steps", {3, 1});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sliced"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("sliced"), (Shape{4, 6, 3}));  // axis 2: 1, 4, 7; axis 0: -4..end = all 4
  expect_copy_cost(*run, "sliced", 72 * 4 + 4 * 2 * 8, 72 * 4);  // reads the slice, not all of x

  ModelBuilder b9(9);
  b9.input("x", kFloat, Shape{4, 6});
  auto& s = b9.node("Slice", {"x"}, {"sliced"});
  set_attr(s, "starts", std::vector<int64_t>{1});
  set_attr(s, "ends", std::vector<int64_t>{-1});
  set_attr(s, "axes", std::vector<int64_t>{1});
  EXPECT_EQ(analyse(b9)->shape("sliced"), (Shape{4, 4}));
}

TEST(TensorSlice, ZeroStepNamesTheNode) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4}).ints("s", {0}).ints("e", {4}).ints("a", {0}).ints("zero", {0});
  b.node("Slice", {"x", "s", "e", "a", "zero"}, {"stalled"});
  expect_node_error(b, "stalled", "slice step is 0");
}

TEST(TensorTranspose, PermDefaultAndFolding) {
  ModelBuilder b(13);
  b.input("x", kFloat16, Shape{2, 3, 4}).ints("m", {1, 2, 3, 4, 5, 6}, {2, 3});
  set_attr(b.node("Transpose", {"x"}, {"permuted"}), "perm", std::vector<int64_t>{1, 2, 0});
  b.node("Transpose", {"x"}, {"reversed"});
  b.node("Transpose", {"m"}, {"mt"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("permuted"), (Shape{3, 4, 2}));
  EXPECT_EQ(run->shape("reversed"), (Shape{4, 3, 2}));
  expect_copy_cost(*run, "permuted", 24 * 2, 24 * 2);
  EXPECT_EQ(run->shape("mt"), (Shape{3, 2}));
  EXPECT_EQ(folded(*run, "mt"), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TensorTranspose, RepeatedPermNamesTheNode) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4});
  set_attr(b.node("Transpose", {"x"}, {"bad_perm"}), "perm", std::vector<int64_t>{0, 1, 1});
  expect_node_error(b, "bad_perm", "perm repeats axis 1");
}

TEST(TensorExpandTile, BroadcastAndRepeat) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{3, 1}).ints("shape", {2, 1, 4}).ints("repeats", {2, 3});
  b.ints("row", {7, 8}, {1, 2}).ints("to", {2, 2}).ints("twice", {1, 2});
  b.node("Expand", {"x", "shape"}, {"expanded"});
  b.node("Tile", {"x", "repeats"}, {"tiled"});
  b.node("Expand", {"row", "to"}, {"expanded_row"});
  b.node("Tile", {"row", "twice"}, {"tiled_row"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("expanded"), (Shape{2, 3, 4}));
  expect_copy_cost(*run, "expanded", 3 * 4 + 3 * 8, 24 * 4);
  EXPECT_EQ(run->shape("tiled"), (Shape{6, 3}));
  expect_copy_cost(*run, "tiled", 3 * 4 + 2 * 8, 18 * 4);
  EXPECT_EQ(folded(*run, "expanded_row"), (std::vector<int64_t>{7, 8, 7, 8}));
  EXPECT_EQ(folded(*run, "tiled_row"), (std::vector<int64_t>{7, 8, 7, 8}));
  EXPECT_EQ(run->shape("tiled_row"), (Shape{1, 4}));
}

TEST(TensorPad, AttributeInputAndAxesForms) {
  ModelBuilder b2(2);
  b2.input("x", kFloat, Shape{1, 3, 4, 4});
  set_attr(b2.node("Pad", {"x"}, {"padded"}), "pads", std::vector<int64_t>{0, 0, 1, 2, 0, 0, 1, 2});
  EXPECT_EQ(analyse(b2)->shape("padded"), (Shape{1, 3, 6, 8}));

  ModelBuilder b11(11);
  b11.input("x", kFloat, Shape{1, 3, 4, 4}).ints("pads", {0, 0, 1, 2, 0, 0, 1, -1});
  b11.node("Pad", {"x", "pads"}, {"padded"});
  auto run11 = analyse(b11);
  EXPECT_EQ(run11->shape("padded"), (Shape{1, 3, 6, 5}));  // a negative pad crops
  expect_copy_cost(*run11, "padded", 48 * 4 + 8 * 8, 90 * 4);

  ModelBuilder b18(18);
  b18.input("x", kFloat, Shape{2, 3, 4}).ints("pads", {1, 1, 2, 2}).ints("axes", {-1, 1});
  b18.node("Pad", {"x", "pads", "", "axes"}, {"padded"});
  EXPECT_EQ(analyse(b18)->shape("padded"), (Shape{2, 6, 7}));  // axis 2: +1+2, axis 1: +1+2
}

TEST(TensorPad, WrongPadCountNamesTheNode) {
  ModelBuilder b(11);
  b.input("x", kFloat, Shape{2, 3}).ints("pads", {1, 1});
  b.node("Pad", {"x", "pads"}, {"short_pads"});
  expect_node_error(b, "short_pads", "pads has 2 entries for 2 axes");
}

TEST(TensorRearrange, DepthToSpaceSpaceToDepthTrilu) {
  ModelBuilder b(14);
  b.input("x", kFloat, Shape{1, 8, 2, 3}).input("img", kFloat, Shape{1, 2, 4, 6}).input("m", kFloat, Shape{2, 3, 3});
  set_attr(b.node("DepthToSpace", {"x"}, {"d2s"}), "blocksize", int64_t{2});
  set_attr(b.node("SpaceToDepth", {"img"}, {"s2d"}), "blocksize", int64_t{2});
  b.node("Trilu", {"m"}, {"upper"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("d2s"), (Shape{1, 2, 4, 6}));
  expect_copy_cost(*run, "d2s", 48 * 4, 48 * 4);
  EXPECT_EQ(run->shape("s2d"), (Shape{1, 8, 2, 3}));
  expect_copy_cost(*run, "s2d", 48 * 4, 48 * 4);
  EXPECT_EQ(run->shape("upper"), (Shape{2, 3, 3}));
  expect_copy_cost(*run, "upper", 18 * 4, 18 * 4);
}

TEST(TensorRearrange, BlocksizeThatDoesNotDivideNamesTheNode) {
  ModelBuilder b(14);
  b.input("x", kFloat, Shape{1, 6, 2, 3});
  set_attr(b.node("DepthToSpace", {"x"}, {"bad_block"}), "blocksize", int64_t{2});
  expect_node_error(b, "bad_block", "divisible by blocksize^2");
  // 2^32 squared wraps to 0 in int64: must be an error, not a division by zero.
  ModelBuilder huge(14);
  huge.input("x", kFloat, Shape{1, 8, 2, 3});
  set_attr(huge.node("DepthToSpace", {"x"}, {"huge_block"}), "blocksize", int64_t{1} << 32);
  expect_node_error(huge, "huge_block", "divisible by blocksize^2");
}

TEST(TensorErrors, OverflowingAttributesAndBadCastTargetNameTheNode) {
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{2, 3}).ints("repeats", {INT64_MAX, 1});
    b.node("Tile", {"x", "repeats"}, {"tile_overflow"});
    expect_node_error(b, "tile_overflow", "repeats overflow axis 0");
  }
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{2, 3}).ints("pads", {INT64_MAX, 0, INT64_MAX, 0});
    b.node("Pad", {"x", "pads"}, {"pad_overflow"});
    expect_node_error(b, "pad_overflow", "pads overflow axis 0");
  }
  {
    ModelBuilder b(13);
    b.input("x", kFloat, Shape{2});
    set_attr(b.node("Cast", {"x"}, {"cast_nowhere"}), "to", int64_t{999});
    expect_node_error(b, "cast_nowhere", "valid 'to' dtype, got 999");
  }
}

}  // namespace modelcost::testing
