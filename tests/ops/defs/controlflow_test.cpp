// If / Loop / Scan and the sequence and optional ops: shapes through bodies, and costs that add
// the bodies in (taken branch, trip count x body, sequence length x body).
#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "ops/op_registry.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// A body graph built in code.
struct Body {
  onnx::GraphProto g;
  explicit Body(const std::string& name) { g.set_name(name); }
  Body& input(const std::string& name, int32_t dtype, const Shape& dims) {
    auto* vi = g.add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(outs.empty() ? op : outs[0]);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  Body& output(const std::string& name) {
    g.add_output()->set_name(name);
    return *this;
  }
};

void bool_initializer(ModelBuilder& b, const std::string& name, bool value) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kBool);
  t->add_int32_data(value ? 1 : 0);
}

bool has_warning(const AnalysisRun& run, const std::string& text) {
  for (const auto& w : run.analysis.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

// If(cond) with then = X x W1 [8 -> 16] and else = X x W2 [8 -> 32], X [4, 8].
ModelBuilder if_model(bool known, bool value) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{4, 8});
  b.weight("W1", kFloat, {8, 16});
  b.weight("W2", kFloat, {8, 32});
  if (known) bool_initializer(b, "cond", value);
  else b.input("cond", kBool, Shape{});
  Body then_branch("then"), else_branch("else");
  then_branch.node("MatMul", {"X", "W1"}, {"T"});
  then_branch.output("T");
  else_branch.node("MatMul", {"X", "W2"}, {"E"});
  else_branch.output("E");
  auto& n = b.node("If", {"cond"}, {"Y"});
  set_attr(n, "then_branch", then_branch.g);
  set_attr(n, "else_branch", else_branch.g);
  b.output("Y");
  return b;
}

TEST(ControlFlowIf, KnownTrueConditionCostsOnlyTheThenBranch) {
  auto run = analyse(if_model(true, true));
  EXPECT_EQ(run->shape("Y"), (Shape{4, 16}));
  const NodeCost& c = run->cost("Y");
  EXPECT_TRUE(c.known);
  EXPECT_FALSE(c.estimate);
  EXPECT_DOUBLE_EQ(c.macs, 4 * 8 * 16);
  EXPECT_DOUBLE_EQ(c.flops, 2 * 4 * 8 * 16);
  EXPECT_DOUBLE_EQ(c.params, 8 * 16);  // W2 is in the branch that does not run
  // If reads cond (1 byte) and writes Y; the branch's MatMul reads X and W1 and writes T.
  EXPECT_DOUBLE_EQ(c.bytes_read, 1 + 4 * 8 * 4 + 8 * 16 * 4);
  EXPECT_DOUBLE_EQ(c.bytes_written, 2 * 4 * 16 * 4);
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
  EXPECT_DOUBLE_EQ(run->analysis.totals.params, 8 * 16);
}

TEST(ControlFlowIf, KnownFalseConditionTakesTheElseBranch) {
  auto run = analyse(if_model(true, false));
  EXPECT_EQ(run->shape("Y"), (Shape{4, 32}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 4 * 8 * 32);
  EXPECT_FALSE(run->cost("Y").estimate);
}

TEST(ControlFlowIf, UnknownConditionBoundsTheOutputAndCostsTheHeavierBranch) {
  auto run = analyse(if_model(false, false));
  EXPECT_EQ(run->shape("Y"), (Shape{4, 32}));  // elementwise max of [4, 16] and [4, 32]
  EXPECT_TRUE(run->tensor("Y").estimate);
  const NodeCost& c = run->cost("Y");
  EXPECT_DOUBLE_EQ(c.macs, 4 * 8 * 32);
  EXPECT_TRUE(c.estimate);
}

TEST(ControlFlowIf, UnknownConditionWithAgreeingBranchesKeepsTheExactShape) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{3, 5});
  b.input("cond", kBool, Shape{});
  Body then_branch("then"), else_branch("else");
  then_branch.node("Relu", {"X"}, {"T"});
  then_branch.output("T");
  else_branch.node("Sigmoid", {"X"}, {"E"});
  else_branch.output("E");
  auto& n = b.node("If", {"cond"}, {"Y"});
  set_attr(n, "then_branch", then_branch.g);
  set_attr(n, "else_branch", else_branch.g);
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{3, 5}));
  EXPECT_FALSE(run->tensor("Y").estimate);
  EXPECT_DOUBLE_EQ(run->cost("Y").flops, 4 * 15);  // Sigmoid (4 / element) is the heavier branch
}

