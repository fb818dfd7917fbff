// A decoder LLM graph (token embedding, per layer Q/K/V projections, a fused attention op with a
// KV cache, output projection, MLP, LM head) whose geometry comes from the fuzzer's bytes: head
// counts, KV heads, head sizes and widths that may be 0, negative, disagree with each other or
// sit near 2^62. The `modelcost llm` fuzz target and the hostile-graph tests build it. Header-only.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace modelcost::fuzzing {

enum class AttentionForm { kGroupQuery, kMultiHead, kOnnxAttention };

struct DecoderSpec {
  int64_t layers = 2, hidden = 64, vocab = 256, inter = 128, positions = 64;
  int64_t heads = 4, kv_heads = 2, head_dim = 16;  // the attention op's attributes
  int64_t cache_heads = 2, cache_head_dim = 16;     // the KV cache inputs' dims
  AttentionForm form = AttentionForm::kGroupQuery;
  bool rotary = true;
};

// Reads a spec from fuzz bytes: each field takes one byte, a small value for most bytes and a
// hostile one (0, -1, 2^31, 2^50, 2^62, INT64_MAX, ...) for the rest; missing bytes keep defaults.
inline DecoderSpec decoder_spec_from_bytes(const uint8_t* data, size_t size) {
  static const int64_t kHostile[] = {0, -1, -7, int64_t{1} << 31, (int64_t{1} << 32) + 1, int64_t{1} << 50,
                                     (int64_t{1} << 50) + 1, int64_t{1} << 61, int64_t{1} << 62, INT64_MAX, INT64_MIN,
                                     3, 5, 6, 7, 1000003};
  size_t at = 0;
  auto next = [&](int64_t fallback) -> int64_t {
    if (at >= size) return fallback;
    const uint8_t b = data[at++];
    return b < 240 ? static_cast<int64_t>(b % 80) : kHostile[b - 240];
  };
  DecoderSpec s;
  s.layers = 1 + static_cast<int64_t>(at < size ? data[at++] % 3 : 1);  // the graph's size is not what is fuzzed
  s.form = static_cast<AttentionForm>(at < size ? data[at++] % 3 : 0);
  s.rotary = at < size ? (data[at++] & 1) != 0 : true;
  s.hidden = next(s.hidden);
  s.vocab = next(s.vocab);
  s.inter = next(s.inter);
  s.positions = next(s.positions);
  s.heads = next(s.heads);
  s.kv_heads = next(s.kv_heads);
  s.head_dim = next(s.head_dim);
  s.cache_heads = next(s.cache_heads);
  s.cache_head_dim = next(s.cache_head_dim);
  return s;
}

