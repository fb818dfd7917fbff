// Hostile graphs aimed at the newer features: attention and quantized contrib ops whose head,
// group and block counts are 0 or near 2^62; local functions nested deep, with long names, or
// copying large bodies; tree ensembles with many roots over shared nodes; shape inputs of 10^10
// elements with no value; splits into 2^33 pieces; GatherND and StringSplit overflow. Each family
// is parameterised by depth, width or magnitude. Header-only.
#pragma once
#include <vector>

#include "cli/hostile_builders.h"

namespace modelcost::testing::hostile {

// Magnitudes a count attribute is tried at: zero, past int32, just past the dim limit, near 2^62.
inline const std::vector<int64_t>& hostile_counts() {
  static const std::vector<int64_t> counts = {0, int64_t{1} << 31, (int64_t{1} << 50) + 1, int64_t{1} << 62, INT64_MAX};
  return counts;
}

inline std::string magnitude_name(int64_t v) {
  if (v == INT64_MAX) return "max";
  if (v == 0) return "0";
  return "2p" + std::to_string(63 - __builtin_clzll(static_cast<unsigned long long>(v)));
}

// ---- attention ----
// ai.onnx Attention of 4-D Q, K, V whose K has `kv_heads` heads.
inline ModelBuilder onnx_attention_4d(int64_t kv_heads) {
  ModelBuilder m(23);
  m.input("q", kFloat, Shape{1, 4, 8, 16}).input("k", kFloat, Shape{1, kv_heads, 8, 16}).input("v", kFloat, Shape{1, kv_heads, 8, 16});
  m.node("Attention", {"q", "k", "v"}, {"out"});
  return m.output("out");
}

// ai.onnx Attention of 3-D inputs with q_num_heads / kv_num_heads attributes.
inline ModelBuilder onnx_attention_3d(int64_t q_heads, int64_t kv_heads) {
  ModelBuilder m(23);
  m.input("q", kFloat, Shape{1, 8, 64}).input("k", kFloat, Shape{1, 8, 32}).input("v", kFloat, Shape{1, 8, 32});
  auto& n = m.node("Attention", {"q", "k", "v"}, {"out"});
  set_attr(n, "q_num_heads", q_heads);
  set_attr(n, "kv_num_heads", kv_heads);
  return m.output("out");
}

// GroupQueryAttention over a [1, 8, hidden] query and [1, 8, kv_width] key and value.
inline ModelBuilder group_query_attention(int64_t heads, int64_t kv_heads, int64_t hidden, int64_t kv_width, bool rotary) {
  ModelBuilder m;
  m.opset("com.microsoft", 1);
  m.input("q", kFloat, Shape{1, 8, hidden}).input("k", kFloat, Shape{1, 8, kv_width}).input("v", kFloat, Shape{1, 8, kv_width});
  m.input("past_k", kFloat, Shape{1, 2, 4, 16}).input("past_v", kFloat, Shape{1, 2, 4, 16});
  m.input("seqlens", onnx::TensorProto::INT32, Shape{1}).input("total", onnx::TensorProto::INT32, Shape{});
  m.input("cos", kFloat, Shape{64, 8}).input("sin", kFloat, Shape{64, 8});
  auto& n = m.node("GroupQueryAttention", {"q", "k", "v", "past_k", "past_v", "seqlens", "total", "cos", "sin"},
                   {"out", "present_k", "present_v"}, "com.microsoft");
  set_attr(n, "num_heads", heads);
  set_attr(n, "kv_num_heads", kv_heads);
  set_attr(n, "do_rotary", int64_t{rotary ? 1 : 0});
  return m.output("out");
}

inline ModelBuilder matmul_nbits(int64_t block_size, int64_t bits) {
  ModelBuilder m;
  m.opset("com.microsoft", 1);
  m.input("a", kFloat, Shape{1, 64}).input("b", onnx::TensorProto::UINT8, Shape{32, 1, 32}).input("scales", kFloat, Shape{32});
  auto& n = m.node("MatMulNBits", {"a", "b", "scales"}, {"out"}, "com.microsoft");
  set_attr(n, "K", int64_t{64});
  set_attr(n, "N", int64_t{32});
  set_attr(n, "bits", bits);
  set_attr(n, "block_size", block_size);
  return m.output("out");
}

inline ModelBuilder conv_with_group(int64_t group) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{1, 4, 8, 8}).weight("w", kFloat, Shape{4, int64_t{1} << 30, 1, 1});
  set_attr(m.node("Conv", {"x", "w"}, {"out"}), "group", group);
  return m.output("out");
}

