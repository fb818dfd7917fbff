// A generator of well-formed but hostile ONNX graphs: astronomic, negative and zero dims, integer
// edge values, generators asked for huge outputs, deep and long control flow, sequence ops,
// recursive local functions, external data outside the model's folder, wrong attribute types,
// duplicate and empty names. Each case is a model file's bytes; the tests run the CLI over each.
// Header-only: tests/ builds *_test.cpp files only.
#pragma once
#include <onnx/onnx_pb.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "test_support.h"

namespace modelcost::testing::hostile {

struct Case {
  std::string name;
  std::string bytes;
};
// gtest prints a test's parameter: the name, not the bytes.
inline void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

constexpr int64_t kHuge = int64_t{1} << 62;

inline onnx::TensorProto int_tensor(const std::vector<int64_t>& values, const Shape& dims) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// out = op(a, b) over two int64 constants: the folding arithmetic's edge values.
inline ModelBuilder int_binary(const std::string& op, int64_t a, int64_t b) {
  ModelBuilder m;
  m.ints("a", {a}, {1}).ints("b", {b}, {1});
  m.node(op, {"a", "b"}, {"y"});
  m.node("Reshape", {"x", "y"}, {"out"});
  m.input("x", kFloat, Shape{1});
  return m.output("out");
}

inline ModelBuilder int_unary(const std::string& op, int64_t a) {
  ModelBuilder m;
  m.ints("a", {a}, {1});
  m.node(op, {"a"}, {"y"});
  m.node("Reshape", {"x", "y"}, {"out"});
  m.input("x", kFloat, Shape{1});
  return m.output("out");
}

// One node over a float input of shape `dims` with constant int64 inputs after it.
inline ModelBuilder with_shape_input(const std::string& op, const Shape& dims, const std::vector<int64_t>& values,
                                     const Shape& value_dims) {
  ModelBuilder m;
  m.input("x", kFloat, dims);
  m.ints("v", values, value_dims);
  m.node(op, {"x", "v"}, {"out"});
  return m.output("out");
}

inline ModelBuilder generator(const std::string& op, const std::vector<std::vector<int64_t>>& inputs) {
  ModelBuilder m;
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("in" + std::to_string(i));
    m.ints(names.back(), inputs[i], inputs[i].size() == 1 ? Shape{} : Shape{static_cast<int64_t>(inputs[i].size())});
  }
  m.node(op, names, {"out"});
  return m.output("out");
}

inline onnx::GraphProto relu_branch(const std::string& out) {
  ModelBuilder b;
  b.graph().set_name("leaf_" + out);
  b.node("Relu", {"x"}, {out});
  b.output(out);
  return b.graph();
}

// `depth` Ifs on an unknown condition, each then-branch holding the next one (both branches of
// each are inferred).
inline onnx::GraphProto nested_if_branch(int depth) {
  if (depth == 0) return relu_branch("b0");
  ModelBuilder b;
  b.graph().set_name("branch" + std::to_string(depth));
  const std::string out = "b" + std::to_string(depth);
  auto& n = b.node("If", {"cond"}, {out});
  set_attr(n, "then_branch", nested_if_branch(depth - 1));
  set_attr(n, "else_branch", relu_branch("e" + std::to_string(depth)));
  b.output(out);
  return b.graph();
}

inline ModelBuilder nested_if(int depth) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{4}).input("cond", kBool, Shape{});
  auto& n = m.node("If", {"cond"}, {"out"});
  set_attr(n, "then_branch", nested_if_branch(depth));
  set_attr(n, "else_branch", relu_branch("top_else"));
  return m.output("out");
}

// A Loop body whose carried tensor grows by one element per iteration (Concat), holding the next
// level's Loop: the shapes change every pass, at every level.
inline onnx::GraphProto growing_loop_body(int depth, int64_t trips) {
  ModelBuilder b;
  b.graph().set_name("body" + std::to_string(depth));
  const std::string s = std::to_string(depth);
  b.input("i" + s, kInt64, Shape{}).input("c" + s, kBool, Shape{}).input("v" + s, kFloat, std::vector<std::string>{"n"});
  b.node("Identity", {"c" + s}, {"co" + s});
  std::string grown = "g" + s;
  auto& cat = b.node("Concat", {"v" + s, "one"}, {grown});
  set_attr(cat, "axis", int64_t{0});
  if (depth > 0) {
    auto& inner = b.node("Loop", {"trips", "", grown}, {"inner" + s});
    set_attr(inner, "body", growing_loop_body(depth - 1, trips));
    grown = "inner" + s;
  }
  b.node("Identity", {grown}, {"vo" + s});
  b.output("co" + s).output("vo" + s);
  return b.graph();
}