namespace detail {

inline void add_dims(onnx::TypeProto_Tensor& t, const std::vector<std::string>& dims) {
  auto* shape = t.mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && (d[0] == '-' || (d[0] >= '0' && d[0] <= '9'))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

inline void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list, const std::string& name, int32_t dtype,
                  const std::vector<std::string>& dims) {
  auto* v = list.Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(dtype);
  add_dims(*t, dims);
}

// A float weight whose data is in an external file that does not exist: only its shape counts.
inline void weight(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
}

inline onnx::NodeProto& node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                             const std::vector<std::string>& outputs, const std::string& domain = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(outputs.empty() ? op : outputs[0]);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

inline void int_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// Width of `count` heads of `size`, saturating (the attention rule is what must refuse it).
inline int64_t width(int64_t count, int64_t size) {
  int64_t w = 0;
  return __builtin_mul_overflow(count, size, &w) ? INT64_MAX : w;
}

inline void attention_layer(onnx::GraphProto& g, const DecoderSpec& s, const std::string& x, const std::string& i) {
  const std::string past_k = "past_key_values." + i + ".key", past_v = "past_key_values." + i + ".value";
  const std::string present_k = "present." + i + ".key", present_v = "present." + i + ".value";
  const std::vector<std::string> cache = {"batch", std::to_string(s.cache_heads), "past_sequence", std::to_string(s.cache_head_dim)};
  value(*g.mutable_input(), past_k, onnx::TensorProto::FLOAT, cache);
  value(*g.mutable_input(), past_v, onnx::TensorProto::FLOAT, cache);
  const int64_t q_width = width(s.heads, s.head_dim), kv_width = width(s.kv_heads, s.head_dim);
  weight(g, "wq" + i, {s.hidden, q_width});
  weight(g, "wk" + i, {s.hidden, kv_width});
  weight(g, "wv" + i, {s.hidden, kv_width});
  node(g, "MatMul", {x, "wq" + i}, {"q" + i});
  node(g, "MatMul", {x, "wk" + i}, {"k" + i});
  node(g, "MatMul", {x, "wv" + i}, {"v" + i});
  const std::vector<std::string> outputs = {"a" + i, present_k, present_v};
  if (s.form == AttentionForm::kGroupQuery) {
    auto& n = node(g, "GroupQueryAttention",
                   {"q" + i, "k" + i, "v" + i, past_k, past_v, "seqlens_k", "total_sequence_length", "cos_cache", "sin_cache"},
                   outputs, "com.microsoft");
    int_attr(n, "num_heads", s.heads);
    int_attr(n, "kv_num_heads", s.kv_heads);
    int_attr(n, "do_rotary", s.rotary ? 1 : 0);
  } else if (s.form == AttentionForm::kMultiHead) {
    auto& n = node(g, "MultiHeadAttention", {"q" + i, "k" + i, "v" + i, "", "", "", past_k, past_v}, outputs, "com.microsoft");
    int_attr(n, "num_heads", s.heads);
  } else {
    auto& n = node(g, "Attention", {"q" + i, "k" + i, "v" + i, "", past_k, past_v}, outputs);
    int_attr(n, "q_num_heads", s.heads);
    int_attr(n, "kv_num_heads", s.kv_heads);
  }
  weight(g, "wo" + i, {q_width, s.hidden});
  node(g, "MatMul", {"a" + i, "wo" + i}, {"o" + i});
}

}  // namespace detail

// The serialized model (ai.onnx opset 23 with com.microsoft 1).
inline std::string decoder_model_bytes(const DecoderSpec& s) {
  using namespace detail;
  onnx::ModelProto model;
  model.set_ir_version(10);
  for (const auto& [domain, version] : {std::pair<const char*, int>{"", 23}, {"com.microsoft", 1}}) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("fuzz_decoder");
  value(*g.mutable_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "sequence"});
  value(*g.mutable_input(), "seqlens_k", onnx::TensorProto::INT32, {"batch"});
  value(*g.mutable_input(), "total_sequence_length", onnx::TensorProto::INT32, {});
  weight(g, "embed", {s.vocab, s.hidden});
  weight(g, "cos_cache", {s.positions, s.head_dim / 2});
  weight(g, "sin_cache", {s.positions, s.head_dim / 2});
  node(g, "Gather", {"embed", "input_ids"}, {"x0"});
  std::string x = "x0";
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string i = std::to_string(l);
    attention_layer(g, s, x, i);
    node(g, "Add", {x, "o" + i}, {"r" + i});
    weight(g, "wup" + i, {s.hidden, s.inter});
    weight(g, "wdown" + i, {s.inter, s.hidden});
    node(g, "MatMul", {"r" + i, "wup" + i}, {"up" + i});
    node(g, "Relu", {"up" + i}, {"act" + i});
    node(g, "MatMul", {"act" + i, "wdown" + i}, {"down" + i});
    x = "x" + std::to_string(l + 1);
    node(g, "Add", {"r" + i, "down" + i}, {x});
  }
  weight(g, "head", {s.hidden, s.vocab});
  node(g, "MatMul", {x, "head"}, {"logits"});
  value(*g.mutable_output(), "logits", onnx::TensorProto::FLOAT, {"batch", "sequence", std::to_string(s.vocab)});
  return model.SerializeAsString();
}

}  // namespace modelcost::fuzzing
