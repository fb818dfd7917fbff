// Builders of well-formed but hostile ONNX graphs (hostile_models.h lists the cases made with
// them). Header-only: tests/ builds *_test.cpp files only.
#pragma once
#include <onnx/onnx_pb.h>

#include <climits>
#include <cmath>
#include <cstdint>
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

// A Scan body adding each slice to the state, holding the next level's Scan over the outer xs.
inline onnx::GraphProto scan_body(int depth) {
  ModelBuilder b;
  const std::string s = std::to_string(depth);
  b.graph().set_name("scan_body" + s);
  b.input("st" + s, kFloat, Shape{4}).input("xi" + s, kFloat, Shape{4});
  b.node("Add", {"st" + s, "xi" + s}, {"a" + s});
  std::string last = "a" + s;
  if (depth > 0) {
    auto& inner = b.node("Scan", {last, "xs"}, {"r" + s, "ys" + s});
    set_attr(inner, "num_scan_inputs", int64_t{1});
    set_attr(inner, "body", scan_body(depth - 1));
    last = "r" + s;
  }
  b.node("Identity", {last}, {"so" + s});
  b.node("Identity", {last}, {"yo" + s});
  b.output("so" + s).output("yo" + s);
  return b.graph();
}

// Scans nested `depth` deep, each over the same `length` slices.
inline ModelBuilder nested_scans(int depth, int64_t length) {
  ModelBuilder m;
  m.input("xs", kFloat, Shape{length, 4}).input("s", kFloat, Shape{4});
  auto& n = m.node("Scan", {"s", "xs"}, {"final", "ys"});
  set_attr(n, "num_scan_inputs", int64_t{1});
  set_attr(n, "body", scan_body(depth));
  return m.output("final").output("ys");
}

// A local function (domain "local") of one input and one output that calls `calls` in a chain
// (a Relu when it calls none).
inline void add_function(onnx::ModelProto& model, const std::string& name, const std::vector<std::string>& calls) {
  auto* f = model.add_functions();
  f->set_name(name);
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* onnx_opset = f->add_opset_import();
  onnx_opset->set_domain("");
  onnx_opset->set_version(17);
  auto* local = f->add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  std::string last = "a";
  for (size_t i = 0; i < calls.size() || i == 0; ++i) {
    auto* n = f->add_node();
    n->set_op_type(calls.empty() ? "Relu" : calls[i]);
    if (!calls.empty()) n->set_domain("local");
    n->add_input(last);
    last = i + 1 >= calls.size() ? "b" : "t" + std::to_string(i);
    n->add_output(last);
  }
}

// The main graph calls local function `entry` on x.
inline ModelBuilder calling_function(const std::string& entry) {
  ModelBuilder m;
  m.opset("local", 1);
  m.input("x", kFloat, Shape{4});
  m.node(entry, {"x"}, {"out"}, "local");
  return m.output("out");
}

// A local function that calls itself.
inline ModelBuilder recursive_function() {
  ModelBuilder m = calling_function("Recurse");
  add_function(m.proto(), "Recurse", {"Recurse"});
  return m;
}

// One node of a contrib op with `inputs` inputs and `outputs` outputs, over float tensors of
// shape [1, 3, 8, 8] ("" names an omitted input).
inline ModelBuilder contrib_node(const std::string& domain, const std::string& op, const std::vector<std::string>& inputs,
                                 int outputs = 1) {
  ModelBuilder m;
  m.opset(domain, 1);
  for (const auto& name : inputs)
    if (!name.empty()) m.input(name, kFloat, Shape{1, 3, 8, 8});
  std::vector<std::string> outs;
  for (int i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
  m.node(op, inputs, outs, domain);
  return m.output("out0");
}

}  // namespace modelcost::testing::hostile