inline ModelBuilder nested_loops(int depth, int64_t trips) {
  ModelBuilder m;
  m.ints("trips", {trips}, {}).floats("one", {1.f}, {1});
  m.input("x", kFloat, Shape{1});
  auto& n = m.node("Loop", {"trips", "", "x"}, {"out"});
  set_attr(n, "body", growing_loop_body(depth, trips));
  return m.output("out");
}

// A chain of `length` SequenceInsert nodes.
inline ModelBuilder sequence_chain(int length) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{2});
  m.node("SequenceEmpty", {}, {"s0"});
  for (int i = 0; i < length; ++i) m.node("SequenceInsert", {"s" + std::to_string(i), "x"}, {"s" + std::to_string(i + 1)});
  m.node("SequenceLength", {"s" + std::to_string(length)}, {"out"});
  return m.output("out");
}

// `length` nodes, each adding a 65,536-element constant to the last result.
inline ModelBuilder folded_chain(int length) {
  ModelBuilder m;
  m.ints("big", std::vector<int64_t>(1 << 16, 1), {1 << 16});
  std::string last = "big";
  for (int i = 0; i < length; ++i) {
    const std::string next = "t" + std::to_string(i);
    m.node(i % 2 ? "Add" : "Identity", i % 2 ? std::vector<std::string>{last, "big"} : std::vector<std::string>{last}, {next});
    last = next;
  }
  m.output(last);
  return m;
}

// A weight whose external data names `location`.
inline ModelBuilder external_weight(const std::string& location) {
  ModelBuilder m;
  m.input("x", kFloat, Shape{1, 4});
  auto* t = m.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(kFloat);
  t->add_dims(4);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value(location);
  m.node("MatMul", {"x", "w"}, {"out"});
  return m.output("out");
}

// A local function that calls itself.
inline ModelBuilder recursive_function() {
  ModelBuilder m;
  m.opset("local", 1);
  m.input("x", kFloat, Shape{4});
  m.node("Recurse", {"x"}, {"out"}, "local");
  auto* f = m.proto().add_functions();
  f->set_name("Recurse");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* op = f->add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* op2 = f->add_opset_import();
  op2->set_domain("local");
  op2->set_version(1);
  auto* n = f->add_node();
  n->set_op_type("Recurse");
  n->set_domain("local");
  n->add_input("a");
  n->add_output("b");
  return m.output("out");
}

inline std::string bytes_of(ModelBuilder m) { return m.bytes(); }