// The If row's plan: the branch the cost rule costs.
BranchPlan if_plan(const AnalysisRun& run, const std::string& output) {
  const NodeAnalysis& n = run.node(output);
  Diagnostics ignored;
  const OpContext c = OpContext::reading(*n.graph, *n.node, ignored);
  const OpPlan plan = OpRegistry::instance().find("", "If")->measure.plan(c);
  EXPECT_TRUE(std::holds_alternative<BranchPlan>(plan)) << plan_reason(plan);
  return std::holds_alternative<BranchPlan>(plan) ? std::get<BranchPlan>(plan) : BranchPlan{-1, ""};
}

TEST(ControlFlowIf, PlanRunsTheBranchTheCostRuleCosts) {
  auto known_false = analyse(if_model(true, false));
  const BranchPlan taken = if_plan(*known_false, "Y");
  EXPECT_EQ(known_false->node("Y").node->subgraphs[static_cast<size_t>(taken.subgraph)].attribute, "else_branch");
  EXPECT_NE(taken.why.find("known"), std::string::npos);
  // Unknown condition: the heavier branch, MatMul by W2 [8, 32] (else) against W1 [8, 16].
  auto unknown = analyse(if_model(false, false));
  const BranchPlan heavier = if_plan(*unknown, "Y");
  EXPECT_EQ(unknown->node("Y").node->subgraphs[static_cast<size_t>(heavier.subgraph)].attribute, "else_branch");
  EXPECT_NE(heavier.why.find("heavier"), std::string::npos);
}

// Loop: carried X [4, 8] -> X x W [8 x 8]; scan output Relu of it; cond passed through.
ModelBuilder loop_model(const std::string& trip, bool with_cond_input) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{4, 8});
  b.weight("W", kFloat, {8, 8});
  if (trip == "known") b.ints("M", {5}, {});
  else b.input("M", kInt64, Shape{});
  if (with_cond_input) bool_initializer(b, "go", true);
  Body body("body");
  body.input("i", kInt64, {}).input("cond_in", kBool, {}).input("x_in", kFloat, {4, 8});
  body.node("MatMul", {"x_in", "W"}, {"x_out"});
  body.node("Relu", {"x_out"}, {"r"});
  if (with_cond_input) {  // a condition computed from data: the trip count is only a bound
    auto& cast = body.node("Cast", {"i"}, {"cond_out"});
    set_attr(cast, "to", static_cast<int64_t>(kBool));
  }
  body.output(with_cond_input ? "cond_out" : "cond_in").output("x_out").output("r");
  auto& n = b.node("Loop", {"M", with_cond_input ? "go" : "", "X"}, {"Y", "S"});
  set_attr(n, "body", body.g);
  b.output("Y").output("S");
  return b;
}

TEST(ControlFlowLoop, KnownTripCountCostsRepeatsTimesBody) {
  auto run = analyse(loop_model("known", false));
  EXPECT_EQ(run->shape("Y"), (Shape{4, 8}));
  EXPECT_EQ(run->shape("S"), (Shape{5, 4, 8}));  // scan outputs gain the trip count
  const NodeCost& c = run->cost("Y");
  EXPECT_FALSE(c.estimate);
  const double body_macs = 4 * 8 * 8, body_flops = 2 * body_macs + 4 * 8;
  EXPECT_DOUBLE_EQ(c.macs, 5 * body_macs);
  EXPECT_DOUBLE_EQ(c.flops, 5 * body_flops);
  EXPECT_DOUBLE_EQ(c.params, 64);  // the outer weight the body reads, once
  // Loop reads M and X, writes Y and S; each iteration: MatMul reads x_in and W, writes x_out;
  // Relu reads x_out and writes r.
  EXPECT_DOUBLE_EQ(c.bytes_read, 8 + 128 + 5 * (128 + 256 + 128));
  EXPECT_DOUBLE_EQ(c.bytes_written, 128 + 5 * 128 + 5 * (128 + 128));
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
}

TEST(ControlFlowLoop, UnknownTripCountAssumesOneIterationAndWarns) {
  auto run = analyse(loop_model("unknown", false));
  EXPECT_EQ(run->shape("S"), (Shape{1, 4, 8}));
  EXPECT_TRUE(run->tensor("S").estimate);
  EXPECT_FALSE(run->tensor("Y").estimate);  // the carried shape does not change
  const NodeCost& c = run->cost("Y");
  EXPECT_TRUE(c.estimate);
  EXPECT_DOUBLE_EQ(c.macs, 4 * 8 * 8);
  EXPECT_TRUE(has_warning(*run, "trip count not known"));
}

