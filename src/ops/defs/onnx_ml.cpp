// Op rules: the ai.onnx.ml domain (scikit-learn and other classic-ML exports). Formulas:
// docs/ops/onnx_ml.md. Tree ensembles cost the nodes a sample visits: the longest root-to-leaf
// path of each tree (an upper bound of the comparisons), plus the leaf weights added.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "ops/defs/fused_helpers.h"

namespace modelcost {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kString = onnx::TensorProto::STRING;

size_t attr_count(const OpContext& c, const char* name) {
  const auto* a = c.attr(name);
  if (!a) return 0;
  return static_cast<size_t>(std::max({a->ints_size(), a->floats_size(), a->strings_size()}));
}

// [N, F] (a 1-D input is one sample of F features).
std::pair<int64_t, int64_t> samples_and_features(const OpContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.empty()) c.fail("input X must have rank 1 or 2, got a scalar");
  if (x.size() == 1) return {1, x[0]};
  return {x[0], static_cast<int64_t>(element_count(x) / static_cast<double>(x[0]))};
}

// Labels are int64 unless the classifier names its classes by strings.
int32_t label_dtype(const OpContext& c) { return attr_count(c, "classlabels_strings") ? kString : kInt64; }
// LinearClassifier and SVMClassifier name int labels classlabels_ints, the tree ensembles
// classlabels_int64s.
size_t class_count(const OpContext& c) {
  return std::max({attr_count(c, "classlabels_ints"), attr_count(c, "classlabels_int64s"),
                   attr_count(c, "classlabels_strings")});
}

// FLOPs per score of a post_transform (SOFTMAX as Softmax counts it; LOGISTIC as Sigmoid).
double post_transform_flops(const OpContext& c) {
  const std::string t = c.attr_string("post_transform", "NONE");
  if (t == "NONE") return 0;
  if (t == "SOFTMAX" || t == "SOFTMAX_ZERO") return kSoftmaxFlops;
  if (t == "LOGISTIC") return kSigmoidFlops;
  if (t == "PROBIT") return 3;
  c.fail("post_transform '" + t + "' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT");
}

void infer_same_shape_float(OpContext& c) { c.set_output(0, kFloat, c.in_shape(0)); }

// ---- linear models ----
void infer_linear_classifier(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const size_t coefficients = attr_count(c, "coefficients");
  if (f == 0 || coefficients % static_cast<size_t>(f) != 0)
    c.fail(std::to_string(coefficients) + " coefficients do not divide into rows of " + std::to_string(f) + " features");
  c.set_output(0, label_dtype(c), {n});
  c.set_output(1, kFloat, {n, static_cast<int64_t>(coefficients / static_cast<size_t>(f))});
}

OpCost cost_linear_classifier(const OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const double scores = element_count(c.out(1).shape);
  OpCost cost;
  cost.macs = scores * static_cast<double>(f);
  // intercept add, post transform, and an argmax compare per score.
  cost.flops = 2 * cost.macs + scores * (2 + post_transform_flops(c));
  return cost;
}

void infer_linear_regressor(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  c.set_output(0, kFloat, {n, c.attr_int("targets", 1)});
}

OpCost cost_linear_regressor(const OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  OpCost cost;
  cost.macs = output_elements(c) * static_cast<double>(f);
  cost.flops = 2 * cost.macs + output_elements(c) * (1 + post_transform_flops(c));
  return cost;
}

// ---- SVMs: a kernel per (sample, support vector), then the weighted sum ----
double support_vectors(const OpContext& c) {
  double sv = 0;
  for (int64_t v : c.attr_ints("vectors_per_class")) sv += static_cast<double>(v);
  return sv > 0 ? sv : static_cast<double>(c.attr_int("n_supports", 0));
}

void infer_svm_classifier(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  c.set_output(0, label_dtype(c), {n});
  c.set_output(1, kFloat, {n, static_cast<int64_t>(std::max<size_t>(class_count(c), 1))});
}

void infer_svm_regressor(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  c.set_output(0, kFloat, {n, 1});
}

OpCost cost_svm(const OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const double sv = support_vectors(c);
  const double coefficients = static_cast<double>(attr_count(c, "coefficients"));
  OpCost cost;
  // Linear SVMs without support vectors hold one row of coefficients per class.
  cost.macs = sv > 0 ? static_cast<double>(n) * sv * (static_cast<double>(f) + coefficients / sv)
                     : static_cast<double>(n) * coefficients;
  cost.flops = 2 * cost.macs + element_count(c.out(c.num_outputs() > 1 ? 1 : 0).shape) * (1 + post_transform_flops(c));
  return cost;
}

// ---- tree ensembles ----
struct TreeWalk {
  double visited = 0;  // sum over trees of the longest root-to-leaf path (internal nodes)
  double leaf_weights = 0;  // weights added per sample: entries per leaf, summed over trees
};

using Children = std::map<int64_t, std::pair<int64_t, int64_t>>;  // branch node -> (true, false) child

