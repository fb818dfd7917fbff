// Tensor family, indexing and resampling: Gather*, Scatter*, Where, NonZero, Compress, OneHot,
// Unique, ReverseSequence, Resize, Upsample, CenterCropPad, string ops; and the folding chains
// that TorchScript exports build from them (Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {
namespace {

constexpr int32_t kString = onnx::TensorProto::STRING;

std::vector<int64_t> folded(const AnalysisRun& run, const std::string& tensor) {
  const auto& value = run.tensor(tensor).value;
  return value ? value->ints : std::vector<int64_t>{};
}

void bools(ModelBuilder& b, const std::string& name, const std::vector<int32_t>& values) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kBool);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int32_t v : values) t->add_int32_data(v);
}

void expect_bytes(const AnalysisRun& run, const std::string& node, double read, double written, double flops = 0) {
  const NodeCost& c = run.cost(node);
  EXPECT_TRUE(c.known) << node;
  EXPECT_DOUBLE_EQ(c.macs, 0) << node;
  EXPECT_DOUBLE_EQ(c.flops, flops) << node;
  EXPECT_DOUBLE_EQ(c.bytes_read, read) << node;
  EXPECT_DOUBLE_EQ(c.bytes_written, written) << node;
}

}  // namespace

TEST(TensorGather, ShapesBytesAndFolding) {
  ModelBuilder b(13);
  b.input("data", kFloat, Shape{5, 6}).input("idx", kInt64, Shape{2, 3});
  b.ints("first", {0}, {}).ints("v", {10, 20, 30, 40}).ints("ends", {-1, 0});
  b.ints("m", {1, 2, 3, 4, 5, 6}, {2, 3}).ints("two", {2}, {});
  set_attr(b.node("Gather", {"data", "idx"}, {"cols"}), "axis", int64_t{1});
  b.node("Gather", {"data", "first"}, {"row"});
  b.node("Gather", {"v", "ends"}, {"picked"});
  set_attr(b.node("Gather", {"m", "two"}, {"last_col"}), "axis", int64_t{-1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("cols"), (Shape{5, 2, 3}));
  expect_bytes(*run, "cols", 30 * 4 + 6 * 8, 30 * 4);
  EXPECT_EQ(run->shape("row"), (Shape{6}));  // a scalar index drops the axis
  EXPECT_EQ(folded(*run, "picked"), (std::vector<int64_t>{40, 10}));
  EXPECT_EQ(run->shape("last_col"), (Shape{2}));
  EXPECT_EQ(folded(*run, "last_col"), (std::vector<int64_t>{3, 6}));
}

TEST(TensorGather, MatrixOfIndicesOnAMiddleAxisFolds) {
  std::vector<int64_t> cube(24);
  for (int64_t i = 0; i < 24; ++i) cube[i] = i;
  ModelBuilder b(13);
  b.ints("cube", cube, {2, 3, 4}).ints("idx", {0, 2, 1, 1}, {2, 2});
  set_attr(b.node("Gather", {"cube", "idx"}, {"g"}), "axis", int64_t{1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("g"), (Shape{2, 2, 2, 4}));
  // out[b][i][j][:] = cube[b][idx[i][j]][:]
  EXPECT_EQ(folded(*run, "g"), (std::vector<int64_t>{0,  1,  2,  3,  8,  9,  10, 11, 4,  5,  6,  7,  4,  5,  6,  7,
                                                     12, 13, 14, 15, 20, 21, 22, 23, 16, 17, 18, 19, 16, 17, 18, 19}));
}

TEST(TensorGather, IndexOutOfRangeNamesTheNode) {
  ModelBuilder b(13);
  b.input("data", kFloat, Shape{5}).ints("idx", {5});
  b.node("Gather", {"data", "idx"}, {"too_far"});
  expect_node_error(b, "too_far", "index 5 is out of range for axis of size 5");
}

TEST(TensorGather, ElementsAndND) {
  ModelBuilder b(13);
  b.input("data", kFloat, Shape{3, 4}).input("idx", kInt64, Shape{2, 4});
  b.input("cube", kFloat, Shape{2, 3, 4}).input("pairs", kInt64, Shape{2, 2}).input("singles", kInt64, Shape{2, 1});
  b.node("GatherElements", {"data", "idx"}, {"elements"});
  b.node("GatherND", {"cube", "pairs"}, {"nd"});
  set_attr(b.node("GatherND", {"cube", "singles"}, {"nd_batched"}), "batch_dims", int64_t{1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("elements"), (Shape{2, 4}));
  expect_bytes(*run, "elements", 8 * 4 + 8 * 8, 8 * 4);  // reads only what it selects
  EXPECT_EQ(run->shape("nd"), (Shape{2, 4}));
  expect_bytes(*run, "nd", 8 * 4 + 4 * 8, 8 * 4);
  EXPECT_EQ(run->shape("nd_batched"), (Shape{2, 4}));
}

TEST(TensorScatter, ReductionsCountOneFlopPerUpdate) {
  ModelBuilder b(16);
  b.input("data", kFloat, Shape{4, 4}).input("idx", kInt64, Shape{2, 4}).input("upd", kFloat, Shape{2, 4});
  b.input("rows", kInt64, Shape{2, 1});
  b.node("ScatterElements", {"data", "idx", "upd"}, {"replace"});
  set_attr(b.node("ScatterElements", {"data", "idx", "upd"}, {"add"}), "reduction", std::string("add"));
  b.node("ScatterND", {"data", "rows", "upd"}, {"nd"});
  set_attr(b.node("ScatterND", {"data", "rows", "upd"}, {"nd_mul"}), "reduction", std::string("mul"));
  auto run = analyse(b);
  EXPECT_EQ(run->shape("replace"), (Shape{4, 4}));
  expect_bytes(*run, "replace", 16 * 4 + 8 * 8 + 8 * 4, 16 * 4);
  expect_bytes(*run, "add", 16 * 4 + 8 * 8 + 8 * 4, 16 * 4, 8);
  EXPECT_EQ(run->shape("nd"), (Shape{4, 4}));
  expect_bytes(*run, "nd", 16 * 4 + 2 * 8 + 8 * 4, 16 * 4);
  expect_bytes(*run, "nd_mul", 16 * 4 + 2 * 8 + 8 * 4, 16 * 4, 8);

  ModelBuilder old(9);
  old.input("data", kFloat, Shape{4, 4}).input("idx", kInt64, Shape{2, 4}).input("upd", kFloat, Shape{2, 4});
  old.node("Scatter", {"data", "idx", "upd"}, {"scattered"});
  auto run9 = analyse(old);
  EXPECT_EQ(run9->shape("scattered"), (Shape{4, 4}));
  expect_bytes(*run9, "scattered", 16 * 4 + 8 * 8 + 8 * 4, 16 * 4);
}

TEST(TensorWhere, BroadcastsThreeWaysAndFolds) {
  ModelBuilder b(16);
  b.input("cond", kBool, Shape{2, 1}).input("x", kFloat, Shape{1, 3}).input("y", kFloat, Shape{});
  b.node("Where", {"cond", "x", "y"}, {"picked"});
  bools(b, "known_cond", {1, 0});
  b.ints("a", {1, 2}).ints("c", {3, 4});
  b.node("Where", {"known_cond", "a", "c"}, {"folded"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("picked"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("picked").dtype, kFloat);
  expect_bytes(*run, "picked", 2 * 1 + 3 * 4 + 4, 6 * 4);
  EXPECT_EQ(folded(*run, "folded"), (std::vector<int64_t>{1, 4}));
}

TEST(TensorNonZero, KnownValuesAreExact) {
  ModelBuilder b(13);
  b.ints("v", {0, 1, 0, 2, 0, 3}, {2, 3});
  b.node("NonZero", {"v"}, {"where"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("where"), (Shape{2, 3}));  // rank 2, three non-zeros
  EXPECT_EQ(run->tensor("where").dtype, kInt64);
  EXPECT_EQ(folded(*run, "where"), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));  // rows, then columns
  EXPECT_FALSE(run->tensor("where").estimate);
  EXPECT_FALSE(run->cost("where").estimate);
  expect_bytes(*run, "where", 6 * 8, 6 * 8);
}

TEST(TensorNonZero, UnknownValuesGiveAnUpperBoundMarkedEstimate) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3});
  b.node("NonZero", {"x"}, {"where"});
  b.node("Transpose", {"where"}, {"downstream"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("where"), (Shape{2, 6}));  // every element non-zero
  EXPECT_TRUE(run->tensor("where").estimate);
  EXPECT_TRUE(run->cost("where").estimate);
  expect_bytes(*run, "where", 6 * 4, 12 * 8);
  EXPECT_TRUE(run->tensor("downstream").estimate);  // the bound propagates
  EXPECT_TRUE(run->cost("downstream").estimate);
  EXPECT_EQ(run->analysis.totals.estimated_nodes, 2u);
}

TEST(TensorCompress, KnownConditionExactUnknownEstimate) {
  ModelBuilder b(11);
  b.input("x", kFloat, Shape{3, 4}).input("unknown", kBool, Shape{3});
  bools(b, "keep", {1, 0, 1});
  bools(b, "flat_keep", {1, 0, 1, 1});
  set_attr(b.node("Compress", {"x", "keep"}, {"rows"}), "axis", int64_t{0});
  set_attr(b.node("Compress", {"x", "unknown"}, {"maybe_rows"}), "axis", int64_t{0});
  b.node("Compress", {"x", "flat_keep"}, {"flat"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("rows"), (Shape{2, 4}));
  EXPECT_FALSE(run->tensor("rows").estimate);
  expect_bytes(*run, "rows", 12 * 4 + 3, 8 * 4);
  EXPECT_EQ(run->shape("maybe_rows"), (Shape{3, 4}));
  EXPECT_TRUE(run->tensor("maybe_rows").estimate);
  EXPECT_TRUE(run->cost("maybe_rows").estimate);
  EXPECT_EQ(run->shape("flat"), (Shape{3}));
}

TEST(TensorOneHot, DepthAxisAndValuesDtype) {
  ModelBuilder b(11);
  b.input("idx", kInt64, Shape{2, 3}).ints("depth", {10}, {}).floats("values", {0.f, 1.f});
  b.node("OneHot", {"idx", "depth", "values"}, {"last"});
  set_attr(b.node("OneHot", {"idx", "depth", "values"}, {"middle"}), "axis", int64_t{1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("last"), (Shape{2, 3, 10}));
  EXPECT_EQ(run->tensor("last").dtype, kFloat);
  EXPECT_EQ(run->shape("middle"), (Shape{2, 10, 3}));
  expect_bytes(*run, "last", 6 * 8 + 8 + 2 * 4, 60 * 4);
}

TEST(TensorUnique, OutputsAreBoundsAndASortIsCounted) {
  ModelBuilder b(11);
  b.input("x", kFloat, Shape{2, 5});
  b.node("Unique", {"x"}, {"y", "indices", "inverse", "counts"});
  set_attr(b.node("Unique", {"x"}, {"rows", "row_indices", "row_inverse", "row_counts"}), "axis", int64_t{0});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("y"), (Shape{10}));
  EXPECT_TRUE(run->tensor("y").estimate);
  EXPECT_TRUE(run->tensor("indices").estimate);
  EXPECT_TRUE(run->tensor("counts").estimate);
  EXPECT_EQ(run->shape("inverse"), (Shape{10}));
  EXPECT_FALSE(run->tensor("inverse").estimate);  // one entry per input element, always
  EXPECT_TRUE(run->cost("y").estimate);
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 10 * std::log2(10.0));  // n log2 n comparisons
  EXPECT_DOUBLE_EQ(run->cost("y").bytes_written, 10 * 4 + 3 * 10 * 8);
  EXPECT_EQ(run->shape("rows"), (Shape{2, 5}));
  EXPECT_EQ(run->shape("row_inverse"), (Shape{2}));
}

TEST(TensorReverseSequenceAndCrop, CopiesOfTheInput) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{4, 3}).input("lens", kInt64, Shape{3});
  b.input("img", kFloat, Shape{10, 8, 3}).ints("crop", {6, 12});
  b.node("ReverseSequence", {"x", "lens"}, {"reversed"});
  set_attr(b.node("CenterCropPad", {"img", "crop"}, {"cropped"}), "axes", std::vector<int64_t>{0, 1});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("reversed"), (Shape{4, 3}));
  expect_bytes(*run, "reversed", 12 * 4 + 3 * 8, 12 * 4);
  EXPECT_EQ(run->shape("cropped"), (Shape{6, 12, 3}));
  expect_bytes(*run, "cropped", 240 * 4 + 2 * 8, 216 * 4);
}

