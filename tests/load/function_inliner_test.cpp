// Local functions are expanded per call: shaped and costed like the graph's own nodes, each
// inlined node keeping the scope of its call.
#include "load/function_inliner.h"

#include <gtest/gtest.h>

#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

onnx::FunctionProto& add_function(ModelBuilder& b, const std::string& name, const std::vector<std::string>& inputs,
                                  const std::vector<std::string>& outputs) {
  onnx::FunctionProto& f = *b.proto().add_functions();
  f.set_name(name);
  f.set_domain("local");
  for (const auto& i : inputs) f.add_input(i);
  for (const auto& o : outputs) f.add_output(o);
  auto* op = f.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  return f;
}

onnx::NodeProto& add_node(onnx::FunctionProto& f, const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& domain = "") {
  onnx::NodeProto& n = *f.add_node();
  n.set_op_type(op);
  n.set_domain(domain);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

// Linear(X, W) = Relu(X @ W), called twice on [2, 8] x [8, 8].
ModelBuilder two_linear_calls() {
  ModelBuilder b;
  b.opset("local", 1);
  b.input("x", kFloat, Shape{2, 8}).weight("w1", kFloat, {8, 8}).weight("w2", kFloat, {8, 8});
  onnx::FunctionProto& f = add_function(b, "Linear", {"X", "W"}, {"Y"});
  add_node(f, "MatMul", {"X", "W"}, {"t"});
  add_node(f, "Relu", {"t"}, {"Y"});
  b.node("Linear", {"x", "w1"}, {"h"}, "local").set_name("layer0");
  b.node("Linear", {"h", "w2"}, {"y"}, "local").set_name("layer1");
  b.output("y");
  return b;
}

}  // namespace

TEST(FunctionInliner, EachCallIsCostedWithItsScope) {
  auto run = analyse(two_linear_calls());
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 2 * 2 * 8 * 8);
  EXPECT_DOUBLE_EQ(run->analysis.totals.params, 128);
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 0u);
  ASSERT_EQ(run->analysis.nodes.size(), 4u);
  EXPECT_EQ(run->node("layer1/MatMul_0").node->scope, "layer1");
  EXPECT_EQ(run->node("layer0/Relu_1").node->function, "local.Linear");
  EXPECT_EQ(run->shape("layer0/t"), (Shape{2, 8}));
}

TEST(FunctionInliner, AttributeReferencesTakeTheCallsValueOrTheOpDefault) {
  ModelBuilder b;
  b.opset("local", 1);
  b.input("x", kFloat, Shape{2, 3, 4});
  onnx::FunctionProto& f = add_function(b, "Permute", {"X"}, {"Y"});
  f.add_attribute("perm");
  auto& t = add_node(f, "Transpose", {"X"}, {"Y"});
  auto* ref = t.add_attribute();
  ref->set_name("perm");
  ref->set_ref_attr_name("perm");
  ref->set_type(onnx::AttributeProto::INTS);
  set_attr(b.node("Permute", {"x"}, {"given"}, "local"), "perm", std::vector<int64_t>{2, 0, 1});
  b.node("Permute", {"x"}, {"defaulted"}, "local");
  b.output("given").output("defaulted");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("given"), (Shape{4, 2, 3}));
  EXPECT_EQ(run->shape("defaulted"), (Shape{4, 3, 2}));  // Transpose's default reverses the dims
}

TEST(FunctionInliner, FunctionsCallingFunctionsNestTheirScopes) {
  ModelBuilder b = two_linear_calls();
  onnx::FunctionProto& block = add_function(b, "Block", {"X", "A", "B"}, {"Y"});
  add_node(block, "Linear", {"X", "A"}, {"h"}, "local").set_name("first");
  add_node(block, "Linear", {"h", "B"}, {"Y"}, "local").set_name("second");
  b.graph().clear_node();
  b.node("Block", {"x", "w1", "w2"}, {"y"}, "local").set_name("block0");
  auto run = analyse(b);
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 2 * 2 * 8 * 8);
  EXPECT_EQ(run->node("block0/second/MatMul_0").node->scope, "block0/second");
  EXPECT_EQ(run->node("block0/second/MatMul_0").node->function, "local.Linear");
}

