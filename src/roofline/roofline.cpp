// Places every node of an analysis on a device's roofline (docs/roofline.md).
#include "modelcost/roofline.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "modelcost/errors.h"

namespace modelcost {

const char* bound_name(Bound bound) {
  switch (bound) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    default: return "none";
  }
}

void check_dtype_option(const std::string& dtype) {
  static const std::set<std::string> allowed = {"", "fp16", "bf16", "fp32", "tf32", "fp8", "int8"};
  if (!allowed.count(dtype))
    throw Error(kExitUsage, "unknown --dtype '" + dtype + "' (expected fp16, bf16, fp32, tf32, fp8 or int8)");
}

std::string peak_dtype_of(int32_t onnx_dtype) {
  using T = onnx::TensorProto;
  switch (onnx_dtype) {
    case T::FLOAT: return "fp32";
    case T::FLOAT16: return "fp16";
    case T::BFLOAT16: return "bf16";
    case T::DOUBLE: return "fp64";
    case T::INT8:
    case T::UINT8: return "int8";
    case 17: case 18: case 19: case 20: return "fp8";  // the four float8 types
    case 21: case 22: return "int4";                     // uint4, int4
    case 23: return "fp8";                               // float4e2m1: the nearest format with a peak
    default: return "";
  }
}

namespace {

double option_element_size(const std::string& dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4;  // tf32 lives in fp32 storage
  if (dtype == "fp16" || dtype == "bf16") return 2;
  return 1;  // fp8, int8
}

bool is_recastable_float(int32_t onnx_dtype) {
  return dtype_is_float(onnx_dtype) && onnx_dtype != onnx::TensorProto::COMPLEX64 &&
         onnx_dtype != onnx::TensorProto::COMPLEX128;
}

bool is_float_peak(const std::string& dtype) {
  return dtype == "fp64" || dtype == "fp32" || dtype == "fp16" || dtype == "bf16" || dtype == "fp8";
}

// Ops that compute on integer-quantized operands whatever their activation dtype.
bool is_quantized_matrix_op(const std::string& op) {
  static const std::set<std::string> ops = {
      "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "QGemm", "QAttention",
      "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "DynamicQuantizeLSTM", "QOrderedMatMul",
      "QOrderedAttention", "QOrderedLongformerAttention"};
  return ops.count(op) > 0;
}

}  // namespace

double recast_element_size(int32_t onnx_dtype, const std::string& dtype_option) {
  if (dtype_option.empty() || !is_recastable_float(onnx_dtype)) return dtype_size(onnx_dtype);
  return option_element_size(dtype_option);
}

bool is_matrix_op(const std::string& op_type, const std::string& domain) {
  static const std::set<std::string> ops = {
      "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum",
      // attention products
      "Attention", "MultiHeadAttention", "GroupQueryAttention", "PackedAttention", "PackedMultiHeadAttention",
      "DecoderMaskedMultiHeadAttention", "DecoderMaskedSelfAttention", "SparseAttention", "LongformerAttention",
      // com.microsoft fused and quantized forms
      "FusedConv", "FusedGemm", "FusedMatMul", "MatMulNBits", "MatMulBnb4", "MatMulFpQ4", "GatherBlockQuantized",
      "TransposeMatMul", "ConvTransposeWithDynamicPads", "NhwcConv", "NhwcFusedConv", "QLinearConvTranspose"};
  (void)domain;  // the names are unique enough across ai.onnx and com.microsoft
  return ops.count(op_type) > 0 || is_quantized_matrix_op(op_type);
}

std::string node_compute_dtype(const NodeAnalysis& node, const std::string& dtype_option) {
  const Node& n = *node.node;
  const Graph& g = *node.graph;
  std::string natural;
  if (is_quantized_matrix_op(n.op_type)) {
    natural = "int8";
  } else {
    // The first float operand sets the dtype; with none, the first low-bit integer operand.
    for (int id : n.inputs)
      if (id >= 0 && natural.empty() && is_float_peak(peak_dtype_of(g.tensors[id].dtype))) natural = peak_dtype_of(g.tensors[id].dtype);
    for (int id : n.outputs)
      if (id >= 0 && natural.empty() && is_float_peak(peak_dtype_of(g.tensors[id].dtype))) natural = peak_dtype_of(g.tensors[id].dtype);
    for (int id : n.inputs)
      if (id >= 0 && natural.empty()) natural = peak_dtype_of(g.tensors[id].dtype);
  }
  // int64/bool arithmetic (shape computations) is costed at the fp32 vector rate.
  if (natural.empty()) return "fp32";
  if (!dtype_option.empty() && is_float_peak(natural)) return dtype_option;
  return natural;
}