TEST(TensorResize, ScalesAndModes) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 3, 4, 4}).floats("scales", {1, 1, 2, 2});
  set_attr(b.node("Resize", {"x", "", "scales"}, {"linear"}), "mode", std::string("linear"));
  set_attr(b.node("Resize", {"x", "", "scales"}, {"cubic"}), "mode", std::string("cubic"));
  b.node("Resize", {"x", "", "scales"}, {"nearest"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("linear"), (Shape{1, 3, 8, 8}));
  expect_bytes(*run, "linear", 48 * 4 + 4 * 4, 192 * 4, 192 * 7);  // 4 points: 4 mul + 3 add
  expect_bytes(*run, "cubic", 48 * 4 + 4 * 4, 192 * 4, 192 * 31);  // 16 points: 16 mul + 15 add
  expect_bytes(*run, "nearest", 48 * 4 + 4 * 4, 192 * 4, 0);
}

TEST(TensorResize, SizesStretchAndKeepAspectRatio) {
  ModelBuilder b13(13);
  b13.input("x", kFloat, Shape{1, 3, 4, 4}).ints("sizes", {1, 3, 6, 10});
  b13.node("Resize", {"x", "", "", "sizes"}, {"stretched"});
  auto run13 = analyse(b13);
  EXPECT_EQ(run13->shape("stretched"), (Shape{1, 3, 6, 10}));
  expect_bytes(*run13, "stretched", 48 * 4 + 4 * 8, 180 * 4);

  ModelBuilder b18(18);
  b18.input("x", kFloat, Shape{1, 3, 4, 4}).ints("sizes", {6, 10});
  auto& inside = b18.node("Resize", {"x", "", "", "sizes"}, {"not_larger"});
  set_attr(inside, "axes", std::vector<int64_t>{2, 3});
  set_attr(inside, "keep_aspect_ratio_policy", std::string("not_larger"));
  auto& outside = b18.node("Resize", {"x", "", "", "sizes"}, {"not_smaller"});
  set_attr(outside, "axes", std::vector<int64_t>{-2, -1});
  set_attr(outside, "keep_aspect_ratio_policy", std::string("not_smaller"));
  set_attr(outside, "mode", std::string("linear"));
  auto run18 = analyse(b18);
  EXPECT_EQ(run18->shape("not_larger"), (Shape{1, 3, 6, 6}));     // scale min(1.5, 2.5)
  EXPECT_EQ(run18->shape("not_smaller"), (Shape{1, 3, 10, 10}));  // scale max(1.5, 2.5)
  EXPECT_DOUBLE_EQ(run18->cost("not_smaller").flops, 300 * 7);
}

