// ai.onnx.ml rules: a scikit-learn style pipeline (Scaler -> LinearClassifier -> ZipMap) and
// tree ensembles costed by the nodes a sample visits.
#include <gtest/gtest.h>

#include "ops/defs/nn_test_support.h"

namespace modelcost::testing {
namespace {

void set_strings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& values) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& v : values) a->add_strings(v);
}

ModelBuilder ml_model() {
  ModelBuilder b;
  b.opset("ai.onnx.ml", 3);
  b.input("x", kFloat, Shape{4, 3});
  return b;
}

}  // namespace

TEST(OnnxMl, ScalerLinearClassifierZipMap) {
  ModelBuilder b = ml_model();
  auto& s = b.node("Scaler", {"x"}, {"scaled"}, "ai.onnx.ml");
  set_attr(s, "scale", std::vector<float>{1, 2, 3});
  set_attr(s, "offset", std::vector<float>{0, 0, 0});
  auto& lc = b.node("LinearClassifier", {"scaled"}, {"label", "scores"}, "ai.onnx.ml");
  set_attr(lc, "coefficients", std::vector<float>(9, 0.5f));
  set_attr(lc, "intercepts", std::vector<float>(3, 0.f));
  set_attr(lc, "classlabels_ints", std::vector<int64_t>{0, 1, 2});
  set_attr(lc, "post_transform", std::string("SOFTMAX"));
  b.node("ZipMap", {"scores"}, {"probabilities"}, "ai.onnx.ml");
  b.output("label").output("probabilities");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("label"), (Shape{4}));
  EXPECT_EQ(run->tensor("label").dtype, kInt64);
  EXPECT_EQ(run->shape("scores"), (Shape{4, 3}));
  EXPECT_DOUBLE_EQ(run->cost("scaled").flops, 24);
  EXPECT_DOUBLE_EQ(run->cost("label").macs, 36);
  EXPECT_DOUBLE_EQ(run->cost("label").flops, 72 + 12 * (2 + 5));
  EXPECT_EQ(run->analysis.totals.unshaped_nodes, 0u);
  EXPECT_EQ(run->analysis.totals.uncosted_nodes, 0u);
}

TEST(OnnxMl, TreeEnsembleClassifierCostsTheLongestPathOfEachTree) {
  ModelBuilder b = ml_model();
  auto& t = b.node("TreeEnsembleClassifier", {"x"}, {"label", "scores"}, "ai.onnx.ml");
  // Tree 0: 0 -> (1 leaf, 2 -> (3 leaf, 4 leaf)), depth 2. Tree 1: 0 -> (1 leaf, 2 leaf), depth 1.
  set_attr(t, "nodes_treeids", std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1});
  set_attr(t, "nodes_nodeids", std::vector<int64_t>{0, 1, 2, 3, 4, 0, 1, 2});
  set_attr(t, "nodes_featureids", std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 0});
  set_attr(t, "nodes_values", std::vector<float>(8, 0.5f));
  set_attr(t, "nodes_truenodeids", std::vector<int64_t>{1, 0, 3, 0, 0, 1, 0, 0});
  set_attr(t, "nodes_falsenodeids", std::vector<int64_t>{2, 0, 4, 0, 0, 2, 0, 0});
  set_strings(t, "nodes_modes", {"BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"});
  set_attr(t, "class_treeids", std::vector<int64_t>{0, 0, 0, 1, 1});
  set_attr(t, "class_nodeids", std::vector<int64_t>{1, 3, 4, 1, 2});
  set_attr(t, "class_ids", std::vector<int64_t>{0, 0, 0, 0, 0});
  set_attr(t, "class_weights", std::vector<float>(5, 1.f));
  set_attr(t, "classlabels_int64s", std::vector<int64_t>{0, 1});
  b.output("label").output("scores");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("scores"), (Shape{4, 2}));
  // Per sample: 2 + 1 comparisons, one leaf weight per tree.
  EXPECT_DOUBLE_EQ(run->cost("label").flops, 4 * (3 + 2));
}

