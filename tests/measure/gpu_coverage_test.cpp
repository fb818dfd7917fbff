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
  b.ints("axes", {-1});
  b.node("ReduceMean", {"x", "axes"}, {"mean"});
  b.node("ReduceProd", {"x", "axes"}, {"prod"});
  for (const char* n : {"am", "an", "cs", "mean", "prod"}) b.output(n);
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

}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