TEST(FunctionInliner, RecursionIsRefusedNamingTheChain) {
  ModelBuilder b;
  b.opset("local", 1);
  b.input("x", kFloat, Shape{2});
  onnx::FunctionProto& f = add_function(b, "Ping", {"X"}, {"Y"});
  add_node(f, "Pong", {"X"}, {"Y"}, "local");
  onnx::FunctionProto& g = add_function(b, "Pong", {"X"}, {"Y"});
  add_node(g, "Ping", {"X"}, {"Y"}, "local");
  b.node("Ping", {"x"}, {"y"}, "local");
  b.output("y");
  try {
    analyse(b);
    ADD_FAILURE() << "recursion accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("local.Ping -> local.Pong -> local.Ping"), std::string::npos) << e.what();
  }
}

// F30 calls F29 twice, ..., F1 calls F0 (one Relu) twice: 2^30 nodes, refused before any is made.
TEST(FunctionInliner, ExpansionPastTheModelSizeLimitIsRefusedUpFront) {
  ModelBuilder b;
  b.opset("local", 1);
  b.input("x", kFloat, Shape{2});
  add_node(add_function(b, "F0", {"X"}, {"Y"}), "Relu", {"X"}, {"Y"});
  for (int i = 1; i <= 30; ++i) {
    onnx::FunctionProto& f = add_function(b, "F" + std::to_string(i), {"X"}, {"Y"});
    const std::string callee = "F" + std::to_string(i - 1);
    add_node(f, callee, {"X"}, {"T"}, "local");
    add_node(f, callee, {"T"}, {"Y"}, "local");
  }
  b.node("F30", {"x"}, {"y"}, "local");
  b.output("y");
  try {
    analyse(b);
    ADD_FAILURE() << "2^30 nodes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("expand to over 300000 nodes"), std::string::npos) << e.what();
  }
}

TEST(FunctionInliner, CallsInsideSubgraphBodiesAreExpanded) {
  ModelBuilder b = two_linear_calls();
  b.graph().clear_node();
  b.input("cond", kBool, Shape{});
  onnx::GraphProto then_branch;
  then_branch.set_name("then");
  auto* call = then_branch.add_node();
  call->set_op_type("Linear");
  call->set_domain("local");
  call->add_input("x");
  call->add_input("w1");
  call->add_output("t_out");
  then_branch.add_output()->set_name("t_out");
  auto& node = b.node("If", {"cond"}, {"y"});
  set_attr(node, "then_branch", then_branch);
  then_branch.mutable_node(0)->set_output(0, "e_out");
  then_branch.mutable_output(0)->set_name("e_out");
  set_attr(node, "else_branch", then_branch);
  auto run = analyse(b);
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 2 * 8 * 8);  // the heavier branch
  EXPECT_EQ(run->shape("y"), (Shape{2, 8}));
}

// Linear called from a chain of Wrap functions `depth` deep, every call named with `name_bytes` bytes.
ModelBuilder wrapped_linear(int depth, size_t name_bytes) {
  ModelBuilder b = two_linear_calls();
  std::string callee = "Linear";
  for (int i = 0; i < depth; ++i) {
    const std::string name = "Wrap" + std::to_string(i);
    onnx::FunctionProto& f = add_function(b, name, {"X", "W"}, {"Y"});
    add_node(f, callee, {"X", "W"}, {"Y"}, "local").set_name(std::string(name_bytes, 'n'));
    callee = name;
  }
  b.graph().clear_node();
  b.node(callee, {"x", "w1"}, {"y"}, "local").set_name(std::string(name_bytes, 'c'));
  return b;
}

TEST(FunctionInliner, InlinedNamesStayBoundedHoweverDeepAndLong) {
  auto run = analyse(wrapped_linear(100, 10000));
  ASSERT_EQ(run->analysis.nodes.size(), 2u);
  for (const auto& n : run->analysis.nodes) {
    EXPECT_LE(n.node->name.size(), 400u) << n.node->name.substr(0, 100);
    EXPECT_LE(n.node->scope.size(), 256u);
  }
  EXPECT_DOUBLE_EQ(run->analysis.totals.macs, 2 * 8 * 8);
}

TEST(FunctionInliner, NestingPastTheLimitIsRefused) {
  try {
    analyse(wrapped_linear(200, 1));
    ADD_FAILURE() << "200 levels accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitInvalidModel);
    EXPECT_NE(std::string(e.what()).find("over 128 levels deep"), std::string::npos) << e.what();
  }
}

}  // namespace modelcost::testing