// Deepest path below each finished node, shared by every root of an ensemble so that the walk
// is linear in the nodes however many trees share them.
using PathMemo = std::unordered_map<int64_t, double>;

// Branch nodes on the deepest root-to-leaf path below `root` (ids absent from `children` are
// leaves). Iterative, memoised in `depth`; fails naming the node on a cycle.
double path_length(const OpContext& c, const Children& children, int64_t root, PathMemo& depth) {
  std::set<int64_t> open;           // nodes on the current path
  std::vector<int64_t> stack = {root};
  while (!stack.empty()) {
    const int64_t node = stack.back();
    auto it = children.find(node);
    if (it == children.end() || depth.count(node)) {
      stack.pop_back();
      continue;
    }
    const auto [t, f] = it->second;
    const bool t_done = !children.count(t) || depth.count(t), f_done = !children.count(f) || depth.count(f);
    if (t_done && f_done) {
      depth[node] = 1 + std::max(depth.count(t) ? depth[t] : 0, depth.count(f) ? depth[f] : 0);
      open.erase(node);
      stack.pop_back();
      continue;
    }
    if (!open.insert(node).second) c.fail("tree node " + std::to_string(node) + " is its own descendant");
    if (!t_done) stack.push_back(t);
    if (!f_done) stack.push_back(f);
  }
  return depth.count(root) ? depth[root] : 0;
}

// TreeEnsembleClassifier / TreeEnsembleRegressor: parallel nodes_* lists, leaves marked "LEAF".
TreeWalk walk_legacy_trees(const OpContext& c, const char* weights_attr) {
  const auto tree_ids = c.attr_ints("nodes_treeids");
  const auto node_ids = c.attr_ints("nodes_nodeids");
  const auto true_ids = c.attr_ints("nodes_truenodeids");
  const auto false_ids = c.attr_ints("nodes_falsenodeids");
  const auto* modes = c.attr("nodes_modes");
  const size_t count = tree_ids.size();
  if (node_ids.size() != count || true_ids.size() != count || false_ids.size() != count || !modes ||
      static_cast<size_t>(modes->strings_size()) != count)
    c.fail("nodes_treeids, nodes_nodeids, nodes_truenodeids, nodes_falsenodeids and nodes_modes must have one entry per node");
  std::map<int64_t, Children> trees;
  std::map<int64_t, int64_t> roots;
  for (size_t i = 0; i < count; ++i) {
    auto& tree = trees[tree_ids[i]];
    if (!roots.count(tree_ids[i])) roots[tree_ids[i]] = node_ids[i];
    if (modes->strings(static_cast<int>(i)) != "LEAF") tree[node_ids[i]] = {true_ids[i], false_ids[i]};
  }
  TreeWalk walk;
  for (const auto& [id, tree] : trees) {
    PathMemo depth;  // node ids are per tree
    walk.visited += path_length(c, tree, roots[id], depth);
  }
  const double leaves = static_cast<double>(count) - [&] {
    double internal = 0;
    for (const auto& [id, tree] : trees) internal += static_cast<double>(tree.size());
    return internal;
  }();
  // Each sample lands on one leaf per tree and adds that leaf's weights.
  if (leaves > 0) walk.leaf_weights = static_cast<double>(attr_count(c, weights_attr)) / leaves * static_cast<double>(trees.size());
  return walk;
}

void infer_tree_classifier(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const size_t classes = class_count(c);
  if (classes == 0) c.fail("classlabels_int64s or classlabels_strings is required");
  c.set_output(0, label_dtype(c), {n});
  // A binary classifier with one weight per leaf still reports two scores.
  c.set_output(1, kFloat, {n, static_cast<int64_t>(std::max<size_t>(classes, 2))});
}

void infer_tree_regressor(OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  c.set_output(0, kFloat, {n, c.attr_int("n_targets", 1)});
}

template <bool Classifier>
OpCost cost_legacy_trees(const OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const TreeWalk walk = walk_legacy_trees(c, Classifier ? "class_weights" : "target_weights");
  const double scores = element_count(c.out(Classifier ? 1 : 0).shape);
  OpCost cost;
  cost.flops = static_cast<double>(n) * (walk.visited + walk.leaf_weights) + scores * post_transform_flops(c);
  return cost;
}

