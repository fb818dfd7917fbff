// Hand-computed cases for the CPU reference of the kinds and elementwise ops added for
// coverage: comparisons, logical and trigonometric ops, Where on bools, CumSum, ArgMax,
// reductions with axes as an input, gathers and scatters by index, Range.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_reference_run.h"
#include "measure/cpu_reference.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

}  // namespace

TEST(MeasureCpuReferenceCoverage, ComparisonsLogicalAndTrigonometry) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{4}).input("row", kFloat, Shape{1});
  b.node("Less", {"x", "row"}, {"lt"});
  b.node("Equal", {"x", "row"}, {"eq"});
  b.input("p", kBool, Shape{4}).input("q", kBool, Shape{4});
  b.node("And", {"p", "q"}, {"and"});
  b.node("Xor", {"p", "q"}, {"xor"});
  b.node("Not", {"p"}, {"not"});
  b.node("Where", {"p", "x", "row"}, {"where"});
  b.node("Sin", {"x"}, {"sin"});
  b.input("i", kInt64, Shape{4}).input("d", kInt64, Shape{4});
  b.node("Mod", {"i", "d"}, {"mod"});
  for (const char* n : {"lt", "eq", "and", "xor", "not", "where", "sin", "mod"}) b.output(n);
  auto run = analyse(b);
  const std::vector<float> x = {-1, 0.5f, 2, 0.5f}, row = {0.5f}, p = {1, 1, 0, 0}, q = {1, 0, 1, 0};
  EXPECT_EQ(run_planned_reference(*run, "lt", {x, row}), (std::vector<float>{1, 0, 0, 0}));
  EXPECT_EQ(run_planned_reference(*run, "eq", {x, row}), (std::vector<float>{0, 1, 0, 1}));
  EXPECT_EQ(run_planned_reference(*run, "and", {p, q}), (std::vector<float>{1, 0, 0, 0}));
  EXPECT_EQ(run_planned_reference(*run, "xor", {p, q}), (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(run_planned_reference(*run, "not", {p}), (std::vector<float>{0, 0, 1, 1}));
  EXPECT_EQ(run_planned_reference(*run, "where", {p, x, row}), (std::vector<float>{-1, 0.5f, 0.5f, 0.5f}));
  EXPECT_FLOAT_EQ(run_planned_reference(*run, "sin", {x})[2], std::sin(2.f));
  // Integer Mod takes the divisor's sign (Python's %): -7 % 3 = 2, 7 % -3 = -2.
  EXPECT_EQ(run_planned_reference(*run, "mod", {{-7, 7, 8, 9}, {3, -3, 3, 4}}), (std::vector<float>{2, -2, 2, 1}));
}

TEST(MeasureCpuReferenceCoverage, CumSumArgMaxAndReduceMeanWithAxesInput) {
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{2, 3});
  b.ints("axis", {1}, {});
  b.node("CumSum", {"x", "axis"}, {"cs"});
  auto& rev = b.node("CumSum", {"x", "axis"}, {"cs_rev_excl"});
  set_attr(rev, "reverse", int64_t{1});
  set_attr(rev, "exclusive", int64_t{1});
  set_attr(b.node("ArgMax", {"x"}, {"am"}), "axis", int64_t{1});
  b.ints("axes", {1});
  b.node("ReduceMean", {"x", "axes"}, {"mean"});
  for (const char* n : {"cs", "cs_rev_excl", "am", "mean"}) b.output(n);
  auto run = analyse(b);
  const std::vector<float> x = {1, 5, 2, 4, 3, 9};
  EXPECT_EQ(run_planned_reference(*run, "cs", {x}), (std::vector<float>{1, 6, 8, 4, 7, 16}));
  EXPECT_EQ(run_planned_reference(*run, "cs_rev_excl", {x}), (std::vector<float>{7, 2, 0, 12, 9, 0}));
  EXPECT_EQ(run_planned_reference(*run, "am", {x}), (std::vector<float>{1, 2}));
  EXPECT_EQ(run_planned_reference(*run, "mean", {x}), (std::vector<float>{8.f / 3, 16.f / 3}));
}