bool is_folded(const NodeAnalysis& node) {
  bool any = false;
  for (int id : node.node->outputs) {
    if (id < 0) continue;
    if (!node.graph->tensors[id].value) return false;
    any = true;
  }
  return any;
}

RecastBytes recast_node_bytes_split(const NodeAnalysis& node, const std::string& dtype_option) {
  RecastBytes out{node.cost.bytes_read, node.cost.bytes_written};
  if (dtype_option.empty() || node.cost.bytes() <= 0) return out;
  // Scale the cost model's bytes by how the node's own inputs (for reads) and outputs (for
  // writes) shrink or grow; this carries the recast into control-flow nodes, whose bytes include
  // their bodies'. Rounded to whole bytes: a tensor's size is a whole number of bytes.
  const Graph& g = *node.graph;
  auto ratio = [&](const std::vector<int>& ids) {
    double original = 0, recast = 0;
    for (int id : ids) {
      if (id < 0) continue;
      const TensorInfo& t = g.tensors[id];
      const double n = element_count(t.shape);
      original += n * dtype_size(t.dtype);
      recast += n * recast_element_size(t.dtype, dtype_option);
    }
    return original > 0 ? recast / original : 1.0;
  };
  out.read = std::round(out.read * ratio(node.node->inputs));
  out.written = std::round(out.written * ratio(node.node->outputs));
  return out;
}

double recast_node_bytes(const NodeAnalysis& node, const std::string& dtype_option) {
  const RecastBytes b = recast_node_bytes_split(node, dtype_option);
  return b.read + b.written;
}

namespace {

std::string model_stem(const Analysis& analysis) {
  if (!analysis.model || analysis.model->path.empty()) return "model";
  return std::filesystem::path(analysis.model->path).stem().string();
}

std::string format_ms(double ms) { return fmt::format("{:.3g} ms", ms); }

std::string make_verdict(const Analysis& analysis, const RooflineReport& r, const RooflineOptions& options) {
  // The op type that takes the most predicted time among matrix ops (Conv in a CNN, MatMul in a
  // transformer), or among all ops when the model has none.
  std::map<std::string, double> time_by_op;
  std::map<std::string, std::pair<size_t, size_t>> counts;  // op -> (memory-bound, costed with work)
  bool any_matrix = false;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const auto& nr = r.nodes[i];
    if (nr.costed && nr.launches && nr.path == MathPath::kTensor) any_matrix = true;
  }
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const auto& nr = r.nodes[i];
    if (!nr.costed || !nr.launches) continue;
    const Node& n = *analysis.nodes[i].node;
    if (any_matrix && !(is_matrix_op(n.op_type, n.domain) || analysis.nodes[i].cost.macs > 0)) continue;
    time_by_op[n.op_type] += nr.predicted_us;
    auto& c = counts[n.op_type];
    if (nr.bound == Bound::kMemory) ++c.first;
    ++c.second;
  }
  std::string head = options.model_name.empty() ? model_stem(analysis) : options.model_name;
  head += " on " + r.device->name + ", " + r.dtype;
  if (r.batch > 0) head += fmt::format(", batch {}", r.batch);
  std::string body;
  if (!time_by_op.empty()) {
    auto top = std::max_element(time_by_op.begin(), time_by_op.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    const auto& c = counts[top->first];
    body = fmt::format("{} of {} {} layers memory-bound; ", c.first, c.second, top->first);
  }
  body += "predicted " + format_ms(r.totals.predicted_latency_ms);
  if (r.totals.uncosted) body += fmt::format(" ({} uncosted nodes not included)", r.totals.uncosted);
  return head + ": " + body;
}

}  // namespace

