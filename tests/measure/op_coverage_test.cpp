// Coverage of measurement as a property of the op table: every standard op either has a
// measurement planner or a named reason; the ops exporters emit all have planners; the FLOPs
// column of the elementwise list agrees with the op table's cost rules.
#include <gtest/gtest.h>

#include <iostream>

#include "measure/op_plan.h"
#include "ops/op_registry.h"
#include "test_support.h"

namespace modelcost::testing {

TEST(MeasureCoverage, EveryStandardOpHasAPlannerOrANamedReason) {
  std::vector<std::string> unnamed, named;
  for (const OpRule* rule : OpRegistry::instance().all()) {
    if (!is_standard_domain(rule->domain)) continue;
    const std::string op(rule->op_type);
    if (measurement_gap(op).empty()) continue;
    (gap_is_named(op) ? named : unnamed).push_back(op + ": " + measurement_gap(op));
  }
  std::string list;
  for (const auto& n : unnamed) list += n + "\n";
  EXPECT_TRUE(unnamed.empty()) << "standard ops with neither a planner nor a named reason:\n" << list;
  std::cout << named.size() << " standard op types not measured, each with its reason:\n";
  for (const auto& n : named) std::cout << "  " << n << "\n";
}

// The standard ops torch, TF (tf2onnx) and ORT exports use in the reference models and the
// classification, segmentation, detection and transformer exports.
TEST(MeasureCoverage, OpsExportersEmitHavePlanners) {
  const char* ops[] = {
      "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Erf", "Tanh", "Sigmoid",
      "Relu", "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu", "Clip", "Softplus", "Elu", "Selu", "Mish", "Floor",
      "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Atan", "Max", "Min", "Sum", "Mean", "Mod", "Equal", "Less",
      "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf", "Where", "Cast",
      "CastLike", "BitShift", "BitwiseAnd", "CumSum", "Gather", "GatherND", "GatherElements", "ScatterND",
      "ScatterElements", "Expand", "Range", "ArgMax", "ArgMin", "Transpose", "Slice", "Concat", "Split", "Pad", "Tile",
      "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare",
      "ReduceLogSumExp", "Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "Conv", "MaxPool",
      "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "MatMul", "Gemm", "Resize", "Upsample", "Reshape",
      "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Shape", "Size", "Constant", "TopK", "NonZero",
      "NonMaxSuppression", "RoiAlign", "If"};
  for (const char* op : ops) EXPECT_EQ(measurement_gap(op), "") << op;
}

namespace {

// Nodes of `graph` (If branches included) whose plan is unsupported, with the reason.
void collect_unplanned(const Graph& graph, std::vector<std::string>& out) {
  for (const Node& node : graph.nodes) {
    NodeAnalysis a;
    a.node = &node;
    a.graph = &graph;
    const OpPlan plan = plan_operation(make_node_spec(a, "fp16"));
    if (is_unsupported(plan)) out.push_back(node.op_type + " " + node.name + ": " + plan_reason(plan));
    if (const auto* branch = std::get_if<BranchPlan>(&plan))
      collect_unplanned(*node.subgraphs[static_cast<size_t>(branch->subgraph)].graph, out);
  }
}

}  // namespace

// The torchvision detection exports: NonZero, NonMaxSuppression (inside If) and RoiAlign run at
// the analyzer's bounds, so every node has a plan and the whole model can be replayed.
TEST(MeasureCoverage, DetectionExportsPlanEveryNodeAndTheBranchesTheyRun) {
  std::vector<std::string> models = {MODELCOST_SOURCE_DIR "/tests/models/unseen/fasterrcnn_mobilenet_v3_large_fpn_op17.onnx",
                                     MODELCOST_SOURCE_DIR "/tests/models/unseen/retinanet_resnet50_fpn_op17.onnx"};
  if (shared_models_present()) models.push_back(shared_model("ssdlite320_mobilenet_v3_large_op17.onnx"));
  for (const std::string& path : models) {
    auto run = analyse_file(path);
    std::vector<std::string> unplanned;
    collect_unplanned(*run->analysis.graph, unplanned);
    std::string list;
    for (const auto& u : unplanned) list += "  " + u + "\n";
    EXPECT_TRUE(unplanned.empty()) << path << ":\n" << list;
  }
}

namespace {

struct ListedOp {
  const char* onnx;
  int arity;
  double flops;
};

#define MC_LISTED(name, onnx, flops, expr) {onnx, arity, flops},
std::vector<ListedOp> listed_ops() {
  std::vector<ListedOp> out;
  int arity = 1;
  const ListedOp unary[] = {MC_UNARY_OPS(MC_LISTED)};
  arity = 2;
  const ListedOp binary[] = {MC_BINARY_OPS(MC_LISTED)};
  for (const auto& o : unary) out.push_back({o.onnx, 1, o.flops});
  for (const auto& o : binary) out.push_back({o.onnx, 2, o.flops});
  return out;
}
#undef MC_LISTED

int32_t input_dtype(const std::string& op) {
  if (op == "Not" || op == "And" || op == "Or" || op == "Xor") return kBool;
  if (op.rfind("Bitwise", 0) == 0 || op == "Mod") return kInt64;
  return kFloat;
}

}  // namespace

TEST(MeasureCoverage, ElementwiseListFlopsMatchTheOpTable) {
  for (const ListedOp& op : listed_ops()) {
    const std::string name = op.onnx;
    if (name.empty() || name == "Identity") continue;
    ModelBuilder b(20);
    const int32_t dtype = input_dtype(name);
    b.input("a", dtype, Shape{2, 3}).input("b", dtype, Shape{2, 3});
    if (op.arity == 1) b.node(name, {"a"}, {"y"});
    else b.node(name, {"a", "b"}, {"y"});
    b.output("y");
    auto run = analyse(b);
    const double per_element = run->cost("y").flops / 6;
    // Integer and bool ops count no float FLOPs in the op table.
    if (dtype == kFloat) EXPECT_EQ(per_element, op.flops) << name;
    const OpPlan plan = plan_operation(make_node_spec(run->node("y"), ""));
    ASSERT_TRUE(std::holds_alternative<ElementwisePlan>(plan)) << name << ": " << plan_reason(plan);
  }
}

}  // namespace modelcost::testing