inline std::vector<Case> cases() {
  std::vector<Case> out;
  auto add = [&](const std::string& name, const ModelBuilder& m) { out.push_back({name, m.bytes()}); };
  // ---- dims ----
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{kHuge, kHuge, kHuge});
    m.node("Relu", {"x"}, {"out"});
    add("astronomic_input_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{INT64_MAX, 0, INT64_MAX});
    m.node("ReduceSum", {"x"}, {"out"});
    add("zero_beside_max_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{-7, 3});
    m.node("Relu", {"x"}, {"out"});
    add("negative_input_dim", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{4});
    m.value_info("out", kFloat, Shape{-3});
    m.node("Custom", {"x"}, {"out"}, "unknown.domain");
    add("negative_declared_dim", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("a", kFloat, Shape{0, 8}).input("b", kFloat, Shape{8, 0});
    m.node("MatMul", {"a", "b"}, {"m"});
    m.node("ReduceMean", {"m"}, {"out"});
    add("zero_sized_tensors", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, kHuge});
    m.input("w", kFloat, Shape{kHuge, kHuge});
    m.node("MatMul", {"x", "w"}, {"out"});
    add("matmul_astronomic", m.output("out"));
  }
  {
    ModelBuilder m;
    for (int i = 0; i < 4; ++i) m.input("x" + std::to_string(i), kFloat, Shape{int64_t{1} << 49});
    auto& n = m.node("Concat", {"x0", "x1", "x2", "x3"}, {"out"});
    set_attr(n, "axis", int64_t{0});
    add("concat_overflowing_dims", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 3, 8, 8});
    m.weight("w", kFloat, Shape{8, 3, 3, 3});
    auto& n = m.node("Conv", {"x", "w"}, {"out"});
    set_attr(n, "strides", std::vector<int64_t>{1, 1});
    set_attr(n, "dilations", std::vector<int64_t>{int64_t{1} << 49, int64_t{1} << 49});
    add("conv_window_overflow", m.output("out"));
  }
  // ---- integer folding edge values ----
  add("int_div_by_zero", int_binary("Div", 7, 0));
  add("int_div_min_by_minus_one", int_binary("Div", INT64_MIN, -1));
  add("int_mod_by_zero", int_binary("Mod", 7, 0));
  add("int_mod_min_by_minus_one", int_binary("Mod", INT64_MIN, -1));
  add("int_add_overflow", int_binary("Add", INT64_MAX, 1));
  add("int_sub_overflow", int_binary("Sub", INT64_MIN, 1));
  add("int_mul_overflow", int_binary("Mul", kHuge, 4));
  add("int_pow_overflow", int_binary("Pow", 10, 40));
  add("int_abs_min", int_unary("Abs", INT64_MIN));
  add("int_neg_min", int_unary("Neg", INT64_MIN));
  {
    ModelBuilder m;
    m.ints("a", {kHuge, 4}, {2});
    auto& n = m.node("ReduceProd", {"a"}, {"y"});
    set_attr(n, "keepdims", int64_t{1});
    m.node("Reshape", {"x", "y"}, {"out"});
    m.input("x", kFloat, Shape{1});
    add("int_reduceprod_overflow", m.output("out"));
  }
  {
    ModelBuilder m;
    m.floats("f", {1e30f, NAN}, {2});
    auto& cast = m.node("Cast", {"f"}, {"y"});
    set_attr(cast, "to", int64_t{onnx::TensorProto::INT64});
    m.node("Reshape", {"x", "y"}, {"out"});
    m.input("x", kFloat, Shape{1});
    add("float_to_int_overflow", m.output("out"));
  }
  // ---- generators to huge sizes ----
  add("constant_of_shape_huge", generator("ConstantOfShape", {{kHuge, kHuge}}));
  add("constant_of_shape_negative", generator("ConstantOfShape", {{-1, 4}}));
  add("range_huge", generator("Range", {{0}, {INT64_MAX}, {1}}));
  add("range_zero_delta", generator("Range", {{0}, {10}, {0}}));
  add("range_min_to_max", generator("Range", {{INT64_MIN}, {INT64_MAX}, {INT64_MAX}}));
  {
    ModelBuilder m;
    m.ints("start", {0}, {}).floats("limit", {10.f}, {}).ints("delta", {1}, {});
    m.node("Range", {"start", "limit", "delta"}, {"out"});
    add("range_mixed_types", m.output("out"));
  }
  add("expand_huge", with_shape_input("Expand", {1}, {kHuge, kHuge}, {2}));
  add("tile_huge", with_shape_input("Tile", {2, 2}, {kHuge, kHuge}, {2}));
  add("tile_negative", with_shape_input("Tile", {2, 2}, {-1, 2}, {2}));
  add("reshape_huge", with_shape_input("Reshape", {4}, {kHuge, -1}, {2}));
  add("reshape_two_minus_one", with_shape_input("Reshape", {4}, {-1, -1}, {2}));
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 1, 4, 4});
    m.floats("scales", {1.f, 1.f, 1e30f, 1e30f}, {4});
    m.node("Resize", {"x", "", "scales"}, {"out"});
    add("resize_huge_scales", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 1, 4, 4});
    m.floats("scales", {1.f, 1.f, NAN, -2.f}, {4});
    m.node("Resize", {"x", "", "scales"}, {"out"});
    add("resize_nan_scales", m.output("out"));
  }
  add("shape_of_shape_chain", [] {
    ModelBuilder m;
    m.input("x", kFloat, Shape{64});
    std::string last = "x";
    for (int i = 0; i < 64; ++i) {
      m.node(i % 2 ? "Shape" : "ConstantOfShape", {last}, {"s" + std::to_string(i)});
      last = "s" + std::to_string(i);
    }
    return m.output(last);
  }());
  {
    ModelBuilder m(18);
    m.input("x", kFloat, Shape{8});
    auto& n = m.node("Split", {"x"}, {"a", "b"});
    set_attr(n, "num_outputs", int64_t{1} << 40);
    set_attr(n, "axis", int64_t{0});
    add("split_huge_num_outputs", m.output("a"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 4, 4, 4});
    auto& n = m.node("SpaceToDepth", {"x"}, {"out"});
    set_attr(n, "blocksize", int64_t{0});
    add("space_to_depth_zero_block", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{1, 4, 0, 0});
    auto& n = m.node("SpaceToDepth", {"x"}, {"out"});
    set_attr(n, "blocksize", int64_t{1} << 40);
    add("space_to_depth_huge_block_empty_input", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{0, kMaxTensorDim, kMaxTensorDim});
    m.node("Flatten", {"x"}, {"f"});
    auto& n = m.node("Concat", {"x", "x"}, {"out"});
    set_attr(n, "axis", int64_t{2});
    add("empty_tensor_with_huge_dims", m.output("out").output("f"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{10});
    m.ints("starts", {INT64_MAX}, {1}).ints("ends", {INT64_MIN}, {1}).ints("axes", {0}, {1}).ints("steps", {INT64_MIN}, {1});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"out"});
    add("slice_extreme_steps", m.output("out"));
  }
  {
    ModelBuilder m;
    Shape dims(20, 1);
    m.input("a", kFloat, dims).input("b", kFloat, dims);
    auto& n = m.node("Einsum", {"a", "b"}, {"out"});
    set_attr(n, "equation", std::string("...,...->..."));
    add("einsum_long_ellipsis", m.output("out"));
  }
  // ---- control flow ----
  add("if_nested_40", nested_if(40));
  add("if_nested_300", nested_if(300));
  add("loop_nested_8_growing", nested_loops(8, 20));
  add("loop_nested_40_growing", nested_loops(40, 1000));
  add("loop_trip_count_max", nested_loops(0, INT64_MAX - 1));
  add("loop_trip_count_2e9", nested_loops(1, 2000000000));
  // ---- sequences ----
  {
    ModelBuilder m;
    m.node("SequenceAt", {}, {"out"});
    add("sequence_at_no_inputs", m.output("out"));
  }
  {
    ModelBuilder m;
    m.node("SequenceLength", {}, {"out"});
    add("sequence_length_no_inputs", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("SequenceConstruct", {"x"}, {"s"});
    m.ints("pos", {INT64_MIN}, {});
    m.node("SequenceAt", {"s", "pos"}, {"out"});
    add("sequence_at_min_position", m.output("out"));
  }
  add("sequence_insert_chain_20000", sequence_chain(20000));
  // ---- memory ----
  add("folded_chain_5000", folded_chain(5000));
  // ---- local functions ----
  add("recursive_local_function", recursive_function());
  // ---- external data ----
  add("external_data_parent_path", external_weight("../../../../etc/shadow"));
  add("external_data_absolute_path", external_weight("/dev/zero"));
  // ---- attributes and names ----
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Transpose", {"x"}, {"out"});
    set_attr(n, "perm", std::string("0,1"));
    add("attribute_wrong_type_perm", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Softmax", {"x"}, {"out"});
    set_attr(n, "axis", std::vector<float>{1.f, 2.f});
    add("attribute_wrong_type_axis", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2, 3});
    auto& n = m.node("Transpose", {"x"}, {"out"});
    set_attr(n, "perm", std::vector<int64_t>{INT64_MIN, INT64_MAX});
    add("attribute_extreme_perm", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"y"});
    m.node("Relu", {"x"}, {"y"});
    add("duplicate_output_names", m.output("y"));
  }
  {
    ModelBuilder m;
    m.input("", kFloat, Shape{2});
    m.node("Relu", {""}, {""});
    add("empty_names", m.output(""));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"y"}).set_name("");
    m.node("Relu", {"y"}, {"z"}).set_name("");
    add("empty_node_names", m.output("z"));
  }
  {
    ModelBuilder m;
    m.proto().mutable_opset_import(0)->set_version((int64_t{1} << 32) + 13);
    m.input("x", kFloat, Shape{2});
    m.node("Relu", {"x"}, {"out"});
    add("opset_2_to_the_32_plus_13", m.output("out"));
  }
  {
    ModelBuilder m;
    m.input("x", kFloat, Shape{4});
    auto* s = m.graph().add_sparse_initializer();
    auto* values = s->mutable_values();
    values->set_name("w");
    values->set_data_type(kFloat);
    values->add_dims(1);
    values->add_float_data(1.f);
    s->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
    s->mutable_indices()->add_dims(1);
    s->mutable_indices()->add_int64_data(2);
    s->add_dims(4);
    m.node("Add", {"x", "w"}, {"out"});
    add("sparse_initializer", m.output("out"));
  }
  return out;
}

}  // namespace modelcost::testing::hostile