RooflineReport compute_roofline(const Analysis& analysis, const Device& device, const RooflineOptions& options) {
  check_dtype_option(options.dtype);
  const double bandwidth = device.bandwidth_bytes_per_s();
  if (!(bandwidth > 0)) throw Error(kExitUsage, "device '" + device.id + "' has no memory bandwidth figure");
  RooflineReport r;
  r.device = &device;
  r.batch = options.batch;
  r.recast_dtype = options.dtype;
  r.nodes.resize(analysis.nodes.size());
  std::map<std::pair<int, std::string>, Roof> roofs;
  std::map<std::string, double> flops_by_dtype;

  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const NodeAnalysis& na = analysis.nodes[i];
    NodeRoofline& nr = r.nodes[i];
    nr.costed = na.cost.known;
    if (!nr.costed) {
      ++r.totals.uncosted;
      continue;
    }
    nr.flops = na.cost.flops;
    nr.bytes = recast_node_bytes(na, options.dtype);
    nr.compute_dtype = node_compute_dtype(na, options.dtype);
    nr.folded = is_folded(na);
    if (nr.folded || (nr.flops <= 0 && nr.bytes <= 0)) {  // folded, reinterpreting or empty: no kernel runs
      ++r.totals.no_bound;
      if (nr.folded) ++r.totals.folded;
      continue;
    }
    const bool matrix = is_matrix_op(na.node->op_type, na.node->domain) || na.cost.macs > 0;
    const PeakChoice peak = choose_peak(device, matrix ? MathPath::kTensor : MathPath::kVector, nr.compute_dtype);
    if (!(peak.flops_per_s > 0))
      throw Error(kExitUsage, fmt::format("device '{}' has no peak usable for {} work (needs at least peak.vector.fp32)",
                                          device.id, nr.compute_dtype));
    nr.launches = true;
    nr.path = peak.path;
    nr.peak_dtype = peak.dtype;
    nr.peak_flops = peak.flops_per_s;
    const double compute_s = nr.flops / peak.flops_per_s;
    const double memory_s = nr.bytes / bandwidth;
    nr.intensity = nr.bytes > 0 ? nr.flops / nr.bytes : 0;
    nr.attainable_flops = nr.bytes > 0 ? std::min(peak.flops_per_s, nr.intensity * bandwidth) : peak.flops_per_s;
    // At or past the ridge point (peak / bandwidth) the math takes at least as long as the traffic.
    nr.bound = (nr.flops > 0 && compute_s >= memory_s) ? Bound::kCompute : Bound::kMemory;
    nr.predicted_us = std::max(compute_s, memory_s) * 1e6 + device.launch_overhead_us;

    r.totals.predicted_latency_ms += nr.predicted_us / 1e3;
    r.totals.flops += nr.flops;
    r.totals.bytes += nr.bytes;
    ++r.totals.launches;
    ++(nr.bound == Bound::kCompute ? r.totals.compute_bound : r.totals.memory_bound);
    Roof& roof = roofs[{static_cast<int>(peak.path), peak.dtype}];
    roof.path = peak.path;
    roof.dtype = peak.dtype;
    roof.peak_flops = peak.flops_per_s;
    roof.ridge_intensity = peak.flops_per_s / bandwidth;
    ++roof.nodes;
    flops_by_dtype[nr.compute_dtype] += nr.flops;
  }

  const double total_us = r.totals.predicted_latency_ms * 1e3;
  for (auto& nr : r.nodes) nr.share = total_us > 0 ? nr.predicted_us / total_us : 0;
  for (auto& [key, roof] : roofs) r.roofs.push_back(roof);
  std::sort(r.roofs.begin(), r.roofs.end(), [](const Roof& a, const Roof& b) { return a.peak_flops > b.peak_flops; });

  if (!options.dtype.empty()) {
    r.dtype = options.dtype;
  } else if (!flops_by_dtype.empty()) {
    r.dtype = std::max_element(flops_by_dtype.begin(), flops_by_dtype.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  } else {
    r.dtype = "fp32";
  }
  r.verdict = make_verdict(analysis, r, options);
  return r;
}

}  // namespace modelcost
