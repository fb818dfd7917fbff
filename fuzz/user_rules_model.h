// The model the user-rules fuzz target applies its rules to: custom ops com.fuzz A, B and C and
// a standard-domain Custom, over float inputs [2, 3, 4] and [4, 5] and a scalar, with int
// (k = 3, big = 2^62, zero = 0) and float (f = 0.5, inf) attributes. Header-only.
#pragma once
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace modelcost::fuzzing {

inline std::string custom_ops_model_bytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  for (const auto& [domain, version] : {std::pair<const char*, int>{"", 17}, {"com.fuzz", 1}}) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("custom_ops");
  auto input = [&](const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = g.add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  };
  input("x", {2, 3, 4});
  input("w", {4, 5});
  input("s", {});
  auto node = [&](const std::string& op, const std::string& domain, const std::vector<std::string>& inputs,
                  const std::string& output) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_domain(domain);
    n->set_name(output);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    auto attr = [&](const char* name, auto setter) {
      auto* a = n->add_attribute();
      a->set_name(name);
      setter(*a);
    };
    attr("k", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT), a.set_i(3); });
    attr("big", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT), a.set_i(int64_t{1} << 62); });
    attr("zero", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::INT), a.set_i(0); });
    attr("f", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::FLOAT), a.set_f(0.5f); });
    attr("inf", [](onnx::AttributeProto& a) { a.set_type(onnx::AttributeProto::FLOAT), a.set_f(INFINITY); });
  };
  node("A", "com.fuzz", {"x", "w"}, "a");
  node("B", "com.fuzz", {"a", "s"}, "b");
  node("C", "com.fuzz", {"b"}, "c");
  node("Custom", "", {"c", "x"}, "y");
  auto* out = g.add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return model.SerializeAsString();
}

}  // namespace modelcost::fuzzing