TEST(TensorResize, Opset10AndUpsample) {
  ModelBuilder b10(10);
  b10.input("x", kFloat, Shape{1, 3, 4, 4}).floats("scales", {1, 1, 2, 3});
  b10.node("Resize", {"x", "scales"}, {"resized"});
  b10.node("Upsample", {"x", "scales"}, {"upsampled"});
  auto run10 = analyse(b10);
  EXPECT_EQ(run10->shape("resized"), (Shape{1, 3, 8, 12}));
  EXPECT_DOUBLE_EQ(run10->cost("resized").flops, 0);  // nearest by default

  ModelBuilder b9(9);
  b9.input("x", kFloat, Shape{1, 3, 4, 4}).floats("scales", {1, 1, 2, 3});
  set_attr(b9.node("Upsample", {"x", "scales"}, {"upsampled"}), "mode", std::string("linear"));
  auto run9 = analyse(b9);
  EXPECT_EQ(run9->shape("upsampled"), (Shape{1, 3, 8, 12}));
  expect_bytes(*run9, "upsampled", 48 * 4 + 4 * 4, 288 * 4, 288 * 7);

  ModelBuilder b7(7);
  b7.input("x", kFloat, Shape{1, 3, 4, 4});
  set_attr(b7.node("Upsample", {"x"}, {"upsampled"}), "scales", std::vector<float>{1, 1, 2, 2});
  EXPECT_EQ(analyse(b7)->shape("upsampled"), (Shape{1, 3, 8, 8}));
}