TEST(MeasureCpuReferenceCoverage, GathersAndScattersByIndex) {
  ModelBuilder b(16);
  b.input("data", kFloat, Shape{2, 3});
  b.input("ie", kInt64, Shape{2, 2});
  set_attr(b.node("GatherElements", {"data", "ie"}, {"ge"}), "axis", int64_t{1});
  b.input("upd", kFloat, Shape{2, 2});
  set_attr(b.node("ScatterElements", {"data", "ie", "upd"}, {"se"}), "axis", int64_t{1});
  b.input("ind", kInt64, Shape{2, 1});
  b.node("GatherND", {"data", "ind"}, {"gnd"});
  b.input("rows", kFloat, Shape{1, 3}).input("one", kInt64, Shape{1, 1});
  b.node("ScatterND", {"data", "one", "rows"}, {"snd"});
  for (const char* n : {"ge", "se", "gnd", "snd"}) b.output(n);
  auto run = analyse(b);
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  // GatherElements axis 1: out[i][j] = data[i][idx[i][j]]; -1 counts from the end.
  EXPECT_EQ(run_planned_reference(*run, "ge", {data, {2, 0, -1, 1}}), (std::vector<float>{3, 1, 6, 5}));
  // ScatterElements: data[i][idx[i][j]] = upd[i][j].
  EXPECT_EQ(run_planned_reference(*run, "se", {data, {2, 0, 1, 0}, {10, 20, 30, 40}}), (std::vector<float>{20, 2, 10, 40, 30, 6}));
  // GatherND with 1-component tuples picks whole rows: rows 1 then 0.
  EXPECT_EQ(run_planned_reference(*run, "gnd", {data, {1, 0}}), (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(run_planned_reference(*run, "snd", {data, {1}, {7, 8, 9}}), (std::vector<float>{1, 2, 3, 7, 8, 9}));
}

TEST(MeasureCpuReferenceCoverage, RangeFromItsInputs) {
  ModelBuilder b(13);
  b.input("start", kFloat, Shape{}).input("limit", kFloat, Shape{}).input("delta", kFloat, Shape{});
  b.node("Range", {"start", "limit", "delta"}, {"r"});
  b.value_info("r", kFloat, Shape{4});
  b.output("r");
  auto run = analyse(b);
  EXPECT_EQ(run_planned_reference(*run, "r", {{1}, {3}, {0.5f}}), (std::vector<float>{1, 1.5f, 2, 2.5f}));
}

TEST(MeasureCpuReferenceCoverage, TopKAndPadModes) {
  ModelBuilder b(19);
  b.input("x", kFloat, Shape{1, 5}).ints("k", {2}, Shape{1});
  b.node("TopK", {"x", "k"}, {"top", "top_index"});
  b.ints("pads", {0, 2, 0, 3}, Shape{4});
  for (const char* mode : {"reflect", "edge", "wrap"}) set_attr(b.node("Pad", {"x", "pads"}, {mode}), "mode", std::string(mode));
  b.output("top").output("top_index").output("reflect").output("edge").output("wrap");
  auto run = analyse(b);
  const std::vector<float> x = {3, 9, 1, 9, 4};
  EXPECT_EQ(run_planned_reference(*run, "top", {x}), (std::vector<float>{9, 9}));
  EXPECT_EQ(run_planned_reference(*run, "reflect", {x}), (std::vector<float>{1, 9, 3, 9, 1, 9, 4, 9, 1, 9}));
  EXPECT_EQ(run_planned_reference(*run, "edge", {x}), (std::vector<float>{3, 3, 3, 9, 1, 9, 4, 4, 4, 4}));
  EXPECT_EQ(run_planned_reference(*run, "wrap", {x}), (std::vector<float>{9, 4, 3, 9, 1, 9, 4, 3, 9, 1}));
}

// Cubic Resize at scale 1 samples whole pixels: the weights are 0, 1, 0, 0 and the output is the input.
TEST(MeasureCpuReferenceCoverage, CubicResizeAtScaleOneIsTheInput) {
  ModelBuilder b(13);
  b.input("x", kFloat, Shape{1, 1, 2, 3}).floats("roi", {}, {0}).floats("scales", {1, 1, 1, 1});
  set_attr(b.node("Resize", {"x", "roi", "scales"}, {"y"}), "mode", std::string("cubic"));
  b.output("y");
  auto run = analyse(b);
  const std::vector<float> x = {1, -2, 3, 0.5f, 4, -1};
  const std::vector<float> y = run_planned_reference(*run, "y", {x});
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 1e-6) << i;
}

}  // namespace modelcost::testing
