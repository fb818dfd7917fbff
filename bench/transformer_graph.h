// The benchmarks' generated model: a transformer-like encoder the way TorchScript exports it
// (shape chains, attention, MLP with erf-GELU), about `target_nodes` nodes, weights external.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace modelcost::bench {

inline void add_weight(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
}

inline void add_ints(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (auto v : values) t->add_int64_data(v);
}

inline onnx::NodeProto* node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out[0]);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

// Serialized ModelProto; inputs x[batch, seq, 768].
inline std::string transformer_like(int target_nodes) {
  const int64_t d = 768, heads = 12, ff = 3072;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto& g = *m.mutable_graph();
  g.set_name("generated");
  auto* in = g.add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_param("seq");
  tt->mutable_shape()->add_dim()->set_dim_value(d);
  add_ints(g, "c0", {0});
  add_ints(g, "c1", {1});
  add_ints(g, "heads", {heads});
  add_ints(g, "hd", {d / heads});
  add_ints(g, "dmodel", {d});
  std::string x = "x";
  for (int l = 0; g.node_size() < target_nodes; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    for (auto w : {"ln1_s", "ln1_b", "ln2_s", "ln2_b"}) add_weight(g, p + w, {d});
    add_weight(g, p + "wqkv", {d, 3 * d});
    add_weight(g, p + "bqkv", {3 * d});
    add_weight(g, p + "wo", {d, d});
    add_weight(g, p + "w1", {d, ff});
    add_weight(g, p + "w2", {ff, d});
    node(g, "LayerNormalization", {x, p + "ln1_s", p + "ln1_b"}, {p + "ln1"});
    node(g, "MatMul", {p + "ln1", p + "wqkv"}, {p + "qkv0"});
    node(g, "Add", {p + "qkv0", p + "bqkv"}, {p + "qkv"});
    auto* split = node(g, "Split", {p + "qkv"}, {p + "q", p + "k", p + "v"});
    auto* axis = split->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(2);
    node(g, "Shape", {p + "q"}, {p + "shape"});
    node(g, "Gather", {p + "shape", "c0"}, {p + "b"});
    node(g, "Gather", {p + "shape", "c1"}, {p + "s"});
    node(g, "Concat", {p + "b", p + "s", "heads", "hd"}, {p + "target"})->add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("axis");
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(0);
      return a;
    }());
    for (const char* t : {"q", "k", "v"}) {
      node(g, "Reshape", {p + t, p + "target"}, {p + t + "r"});
      auto* tr = node(g, "Transpose", {p + t + "r"}, {p + t + "t"});
      auto* perm = tr->add_attribute();
      perm->set_name("perm");
      perm->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : (std::string(t) == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3})) perm->add_ints(v);
    }
    node(g, "MatMul", {p + "qt", p + "kt"}, {p + "scores"});
    node(g, "Softmax", {p + "scores"}, {p + "probs"});
    node(g, "MatMul", {p + "probs", p + "vt"}, {p + "ctx"});
    auto* tr = node(g, "Transpose", {p + "ctx"}, {p + "ctxt"});
    auto* perm = tr->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : {0, 2, 1, 3}) perm->add_ints(v);
    node(g, "Concat", {p + "b", p + "s", "dmodel"}, {p + "flat"})->add_attribute()->CopyFrom(split->attribute(0));
    g.mutable_node(g.node_size() - 1)->mutable_attribute(0)->set_i(0);
    node(g, "Reshape", {p + "ctxt", p + "flat"}, {p + "ctxr"});
    node(g, "MatMul", {p + "ctxr", p + "wo"}, {p + "attn"});
    node(g, "Add", {x, p + "attn"}, {p + "res1"});
    node(g, "LayerNormalization", {p + "res1", p + "ln2_s", p + "ln2_b"}, {p + "ln2"});
    node(g, "MatMul", {p + "ln2", p + "w1"}, {p + "h"});
    node(g, "Erf", {p + "h"}, {p + "erf"});
    node(g, "Mul", {p + "h", p + "erf"}, {p + "gelu"});
    node(g, "MatMul", {p + "gelu", p + "w2"}, {p + "mlp"});
    node(g, "Add", {p + "res1", p + "mlp"}, {p + "out"});
    x = p + "out";
  }
  g.add_output()->set_name(x);
  return m.SerializeAsString();
}

}  // namespace modelcost::bench