TEST(TensorResize, BadScalesNameTheNode) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 3, 4, 4}).floats("scales", {2, 2});
  b.node("Resize", {"x", "", "scales"}, {"short_scales"});
  expect_node_error(b, "short_scales", "scales has 2 entries for 4 axes");
  ModelBuilder huge(13);
  huge.input("x", kFloat, Shape{2, 3}).floats("scales", {1.f, 1e30f});
  huge.node("Resize", {"x", "", "scales"}, {"huge_scale"});
  expect_node_error(huge, "huge_scale", "scaling gives an invalid dim");
}

TEST(TensorStrings, StringOpsHaveShapesAndMoveNoCountedBytes) {
  ModelBuilder b(20);
  b.input("s", kString, Shape{1, 4}).input("t", kString, Shape{4});
  b.node("StringNormalizer", {"s"}, {"normalized"});
  set_attr(b.node("RegexFullMatch", {"t"}, {"matches"}), "pattern", std::string("a+"));
  b.node("StringConcat", {"s", "t"}, {"joined"});
  set_attr(b.node("StringSplit", {"t"}, {"parts", "counts"}), "maxsplit", int64_t{2});
  auto& stop = b.node("StringNormalizer", {"s"}, {"filtered"});
  auto* words = stop.add_attribute();
  words->set_name("stopwords");
  words->set_type(onnx::AttributeProto::STRINGS);
  words->add_strings("the");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("normalized"), (Shape{1, 4}));
  EXPECT_FALSE(run->tensor("normalized").estimate);
  EXPECT_TRUE(run->tensor("filtered").estimate);  // stopwords can only shrink it
  EXPECT_EQ(run->shape("matches"), (Shape{4}));
  EXPECT_EQ(run->tensor("matches").dtype, kBool);
  expect_bytes(*run, "matches", 0, 4);  // strings have no fixed size: counted as 0 bytes
  EXPECT_EQ(run->shape("joined"), (Shape{1, 4}));
  EXPECT_EQ(run->shape("parts"), (Shape{4, 3}));
  EXPECT_TRUE(run->tensor("parts").estimate);
  EXPECT_EQ(run->shape("counts"), (Shape{4}));
  EXPECT_EQ(run->tensor("counts").dtype, kInt64);
  expect_bytes(*run, "normalized", 0, 0);
  expect_bytes(*run, "joined", 0, 0);
  expect_bytes(*run, "parts", 0, 4 * 8);  // only the int64 counts have a size
}