TEST(ControlFlowLoop, DataDependentConditionMakesTheTripCountABound) {
  auto run = analyse(loop_model("known", true));
  EXPECT_EQ(run->shape("S"), (Shape{5, 4, 8}));
  EXPECT_TRUE(run->tensor("S").estimate);
  EXPECT_TRUE(run->cost("Y").estimate);
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 5 * 4 * 8 * 8);
}

TEST(ControlFlowLoop, FalseInitialConditionRunsNoIteration) {
  ModelBuilder b = loop_model("known", true);
  b.graph().mutable_initializer(b.graph().initializer_size() - 1)->set_int32_data(0, 0);  // go = false
  auto run = analyse(b);
  EXPECT_EQ(run->shape("S"), (Shape{0, 4, 8}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 0);
}

// Loop of trip count M over X [1, 2] whose body appends one [1, 2] row per iteration: Y grows.
ModelBuilder growing_loop_model(int64_t trip_count) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{1, 2});
  b.weight("row", kFloat, {1, 2});
  b.ints("M", {trip_count}, {});
  Body body("body");
  body.input("i", kInt64, {}).input("c", kBool, {}).input("x_in", kFloat, {1, 2});
  auto& concat = body.node("Concat", {"x_in", "row"}, {"x_out"});
  set_attr(concat, "axis", static_cast<int64_t>(0));
  body.output("c").output("x_out");
  auto& n = b.node("Loop", {"M", "", "X"}, {"Y"});
  set_attr(n, "body", body.g);
  b.output("Y");
  return b;
}

TEST(ControlFlowLoop, GrowingCarriedShapeIsFollowedOverTheIterations) {
  ModelBuilder b = growing_loop_model(3);
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{4, 2}));  // one row added per iteration
  EXPECT_FALSE(run->tensor("Y").estimate);    // all 3 iterations were followed
  EXPECT_TRUE(run->cost("Y").estimate);       // the last iteration's costs stand for all
}

TEST(ControlFlowLoop, GrowthBeyondTheFollowedPassesIsExtrapolated) {
  ModelBuilder b = growing_loop_model(40);
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{41, 2}));  // 16 passes followed, 24 more rows extrapolated
  EXPECT_TRUE(run->tensor("Y").estimate);
}

TEST(ControlFlowLoop, BodyWithWrongInputCountIsAnError) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{2});
  b.ints("M", {2}, {});
  Body body("body");
  body.input("i", kInt64, {}).input("c", kBool, {});  // the carried X is missing
  body.output("c");
  auto& n = b.node("Loop", {"M", "", "X"}, {"Y"});
  set_attr(n, "body", body.g);
  b.output("Y");
  try {
    analyse(b);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("body graph has 2 inputs, expected 3"), std::string::npos) << e.what();
  }
}

TEST(ControlFlowLoop, NestedIfReadsTheOuterScopeOfBothLevels) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{2, 4});
  b.weight("W", kFloat, {4, 4});
  b.ints("M", {3}, {});
  bool_initializer(b, "flag", true);
  Body then_branch("then"), else_branch("else");
  then_branch.node("MatMul", {"x_in", "W"}, {"t"});
  then_branch.output("t");
  else_branch.node("Relu", {"x_in"}, {"e"});
  else_branch.output("e");
  Body body("body");
  body.input("i", kInt64, {}).input("c", kBool, {}).input("x_in", kFloat, {2, 4});
  auto& inner = body.node("If", {"flag"}, {"x_out"});
  set_attr(inner, "then_branch", then_branch.g);
  set_attr(inner, "else_branch", else_branch.g);
  body.output("c").output("x_out");
  auto& n = b.node("Loop", {"M", "", "X"}, {"Y"});
  set_attr(n, "body", body.g);
  b.output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("Y"), (Shape{2, 4}));
  EXPECT_DOUBLE_EQ(run->cost("Y").macs, 3 * 2 * 4 * 4);
  EXPECT_FALSE(run->cost("Y").estimate);
  EXPECT_DOUBLE_EQ(run->cost("Y").params, 16);
}