TEST(OnnxMl, TreeEnsembleRegressorAndLinearRegressor) {
  ModelBuilder b = ml_model();
  auto& t = b.node("TreeEnsembleRegressor", {"x"}, {"t"}, "ai.onnx.ml");
  set_attr(t, "nodes_treeids", std::vector<int64_t>{0, 0, 0});
  set_attr(t, "nodes_nodeids", std::vector<int64_t>{0, 1, 2});
  set_attr(t, "nodes_truenodeids", std::vector<int64_t>{1, 0, 0});
  set_attr(t, "nodes_falsenodeids", std::vector<int64_t>{2, 0, 0});
  set_strings(t, "nodes_modes", {"BRANCH_LT", "LEAF", "LEAF"});
  set_attr(t, "target_weights", std::vector<float>{1, 2});
  set_attr(t, "n_targets", int64_t{1});
  auto& l = b.node("LinearRegressor", {"x"}, {"l"}, "ai.onnx.ml");
  set_attr(l, "coefficients", std::vector<float>{1, 2, 3, 4, 5, 6});
  set_attr(l, "targets", int64_t{2});
  b.output("t").output("l");
  auto run = analyse(b);
  EXPECT_EQ(run->shape("t"), (Shape{4, 1}));
  EXPECT_DOUBLE_EQ(run->cost("t").flops, 4 * (1 + 1));
  EXPECT_EQ(run->shape("l"), (Shape{4, 2}));
  EXPECT_DOUBLE_EQ(run->cost("l").macs, 24);
}

TEST(OnnxMl, TreeEnsembleRejectsMismatchedNodeLists) {
  ModelBuilder b = ml_model();
  auto& t = b.node("TreeEnsembleRegressor", {"x"}, {"bad_trees"}, "ai.onnx.ml");
  set_attr(t, "nodes_treeids", std::vector<int64_t>{0, 0});
  set_attr(t, "nodes_nodeids", std::vector<int64_t>{0});
  b.output("bad_trees");
  expect_node_error(b, "bad_trees", "one entry per node");
}

TEST(OnnxMl, TreeWithACycleIsRejected) {
  ModelBuilder b = ml_model();
  auto& t = b.node("TreeEnsembleRegressor", {"x"}, {"cyclic_tree"}, "ai.onnx.ml");
  set_attr(t, "nodes_treeids", std::vector<int64_t>{0, 0});
  set_attr(t, "nodes_nodeids", std::vector<int64_t>{0, 1});
  set_attr(t, "nodes_truenodeids", std::vector<int64_t>{1, 0});
  set_attr(t, "nodes_falsenodeids", std::vector<int64_t>{1, 0});
  set_strings(t, "nodes_modes", {"BRANCH_LEQ", "BRANCH_LEQ"});
  b.output("cyclic_tree");
  expect_node_error(b, "cyclic_tree", "its own descendant");
}

// TreeEnsemble (ml opset 5) with 20,000 roots on one chain of nodes (node i branches to node i + 1
// and a leaf): root i's longest path has 20,000 - i branches. One memo serves every root, so this
// is linear in the nodes (a memo per root made it quadratic: minutes).
TEST(OnnxMl, TreeEnsembleRootsSharingNodesAreCostedInLinearTime) {
  constexpr int64_t kRoots = 20000;
  ModelBuilder b;
  b.opset("ai.onnx.ml", 5);
  b.input("x", kFloat, Shape{4, 3});
  std::vector<int64_t> roots, true_ids, true_leafs, false_ids, false_leafs;
  for (int64_t i = 0; i < kRoots; ++i) {
    roots.push_back(i);
    true_ids.push_back(i + 1 < kRoots ? i + 1 : 0);
    true_leafs.push_back(i + 1 < kRoots ? 0 : 1);
    false_ids.push_back(0);
    false_leafs.push_back(1);
  }
  auto& t = b.node("TreeEnsemble", {"x"}, {"y"}, "ai.onnx.ml");
  set_attr(t, "tree_roots", roots);
  set_attr(t, "nodes_truenodeids", true_ids);
  set_attr(t, "nodes_trueleafs", true_leafs);
  set_attr(t, "nodes_falsenodeids", false_ids);
  set_attr(t, "nodes_falseleafs", false_leafs);
  set_attr(t, "n_targets", int64_t{1});
  b.output("y");
  auto run = analyse(b);
  // Per sample: the sum of every root's path (kRoots + ... + 1) and one leaf per tree.
  const double paths = static_cast<double>(kRoots) * (kRoots + 1) / 2;
  EXPECT_DOUBLE_EQ(run->cost("y").flops, 4 * (paths + kRoots));
}

}  // namespace modelcost::testing