TEST(TensorStrings, DataDependentSizesFallBackToTheFile) {
  ModelBuilder b(20);
  b.input("encoded", kUint8, Shape{1000}).input("t", kString, Shape{4});
  b.node("ImageDecoder", {"encoded"}, {"declared"});
  b.value_info("declared", kUint8, Shape{224, 224, 3});
  b.node("ImageDecoder", {"encoded"}, {"undeclared"});
  b.node("StringSplit", {"t"}, {"parts", "counts"});  // no maxsplit: unbounded
  auto run = analyse(b);
  EXPECT_EQ(run->shape("declared"), (Shape{224, 224, 3}));
  expect_bytes(*run, "declared", 1000, 224 * 224 * 3);
  EXPECT_FALSE(run->tensor("undeclared").has_shape);
  EXPECT_FALSE(run->node("undeclared").shaped);
  EXPECT_FALSE(run->tensor("parts").has_shape);
}

TEST(TensorStrings, TfIdfVectorizerThroughOnnxInference) {
  ModelBuilder b(9);
  b.input("tokens", kInt64, Shape{2, 6});
  auto& n = b.node("TfIdfVectorizer", {"tokens"}, {"tf"});
  set_attr(n, "mode", std::string("TF"));
  set_attr(n, "min_gram_length", int64_t{1});
  set_attr(n, "max_gram_length", int64_t{1});
  set_attr(n, "max_skip_count", int64_t{0});
  set_attr(n, "ngram_counts", std::vector<int64_t>{0});
  set_attr(n, "ngram_indexes", std::vector<int64_t>{0, 1, 2});
  set_attr(n, "pool_int64s", std::vector<int64_t>{1, 2, 3});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("tf"), (Shape{2, 3}));
  EXPECT_EQ(run->tensor("tf").dtype, kFloat);
  expect_bytes(*run, "tf", 12 * 8, 6 * 4);
}