inline void attention_cases(std::vector<Case>& out) {
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  add("onnx_attention_zero_kv_heads", onnx_attention_4d(0));
  add("gqa_head_size_0_rotary", group_query_attention(4, 2, 0, 0, true));
  for (int64_t count : hostile_counts()) {
    const std::string at = magnitude_name(count);
    add("onnx_attention_3d_q_heads_" + at, onnx_attention_3d(count, 2));
    add("onnx_attention_3d_kv_heads_" + at, onnx_attention_3d(4, count));
    add("gqa_kv_heads_" + at, group_query_attention(4, count, 64, 32, true));
    add("gqa_heads_" + at, group_query_attention(count, 2, 64, 32, false));
    add("matmul_nbits_block_" + at, matmul_nbits(count, 8));
    add("conv_group_" + at, conv_with_group(count));
  }
  add("matmul_nbits_block_2p62_bits_2", matmul_nbits(int64_t{1} << 62, 2));
}

// ---- local functions ----
// F<depth> calls F<depth-1> once ... F0 is a Relu; every call node is named with `name_bytes` bytes.
inline ModelBuilder nested_functions(int depth, size_t name_bytes) {
  ModelBuilder m = calling_function("F" + std::to_string(depth));
  add_function(m.proto(), "F0", {});
  for (int i = 1; i <= depth; ++i) {
    add_function(m.proto(), "F" + std::to_string(i), {"F" + std::to_string(i - 1)});
    m.proto().mutable_functions(i)->mutable_node(0)->set_name(std::string(name_bytes, 'n') + std::to_string(i));
  }
  m.graph().mutable_node(0)->set_name(std::string(name_bytes, 'c'));
  return m;
}

// Body of `body_nodes` Relus called once from a node whose name has `name_bytes` bytes.
inline ModelBuilder long_call_name(size_t name_bytes, int body_nodes) {
  ModelBuilder m = calling_function("Body");
  add_function(m.proto(), "Body", std::vector<std::string>(static_cast<size_t>(body_nodes), "Leaf"));
  add_function(m.proto(), "Leaf", {});
  m.graph().mutable_node(0)->set_name(std::string(name_bytes, 'x'));
  return m;
}

// F<levels> calls F<levels-1> twice ... F0 holds a Constant of `elements` floats: each copy of the
// body copies the tensor.
inline ModelBuilder doubling_constant_copies(int levels, int elements) {
  ModelBuilder m = calling_function("F" + std::to_string(levels));
  add_function(m.proto(), "F0", {});
  onnx::NodeProto& relu = *m.proto().mutable_functions(0)->mutable_node(0);
  relu.set_op_type("Add");
  relu.add_input("k");
  auto* constant = m.proto().mutable_functions(0)->add_node();
  constant->set_op_type("Constant");
  constant->add_output("k");
  onnx::TensorProto value;
  value.set_data_type(onnx::TensorProto::FLOAT);
  value.add_dims(elements);
  value.mutable_raw_data()->assign(static_cast<size_t>(elements) * 4, '\0');
  set_attr(*constant, "value", value);
  m.proto().mutable_functions(0)->mutable_node()->SwapElements(0, 1);  // the Constant first
  for (int i = 1; i <= levels; ++i) add_function(m.proto(), "F" + std::to_string(i), {"F" + std::to_string(i - 1), "F" + std::to_string(i - 1)});
  return m;
}

inline void inliner_cases(std::vector<Case>& out) {
  for (int depth : {100, 129, 2000, 20000})
    out.push_back({"functions_nested_" + std::to_string(depth), nested_functions(depth, 8).bytes()});
  out.push_back({"functions_nested_120_long_names", nested_functions(120, 4000).bytes()});
  out.push_back({"function_call_name_100k_over_6000_nodes", long_call_name(100000, 6000).bytes()});
  out.push_back({"function_constant_copied_2p12_times", doubling_constant_copies(12, 65536).bytes()});
}