// Scan: state s [2] += x_t; scan output y_t = s * x_t over X [5, 2].
ModelBuilder scan_model(const std::vector<int64_t>& input_axes, const std::vector<int64_t>& output_axes) {
  ModelBuilder b;
  b.input("S0", kFloat, Shape{2});
  b.input("X", kFloat, input_axes.empty() || input_axes[0] == 0 ? Shape{5, 2} : Shape{2, 5});
  Body body("body");
  body.input("s_in", kFloat, {2}).input("x_in", kFloat, {2});
  body.node("Add", {"s_in", "x_in"}, {"s_out"});
  body.node("Mul", {"s_out", "x_in"}, {"y"});
  body.output("s_out").output("y");
  auto& n = b.node("Scan", {"S0", "X"}, {"S", "Y"});
  set_attr(n, "body", body.g);
  set_attr(n, "num_scan_inputs", static_cast<int64_t>(1));
  if (!input_axes.empty()) set_attr(n, "scan_input_axes", input_axes);
  if (!output_axes.empty()) set_attr(n, "scan_output_axes", output_axes);
  b.output("S").output("Y");
  return b;
}

TEST(ControlFlowScan, BodyRunsOncePerSliceOfTheScanAxis) {
  auto run = analyse(scan_model({}, {}));
  EXPECT_EQ(run->shape("S"), (Shape{2}));
  EXPECT_EQ(run->shape("Y"), (Shape{5, 2}));
  const NodeCost& c = run->cost("S");
  EXPECT_FALSE(c.estimate);
  EXPECT_DOUBLE_EQ(c.flops, 5 * (2 + 2));
  EXPECT_DOUBLE_EQ(c.macs, 0);
}

TEST(ControlFlowScan, InputAndOutputAxesMoveTheSequenceDim) {
  auto run = analyse(scan_model({1}, {1}));
  EXPECT_EQ(run->shape("Y"), (Shape{2, 5}));
  EXPECT_DOUBLE_EQ(run->cost("S").flops, 5 * 4);
}

TEST(ControlFlowScan, Opset8HasABatchDimAndRunsPerBatchAndStep) {
  ModelBuilder b(8);
  b.input("S0", kFloat, Shape{3, 2});
  b.input("X", kFloat, Shape{3, 5, 2});
  Body body("body");
  body.input("s_in", kFloat, {2}).input("x_in", kFloat, {2});
  body.node("Add", {"s_in", "x_in"}, {"s_out"});
  body.node("Mul", {"s_out", "x_in"}, {"y"});
  body.output("s_out").output("y");
  auto& n = b.node("Scan", {"", "S0", "X"}, {"S", "Y"});
  set_attr(n, "body", body.g);
  set_attr(n, "num_scan_inputs", static_cast<int64_t>(1));
  b.output("S").output("Y");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("S"), (Shape{3, 2}));
  EXPECT_EQ(run->shape("Y"), (Shape{3, 5, 2}));
  EXPECT_DOUBLE_EQ(run->cost("S").flops, 3 * 5 * 4);
}

TEST(ControlFlowScan, MissingNumScanInputsIsAnError) {
  ModelBuilder b = scan_model({}, {});
  auto* attrs = b.graph().mutable_node(0)->mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == "num_scan_inputs") attrs->DeleteSubrange(i, 1);
  EXPECT_THROW(analyse(b), Error);
}

// ---- sequences ----

TEST(ControlFlowSequence, SplitLengthAtAndConcatAreTracedExactly) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{6, 4});
  b.ints("split", {2, 4});
  b.ints("one", {1}, {});
  b.node("SplitToSequence", {"X", "split"}, {"seq"});
  b.node("SequenceLength", {"seq"}, {"len"});
  b.node("SequenceAt", {"seq", "one"}, {"second"});
  auto& concat = b.node("ConcatFromSequence", {"seq"}, {"back"});
  set_attr(concat, "axis", static_cast<int64_t>(0));
  b.output("len").output("second").output("back");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("seq"), (Shape{4, 4}));  // the element bound: [2, 4] and [4, 4]
  EXPECT_TRUE(run->tensor("seq").estimate);
  EXPECT_EQ(run->shape("len"), Shape{});
  ASSERT_TRUE(run->tensor("len").value);
  EXPECT_EQ(run->tensor("len").value->ints, (std::vector<int64_t>{2}));
  EXPECT_EQ(run->shape("second"), (Shape{4, 4}));
  EXPECT_FALSE(run->tensor("second").estimate);
  EXPECT_EQ(run->shape("back"), (Shape{6, 4}));
  EXPECT_FALSE(run->tensor("back").estimate);
  EXPECT_DOUBLE_EQ(run->cost("back").flops, 0);
}