// ---- folding chains as TorchScript exports them ----

TEST(TensorFolding, ShapeGatherUnsqueezeConcatReshapeOpset13And11) {
  for (int opset : {11, 13}) {
    ModelBuilder b(opset);
    b.input("x", kFloat, Shape{2, 3, 4}).ints("zero", {0}, {}).ints("minus_one", {-1}).ints("axes", {0});
    b.node("Shape", {"x"}, {"shape"});
    b.node("Gather", {"shape", "zero"}, {"batch"});
    auto& unsq = b.node("Unsqueeze", opset >= 13 ? std::vector<std::string>{"batch", "axes"} : std::vector<std::string>{"batch"},
                        {"batch_1d"});
    if (opset < 13) set_attr(unsq, "axes", std::vector<int64_t>{0});
    set_attr(b.node("Concat", {"batch_1d", "minus_one"}, {"target"}), "axis", int64_t{0});
    b.node("Reshape", {"x", "target"}, {"flat"});
    auto run = analyse(b);
    EXPECT_EQ(run->shape("batch"), (Shape{})) << opset;
    EXPECT_EQ(folded(*run, "batch"), (std::vector<int64_t>{2})) << opset;
    EXPECT_EQ(folded(*run, "batch_1d"), (std::vector<int64_t>{2})) << opset;
    EXPECT_EQ(folded(*run, "target"), (std::vector<int64_t>{2, -1})) << opset;
    EXPECT_EQ(run->shape("flat"), (Shape{2, 12})) << opset;
    EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
    expect_bytes(*run, "shape", 0, 0);
    expect_bytes(*run, "batch", 8 + 8, 8);
    expect_bytes(*run, "target", 8 + 8, 2 * 8);
    expect_bytes(*run, "flat", 0, 0);
  }
}

TEST(TensorFolding, ShapeSliceToTheEndConcatReshape) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{2, 3, 4, 5});
  b.ints("start", {-2}).ints("end", {INT64_MAX}).ints("minus_one", {-1});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Slice", {"shape", "start", "end"}, {"tail"});
  set_attr(b.node("Concat", {"minus_one", "tail"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"merged"});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "tail"), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(run->shape("merged"), (Shape{6, 4, 5}));
}

