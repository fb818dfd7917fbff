// analyze() is a pure function of (model, options): it shapes a copy of the graph, so one loaded
// model gives any number of independent analyses.
#include <gtest/gtest.h>

#include "load/model_loader.h"
#include "modelcost/analysis.h"
#include "modelcost/errors.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

// X [batch, 8] -> If(cond) { X x W } -> Y [batch, 16]: a body that reads an outer-scope tensor
// whose shape follows the batch.
Model batch_if_model() {
  ModelBuilder b;
  b.input("X", kFloat, std::vector<std::string>{"batch", "8"});
  b.input("cond", kBool, Shape{});
  b.weight("W", kFloat, {8, 16});
  onnx::GraphProto body;
  body.set_name("then");
  auto* mm = body.add_node();
  mm->set_op_type("MatMul");
  mm->set_name("T");
  mm->add_input("X");
  mm->add_input("W");
  mm->add_output("T");
  body.add_output()->set_name("T");
  onnx::GraphProto other = body;
  other.set_name("else");
  auto& n = b.node("If", {"cond"}, {"Y"});
  set_attr(n, "then_branch", body);
  set_attr(n, "else_branch", other);
  b.output("Y");
  return load_model_from_bytes(b.bytes(), "batch-if");
}

const TensorInfo& tensor(const Graph& g, const std::string& name) { return g.tensors.at(g.find(name)); }

TEST(Analyze, LeavesTheModelAsLoaded) {
  const Model model = batch_if_model();
  AnalysisOptions options;
  options.dims["batch"] = 4;
  const Analysis a = analyze(model, options);
  EXPECT_EQ(tensor(*a.graph, "Y").shape, (Shape{4, 16}));
  EXPECT_FALSE(tensor(model.graph, "Y").has_shape);
  EXPECT_FALSE(tensor(model.graph, "X").has_shape);
  EXPECT_EQ(a.model, &model);
}

TEST(Analyze, AnalysesOfOneModelAtTwoBatchesAreIndependentBodiesIncluded) {
  const Model model = batch_if_model();
  AnalysisOptions at4, at32;
  at4.dims["batch"] = 4;
  at32.dims["batch"] = 32;
  const Analysis first = analyze(model, at4);
  const Analysis second = analyze(model, at32);
  EXPECT_EQ(tensor(*first.graph, "Y").shape, (Shape{4, 16}));
  EXPECT_EQ(tensor(*second.graph, "Y").shape, (Shape{32, 16}));
  const Graph* body = first.graph->find_subgraph(first.graph->nodes.at(0), "then_branch");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(tensor(*body, "T").shape, (Shape{4, 16}));
  EXPECT_DOUBLE_EQ(first.totals.macs, 4 * 8 * 16);
  EXPECT_DOUBLE_EQ(second.totals.macs, 32 * 8 * 16);
  // The nodes point into the analysis' own graph, not the model's.
  EXPECT_EQ(first.nodes.at(0).graph, first.graph.get());
  EXPECT_NE(first.nodes.at(0).node, &model.graph.nodes.at(0));
}

TEST(Analyze, AnUnknownInputNameIsAUsageErrorAndTheModelStaysUsable) {
  const Model model = batch_if_model();
  AnalysisOptions wrong;
  wrong.inputs["nope"] = Shape{1, 8};
  EXPECT_THROW(analyze(model, wrong), Error);
  EXPECT_EQ(analyze(model).totals.nodes, 1u);
}

}  // namespace
}  // namespace modelcost::testing