TEST(ControlFlowSequence, EmptyInsertEraseAndStack) {
  ModelBuilder b;
  b.input("A", kFloat, Shape{2, 3});
  b.input("B", kFloat, Shape{5, 3});
  b.input("C", kFloat, Shape{2, 3});
  b.ints("first", {0}, {});
  b.node("SequenceEmpty", {}, {"empty"});
  b.node("SequenceInsert", {"empty", "A"}, {"s1"});
  b.node("SequenceInsert", {"s1", "B", "first"}, {"s2"});  // [B, A]
  b.node("SequenceInsert", {"s2", "C"}, {"s3"});           // [B, A, C]
  b.node("SequenceErase", {"s3", "first"}, {"s4"});        // [A, C]
  b.node("SequenceLength", {"s3"}, {"n3"});
  auto& cat = b.node("ConcatFromSequence", {"s3"}, {"rows"});
  set_attr(cat, "axis", static_cast<int64_t>(0));
  auto& stack = b.node("ConcatFromSequence", {"s4"}, {"stacked"});
  set_attr(stack, "axis", static_cast<int64_t>(0));
  set_attr(stack, "new_axis", static_cast<int64_t>(1));
  b.output("n3").output("rows").output("stacked");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("empty"), (Shape{0}));
  EXPECT_EQ(run->shape("s1"), (Shape{2, 3}));
  EXPECT_FALSE(run->tensor("s1").estimate);
  EXPECT_EQ(run->shape("s3"), (Shape{5, 3}));
  EXPECT_EQ(run->tensor("n3").value->ints, (std::vector<int64_t>{3}));
  EXPECT_EQ(run->shape("rows"), (Shape{9, 3}));
  EXPECT_EQ(run->shape("stacked"), (Shape{2, 2, 3}));
  EXPECT_EQ(run->shape("s4"), (Shape{2, 3}));
}

TEST(ControlFlowSequence, SplitWithoutSplitDropsTheAxisWhenKeepdimsIsZero) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{6, 4});
  auto& split = b.node("SplitToSequence", {"X"}, {"seq"});
  set_attr(split, "axis", static_cast<int64_t>(1));
  set_attr(split, "keepdims", static_cast<int64_t>(0));
  auto& stack = b.node("ConcatFromSequence", {"seq"}, {"T"});
  set_attr(stack, "axis", static_cast<int64_t>(0));
  set_attr(stack, "new_axis", static_cast<int64_t>(1));
  b.output("T");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("seq"), (Shape{6}));
  EXPECT_EQ(run->shape("T"), (Shape{4, 6}));
}

TEST(ControlFlowSequence, UntraceableLengthAssumesOneElementAndWarns) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{6, 4});
  b.input("n", kInt64, Shape{});  // a chunk size known only at run time
  b.node("SplitToSequence", {"X", "n"}, {"seq"});
  auto& cat = b.node("ConcatFromSequence", {"seq"}, {"T"});
  set_attr(cat, "axis", static_cast<int64_t>(0));
  b.output("T");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("T"), (Shape{6, 4}));
  EXPECT_TRUE(run->tensor("T").estimate);
  EXPECT_TRUE(has_warning(*run, "sequence length not known"));
}

TEST(ControlFlowSequence, SequenceMapRunsItsBodyPerElement) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{6, 4});
  b.ints("two", {2}, {});
  b.node("SplitToSequence", {"X", "two"}, {"seq"});  // 3 elements of [2, 4]
  Body body("body");
  body.input("x", kFloat, {2, 4});
  body.node("Relu", {"x"}, {"y"});
  body.output("y");
  auto& map = b.node("SequenceMap", {"seq"}, {"out"});
  set_attr(map, "body", body.g);
  b.output("out");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("out"), (Shape{2, 4}));
  EXPECT_DOUBLE_EQ(run->cost("out").flops, 3 * 8);
  EXPECT_FALSE(run->cost("out").estimate);
}

TEST(ControlFlowOptional, HasElementFoldsAndGetElementPassesThrough) {
  ModelBuilder b;
  b.input("X", kFloat, Shape{3, 2});
  b.node("Optional", {"X"}, {"opt"});
  b.node("OptionalHasElement", {"opt"}, {"has"});
  b.node("OptionalGetElement", {"opt"}, {"got"});
  auto& none = b.node("Optional", {}, {"none"});
  auto* type = none.add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(kFloat);
  b.node("OptionalHasElement", {"none"}, {"has_none"});
  b.output("has").output("got").output("has_none");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("got"), (Shape{3, 2}));
  EXPECT_EQ(run->shape("has"), Shape{});
  EXPECT_EQ(run->tensor("has").dtype, kBool);
  EXPECT_EQ(run->tensor("has").value->ints, (std::vector<int64_t>{1}));
  EXPECT_EQ(run->tensor("has_none").value->ints, (std::vector<int64_t>{0}));
  EXPECT_EQ(run->tensor("none").dtype, kFloat);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 0u);
}

}  // namespace
}  // namespace modelcost::testing