TEST(TensorFolding, ExpandWithMinusOnesThroughConstantOfShapeEqualWhere) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{3, 1}).ints("wanted", {2, -1, 4}).ints("minus_one", {-1}, {});
  onnx::TensorProto one;
  one.set_data_type(kInt64);
  one.add_dims(1);
  one.add_int64_data(1);
  b.node("Shape", {"wanted"}, {"rank"});
  set_attr(b.node("ConstantOfShape", {"rank"}, {"ones"}), "value", one);
  b.node("Mul", {"ones", "minus_one"}, {"minus_ones"});
  b.node("Equal", {"wanted", "minus_ones"}, {"is_keep"});
  b.node("Where", {"is_keep", "ones", "wanted"}, {"target"});
  b.node("Expand", {"x", "target"}, {"expanded"});
  auto run = analyse(b);
  EXPECT_EQ(folded(*run, "ones"), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(folded(*run, "is_keep"), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(folded(*run, "target"), (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(run->shape("expanded"), (Shape{2, 3, 4}));
  EXPECT_DOUBLE_EQ(run->cost("minus_ones").flops, 0);  // integer arithmetic
  EXPECT_DOUBLE_EQ(run->cost("is_keep").flops, 0);
}

TEST(TensorFolding, CastToFloatScaleAndBackGivesResizeSizes) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 3, 4, 5});
  b.ints("two", {2}).ints("end", {INT64_MAX}).ints("batch_channels", {1, 3}).floats("factor", {2.f}, {});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Slice", {"shape", "two", "end"}, {"hw"});
  set_attr(b.node("Cast", {"hw"}, {"hw_float"}), "to", int64_t{kFloat});
  b.node("Mul", {"hw_float", "factor"}, {"scaled"});
  b.node("Floor", {"scaled"}, {"floored"});
  set_attr(b.node("Cast", {"floored"}, {"hw_int"}), "to", int64_t{kInt64});
  set_attr(b.node("Concat", {"batch_channels", "hw_int"}, {"sizes"}), "axis", int64_t{0});
  b.node("Resize", {"x", "", "", "sizes"}, {"upscaled"});
  auto run = analyse(b);
  ASSERT_TRUE(run->tensor("scaled").value);
  EXPECT_EQ(run->tensor("scaled").value->floats, (std::vector<double>{8, 10}));
  EXPECT_DOUBLE_EQ(run->cost("scaled").flops, 2);  // float arithmetic counts
  EXPECT_EQ(folded(*run, "sizes"), (std::vector<int64_t>{1, 3, 8, 10}));
  EXPECT_EQ(run->shape("upscaled"), (Shape{1, 3, 8, 10}));
}

TEST(TensorFolding, RangeOverASequenceLengthAndComputedTopK) {
  ModelBuilder b(13);
  b.input("ids", kInt64, Shape{1, 7}).input("scores", kFloat, Shape{2, 10});
  b.ints("one", {1}, {}).ints("zero", {0}, {}).ints("axes", {0}).ints("two", {2}, {});
  b.node("Shape", {"ids"}, {"ids_shape"});
  b.node("Gather", {"ids_shape", "one"}, {"seq"});
  b.node("Range", {"zero", "seq", "one"}, {"positions"});
  b.node("Unsqueeze", {"positions", "axes"}, {"position_ids"});
  b.node("Shape", {"scores"}, {"scores_shape"});
  b.node("Gather", {"scores_shape", "one"}, {"classes"});
  b.node("Div", {"classes", "two"}, {"half"});
  b.node("Unsqueeze", {"half", "axes"}, {"k"});
  b.node("TopK", {"scores", "k"}, {"best", "best_indices"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("positions"), (Shape{7}));
  EXPECT_EQ(folded(*run, "positions"), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(run->shape("position_ids"), (Shape{1, 7}));
  EXPECT_EQ(run->shape("best"), (Shape{2, 5}));
  EXPECT_FALSE(run->tensor("best").estimate);  // k was computed, so it is exact
}

TEST(TensorFolding, NonZeroOfAFoldedMaskIsExact) {
  ModelBuilder b(13);
  b.ints("v", {3, 0, 5, 0}).ints("zero", {0}, {});
  b.node("Equal", {"v", "zero"}, {"is_zero"});
  b.node("Not", {"is_zero"}, {"mask"});
  b.node("NonZero", {"mask"}, {"where"});
  auto run = analyse(b);
  EXPECT_EQ(run->shape("where"), (Shape{1, 2}));
  EXPECT_EQ(folded(*run, "where"), (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(run->tensor("where").estimate);
}

}  // namespace modelcost::testing
