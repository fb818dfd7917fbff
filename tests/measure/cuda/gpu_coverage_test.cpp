// The GPU kernels of the kinds added for coverage against the CPU reference: the generic
// elementwise path (comparisons, logical, integer ops, mixed dtypes), trigonometric ops on the
// fast path, ArgMax, CumSum, reductions with axes as an input, gathers and scatters by index.
#ifdef MODELCOST_HAVE_CUDA

#include "gpu_check.h"

namespace modelcost::testing {

TEST(MeasureGpuCoverage, ElementwiseGenericAndTrigonometric) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(17);
  b.input("x", kFloat, Shape{3, 5, 8}).input("row", kFloat, Shape{8});
  b.node("Greater", {"x", "row"}, {"gt"});
  b.node("Sin", {"x"}, {"sin"});
  b.node("Cos", {"x"}, {"cos"});
  b.node("IsNaN", {"x"}, {"nan"});
  b.input("p", kBool, Shape{3, 5, 8}).input("q", kBool, Shape{5, 1});
  b.node("And", {"p", "q"}, {"and"});
  b.node("Not", {"p"}, {"not"});
  b.node("Where", {"p", "x", "row"}, {"where"});
  b.input("i", kInt64, Shape{3, 5, 8}).input("j", kInt64, Shape{8});
  b.node("Add", {"i", "j"}, {"iadd"});
  set_attr(b.node("Cast", {"i"}, {"icast"}), "to", int64_t{kFloat});
  for (const char* n : {"gt", "sin", "cos", "nan", "and", "not", "where", "iadd", "icast"}) b.output(n);
  for (const char* n : {"gt", "and", "not", "where", "iadd", "icast", "nan"}) check_both(b, n, 1e-7, 1e-7);
  check_both(b, "sin", 1e-5, 2e-3);
  check_both(b, "cos", 1e-5, 2e-3);
}

TEST(MeasureGpuCoverage, ArgMaxCumSumAndReduceMeanWithAxesInput) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(18);
  b.input("x", kFloat, Shape{4, 7, 33});
  set_attr(b.node("ArgMax", {"x"}, {"am"}), "axis", int64_t{2});
  set_attr(b.node("ArgMin", {"x"}, {"an"}), "axis", int64_t{1});
  b.ints("axis", {1}, {});
  b.node("CumSum", {"x", "axis"}, {"cs"});
  b.input("mask", kInt64, Shape{2, 40});
  b.node("CumSum", {"mask", "axis"}, {"positions"});
  b.ints("axes", {-1});
  b.node("ReduceMean", {"x", "axes"}, {"mean"});
  b.node("ReduceProd", {"x", "axes"}, {"prod"});
  for (const char* n : {"am", "an", "cs", "mean", "prod", "positions"}) b.output(n);
  check_node(b, "positions", "fp32", 1e-7);
  check_both(b, "am", 1e-7, 1e-7);
  check_both(b, "an", 1e-7, 1e-7);
  check_both(b, "cs", 1e-5, 5e-3);
  check_both(b, "mean", 1e-5, 3e-3);
  check_node(b, "prod", "fp32", 1e-4);
}

TEST(MeasureGpuCoverage, GathersAndScattersByIndex) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b(16);
  b.input("data", kFloat, Shape{4, 6, 5});
  b.input("ie", kInt64, Shape{4, 3, 5});
  set_attr(b.node("GatherElements", {"data", "ie"}, {"ge"}), "axis", int64_t{1});
  b.input("ind", kInt64, Shape{2, 3, 2});
  b.node("GatherND", {"data", "ind"}, {"gnd"});
  // Scatters with distinct, known indices (duplicates leave the order undefined).
  b.ints("rows", {3, 0}, Shape{2, 1}).input("upd", kFloat, Shape{2, 6, 5});
  b.node("ScatterND", {"data", "rows", "upd"}, {"snd"});
  b.ints("cols", {5, 0, 2, 1, 4, 3}, Shape{1, 6, 1}).input("supd", kFloat, Shape{1, 6, 1});
  set_attr(b.node("ScatterElements", {"data", "cols", "supd"}, {"se"}), "axis", int64_t{1});
  for (const char* n : {"ge", "gnd", "snd", "se"}) b.output(n);
  for (const char* n : {"ge", "gnd", "snd", "se"}) check_both(b, n, 1e-7, 1e-7);
}

// ConvNeXt's 7x7 depthwise conv with bias: the runner times the own kernel against cuDNN and
// keeps the faster; the result must match either way, in both layouts.
TEST(MeasureGpuCoverage, DepthwiseSevenBySeven) {
  SKIP_WITHOUT_GPU();
  ModelBuilder b;
  b.input("x", kFloat, Shape{2, 16, 14, 14}).weight("w", kFloat, Shape{16, 1, 7, 7}).weight("bias", kFloat, Shape{16});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"dw"});
  set_attr(conv, "group", int64_t{16});
  set_attr(conv, "pads", std::vector<int64_t>{3, 3, 3, 3});
  b.input("odd", kFloat, Shape{1, 6, 9, 9}).weight("w6", kFloat, Shape{6, 1, 3, 3});
  auto& strided = b.node("Conv", {"odd", "w6"}, {"dw_odd"});
  set_attr(strided, "group", int64_t{6});
  set_attr(strided, "strides", std::vector<int64_t>{2, 2});
  b.output("dw").output("dw_odd");
  check_both(b, "dw", 5e-3, 3e-3);
  check_node(b, "dw", "fp16", 3e-3, /*channels_last=*/true);
  check_node(b, "dw_odd", "fp16", 3e-3, /*channels_last=*/true);
  check_node(b, "dw_odd", "fp32", 5e-3);
}

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