// ---- ai.onnx.ml tree ensembles ----
// TreeEnsemble (ml opset 5) whose `roots` roots all lie on one chain of nodes: node i branches to
// node i + 1 and a leaf, so every root's path runs to the end of the chain.
inline ModelBuilder tree_roots_on_one_chain(int64_t roots) {
  ModelBuilder m;
  m.opset("ai.onnx.ml", 5);
  m.input("x", kFloat, Shape{4, 3});
  std::vector<int64_t> ids, true_ids, true_leafs, false_ids, false_leafs, features, modes, leaf_targets;
  for (int64_t i = 0; i < roots; ++i) {
    ids.push_back(i);
    const bool last = i + 1 == roots;
    true_ids.push_back(last ? 0 : i + 1);
    true_leafs.push_back(last ? 1 : 0);
    false_ids.push_back(0);
    false_leafs.push_back(1);
    features.push_back(0);
    modes.push_back(0);
  }
  auto& n = m.node("TreeEnsemble", {"x"}, {"out"}, "ai.onnx.ml");
  set_attr(n, "tree_roots", ids);
  set_attr(n, "nodes_truenodeids", true_ids);
  set_attr(n, "nodes_trueleafs", true_leafs);
  set_attr(n, "nodes_falsenodeids", false_ids);
  set_attr(n, "nodes_falseleafs", false_leafs);
  set_attr(n, "nodes_featureids", features);
  set_attr(n, "leaf_targetids", std::vector<int64_t>{0});
  set_attr(n, "n_targets", int64_t{1});
  return m.output("out");
}

inline void tree_cases(std::vector<Case>& out) {
  for (int64_t roots : {10000, 40000}) out.push_back({"tree_ensemble_" + std::to_string(roots) + "_roots_one_chain", tree_roots_on_one_chain(roots).bytes()});
}

// ---- shapes from unvalued shape inputs, splits, indexing ----
// `op` (Expand, ConstantOfShape) whose shape input is an int64 graph input of `length` elements.
inline ModelBuilder unvalued_shape_input(const std::string& op, int64_t length) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{1}).input("shape", kInt64, Shape{length});
  if (op == "Expand") m.node(op, {"x", "shape"}, {"out"});
  else m.node(op, {"shape"}, {"out"});
  return m.output("out");
}

// SplitToSequence of a [axis_length] input into chunks of `chunk` (none: one element per index),
// then the sequence's length and its concatenation.
inline ModelBuilder split_to_sequence(int64_t axis_length, int64_t chunk) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{axis_length});
  std::vector<std::string> inputs = {"x"};
  if (chunk > 0) {
    m.ints("split", {chunk}, Shape{});
    inputs.push_back("split");
  }
  m.node("SplitToSequence", inputs, {"seq"});
  m.node("SequenceLength", {"seq"}, {"length"});
  set_attr(m.node("ConcatFromSequence", {"seq"}, {"out"}), "axis", int64_t{0});
  return m.output("out").output("length");
}

inline ModelBuilder gather_nd(int64_t batch_dims) {
  ModelBuilder m;
  m.input("data", kFloat, Shape{2, 3, 4}).input("indices", kInt64, Shape{2, 1});
  set_attr(m.node("GatherND", {"data", "indices"}, {"out"}), "batch_dims", batch_dims);
  return m.output("out");
}

inline ModelBuilder string_split(int64_t maxsplit) {
  ModelBuilder m(20);
  m.input("s", onnx::TensorProto::STRING, Shape{3});
  set_attr(m.node("StringSplit", {"s"}, {"parts", "counts"}), "maxsplit", maxsplit);
  return m.output("parts");
}

inline void shape_input_cases(std::vector<Case>& out) {
  for (int64_t length : {int64_t{65}, int64_t{10000000000}, int64_t{1} << 50}) {
    out.push_back({"expand_unvalued_shape_" + std::to_string(length), unvalued_shape_input("Expand", length).bytes()});
    out.push_back({"constant_of_shape_unvalued_" + std::to_string(length), unvalued_shape_input("ConstantOfShape", length).bytes()});
  }
  for (int64_t length : {int64_t{1} << 17, int64_t{1} << 33, int64_t{1} << 50}) {
    out.push_back({"split_to_sequence_by_1_" + magnitude_name(length), split_to_sequence(length, 1).bytes()});
    out.push_back({"split_to_sequence_per_index_" + magnitude_name(length), split_to_sequence(length, 0).bytes()});
  }
  for (int64_t b : {int64_t{-1}, int64_t{2}, int64_t{1} << 62, INT64_MAX})
    out.push_back({"gather_nd_batch_dims_" + (b < 0 ? std::string("minus_1") : magnitude_name(b)), gather_nd(b).bytes()});
  for (int64_t s : {(int64_t{1} << 50) - 1, INT64_MAX}) out.push_back({"string_split_maxsplit_" + magnitude_name(s), string_split(s).bytes()});
}

inline std::vector<Case> feature_cases() {
  std::vector<Case> out;
  attention_cases(out);
  inliner_cases(out);
  tree_cases(out);
  shape_input_cases(out);
  return out;
}

}  // namespace modelcost::testing::hostile
