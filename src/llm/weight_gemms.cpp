// Matrix products with stored weights (the linear layers of a decoder) and the other weights.
#include <map>
#include <set>

#include "llm/recognition_parts.h"
#include "modelcost/roofline.h"

namespace modelcost {
namespace {

struct WeightInputs {
  int weight = -1;            // input index of the weight
  std::vector<int> quantizer; // scales and zero points stored beside it
};

// Which input of each matrix op is the weight; nullopt for ops that are not weight GEMMs. Per-op
// operand data, not a category: each op has its own quantizer inputs (a row field, not a block trait).
std::optional<WeightInputs> weight_inputs(const Node& node) {
  static const std::map<std::string, WeightInputs> ops = {
      {"MatMul", {1, {}}},          {"Gemm", {1, {}}},           {"FusedMatMul", {1, {}}},
      {"MatMulNBits", {1, {2, 3}}}, {"MatMulBnb4", {1, {2}}},    {"MatMulInteger", {1, {3}}},
      {"QLinearMatMul", {3, {4, 5}}}, {"MatMulIntegerToFloat", {1, {3, 5}}},
      {"DynamicQuantizeMatMul", {1, {2, 3}}}};
  auto it = ops.find(node.op_type);
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

double tensor_bytes(const TensorInfo& t) { return t.has_shape ? element_count(t.shape) * dtype_size(t.dtype) : 0; }

std::string stored_dtype(const GraphIndex& index, const Node& node, const std::vector<int>& sources) {
  if (node.op_type == "MatMulNBits") return "int" + std::to_string(node_int_attr(node, "bits", 4));
  if (node.op_type == "MatMulBnb4") return "int4";
  double largest = -1;
  std::string dtype;
  for (int id : sources) {  // the largest source is the weight itself (not a scale)
    const double bytes = tensor_bytes(index.tensor(id));
    if (bytes > largest) {
      largest = bytes;
      dtype = peak_dtype_of(index.tensor(id).dtype);
    }
  }
  return dtype;
}

// K and N of the product: MatMulNBits carries them as attributes; otherwise the activation's last
// dim and the output's last dim.
bool gemm_dims(const GraphIndex& index, const Node& node, int64_t& k, int64_t& n) {
  if (node.op_type == "MatMulNBits" || node.op_type == "MatMulBnb4") {
    k = node_int_attr(node, "K", 0);
    n = node_int_attr(node, "N", 0);
    return k > 0 && n > 0;
  }
  const int a = 0;  // the activation is the first input of every op above
  if (node.inputs.empty() || node.inputs[a] < 0 || node.outputs.empty() || node.outputs[0] < 0) return false;
  const TensorInfo& in = index.tensor(node.inputs[a]);
  const TensorInfo& out = index.tensor(node.outputs[0]);
  if (!in.has_shape || !out.has_shape || in.shape.empty() || out.shape.empty()) return false;
  k = in.shape.back();
  n = out.shape.back();
  if (node.op_type == "Gemm" && node_int_attr(node, "transA", 0) != 0 && in.shape.size() == 2) k = in.shape[0];
  return k > 0 && n > 0;
}

}  // namespace

void collect_weight_gemms(const GraphIndex& index, int64_t vocab, int64_t tokens, int64_t batch, DecoderModel& model) {
  std::set<int> gemm_weights;
  for (const Node& node : index.graph().nodes) {
    const auto inputs = weight_inputs(node);
    if (!inputs || inputs->weight >= static_cast<int>(node.inputs.size()) || node.inputs[inputs->weight] < 0) continue;
    std::vector<int> sources = index.weight_sources(node.inputs[inputs->weight]);
    if (sources.empty()) continue;  // a product of two activations (attention scores)
    WeightGemm gemm;
    if (!gemm_dims(index, node, gemm.k, gemm.n)) continue;
    const double rows = element_count(index.tensor(node.outputs[0]).shape) / static_cast<double>(gemm.n);
    if (rows == static_cast<double>(tokens)) gemm.per_position = true;
    else if (rows == static_cast<double>(batch)) gemm.per_position = false;
    else continue;  // not a per-token layer (e.g. a rotary frequency table)
    gemm.stored_dtype = stored_dtype(index, node, sources);
    for (int q : inputs->quantizer)
      if (q < static_cast<int>(node.inputs.size()) && node.inputs[q] >= 0 && index.tensor(node.inputs[q]).is_initializer)
        sources.push_back(node.inputs[q]);
    for (int id : sources)
      if (gemm_weights.insert(id).second) gemm.stored_bytes += tensor_bytes(index.tensor(id));
    gemm.node = node.name;
    gemm.op_type = node.op_type;
    gemm.lm_head = gemm.n == vocab;
    model.gemm_weight_bytes += gemm.stored_bytes;
    model.gemms.push_back(gemm);
  }
  // Everything else stored: embeddings, norms, biases, position tables.
  std::set<int> others;
  for (const Node& node : index.graph().nodes)
    for (int id : node.inputs)
      if (id >= 0 && index.tensor(id).is_initializer && dtype_is_float(index.tensor(id).dtype) && !gemm_weights.count(id))
        others.insert(id);
  for (int id : others) {
    model.other_weight_bytes += tensor_bytes(index.tensor(id));
    if (index.tensor(id).has_shape) model.other_weight_elements += element_count(index.tensor(id).shape);
  }
}

}  // namespace modelcost