// TreeEnsemble (ai.onnx.ml 5): tree_roots, nodes_truenodeids / nodes_trueleafs (1: the id is a
// leaf index), nodes_falsenodeids / nodes_falseleafs.
OpCost cost_tree_ensemble(const OpContext& c) {
  const auto [n, f] = samples_and_features(c);
  const auto roots = c.attr_ints("tree_roots");
  const auto true_ids = c.attr_ints("nodes_truenodeids");
  const auto true_leafs = c.attr_ints("nodes_trueleafs");
  const auto false_ids = c.attr_ints("nodes_falsenodeids");
  const auto false_leafs = c.attr_ints("nodes_falseleafs");
  if (true_leafs.size() != true_ids.size() || false_ids.size() != true_ids.size() || false_leafs.size() != true_ids.size())
    c.fail("nodes_truenodeids, nodes_trueleafs, nodes_falsenodeids and nodes_falseleafs must have one entry per node");
  Children children;  // leaves get ids below 0
  for (size_t i = 0; i < true_ids.size(); ++i)
    children[static_cast<int64_t>(i)] = {true_leafs[i] ? -1 : true_ids[i], false_leafs[i] ? -1 : false_ids[i]};
  double visited = 0;
  PathMemo depth;
  for (int64_t root : roots) visited += path_length(c, children, root, depth);
  const double leaf_weights = static_cast<double>(roots.size());  // one leaf reached per tree
  OpCost cost;
  cost.flops = static_cast<double>(n) * (visited + leaf_weights) + output_elements(c) * post_transform_flops(c);
  return cost;
}

// ---- elementwise and lookups ----
void infer_array_feature_extractor(OpContext& c) {
  Shape out = c.in_shape(0);
  if (out.empty()) c.fail("input X must have rank >= 1");
  out.back() = static_cast<int64_t>(element_count(c.in_shape(1)));
  c.set_output(0, c.in_dtype(0), out);
}

void infer_feature_vectorizer(OpContext& c) {
  double total = 0;
  for (int64_t d : c.attr_ints("inputdimensions")) total += static_cast<double>(d);
  const Shape& x = c.in_shape(0);
  c.set_output(0, kFloat, {x.empty() ? 1 : x[0], checked_dim(c, total, "the sum of inputdimensions")});
}

void infer_one_hot_encoder(OpContext& c) {
  Shape out = c.in_shape(0);
  out.push_back(static_cast<int64_t>(std::max(attr_count(c, "cats_int64s"), attr_count(c, "cats_strings"))));
  c.set_output(0, kFloat, out);
}

// LabelEncoder: the dtype of the values it maps to.
void infer_label_encoder(OpContext& c) {
  int32_t dtype = kInt64;
  if (attr_count(c, "values_strings") || c.has_attr("default_string")) dtype = kString;
  if (attr_count(c, "values_floats")) dtype = kFloat;
  if (attr_count(c, "values_int64s")) dtype = kInt64;
  c.set_output(0, dtype, c.in_shape(0));
}

void infer_category_mapper(OpContext& c) {
  c.set_output(0, c.in_dtype(0) == kString ? kInt64 : kString, c.in_shape(0));
}

// ZipMap: one map of class -> score per sample; represented by the [N, classes] scores it holds.
void infer_zip_map(OpContext& c) { c.set_output(0, kFloat, c.in_shape(0)); }

// Normalizer: MAX and L1 take a reduction and a divide per element, L2 a square more.
OpCost cost_normalizer(const OpContext& c) {
  OpCost cost;
  cost.flops = (c.attr_string("norm", "MAX") == "L2" ? 3 : 2) * element_count(c.in_shape(0));
  return cost;
}

}  // namespace

void register_onnx_ml_ops(OpRegistry& r) {
  constexpr std::string_view ml = "ai.onnx.ml";
  r.add(OpForm::kOther, {
      {ml, "Scaler", infer_same_shape_float, cost_per_output<2>},  // (x - offset) * scale
      {ml, "Normalizer", infer_same_shape_float, cost_normalizer},
      {ml, "Binarizer", infer_unary, cost_per_output<1>},
      {ml, "Imputer", infer_unary, cost_per_output<1>},
      {ml, "LinearClassifier", infer_linear_classifier, cost_linear_classifier},
      {ml, "LinearRegressor", infer_linear_regressor, cost_linear_regressor},
      {ml, "SVMClassifier", infer_svm_classifier, cost_svm},
      {ml, "SVMRegressor", infer_svm_regressor, cost_svm},
      {ml, "TreeEnsembleClassifier", infer_tree_classifier, cost_legacy_trees<true>},
      {ml, "TreeEnsembleRegressor", infer_tree_regressor, cost_legacy_trees<false>},
      {ml, "TreeEnsemble", infer_tree_regressor, cost_tree_ensemble, {}, inputs(1, 1)},
      {ml, "ArrayFeatureExtractor", infer_array_feature_extractor, cost_selective_read},
      {ml, "FeatureVectorizer", infer_feature_vectorizer, cost_data_movement},
      {ml, "OneHotEncoder", infer_one_hot_encoder, cost_data_movement},
      {ml, "LabelEncoder", infer_label_encoder, cost_data_movement},
      {ml, "CategoryMapper", infer_category_mapper, cost_data_movement},
      {ml, "ZipMap", infer_zip_map, cost_data_movement},
      {ml, "CastMap", infer_with_onnx_schema, cost_data_movement},
      {ml, "DictVectorizer", infer_with_onnx_schema, cost_data_movement},
  });
}

}  // namespace modelcost
