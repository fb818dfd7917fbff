// Places every node of an analysis on a device's roofline (docs/roofline.md).
#include "modelcost/roofline.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "class_curves.h"
#include "dtype_names.h"
#include "library_epilogue.h"
#include "matrix_efficiency.h"
#include "modelcost/errors.h"
#include "ops/op_registry.h"

namespace modelcost {

const char* bound_name(Bound bound) {
  switch (bound) {
    case Bound::kCompute: return "compute";
    case Bound::kMemory: return "memory";
    case Bound::kOverhead: return "overhead";
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

bool is_recastable_float(int32_t onnx_dtype) {
  return dtype_is_float(onnx_dtype) && onnx_dtype != onnx::TensorProto::COMPLEX64 &&
         onnx_dtype != onnx::TensorProto::COMPLEX128;
}

bool is_float_peak(const std::string& dtype) {
  return dtype == "fp64" || dtype == "fp32" || dtype == "fp16" || dtype == "bf16" || dtype == "fp8";
}

}  // namespace

double recast_element_size(int32_t onnx_dtype, const std::string& dtype_option) {
  if (dtype_option.empty() || !is_recastable_float(onnx_dtype)) return dtype_size(onnx_dtype);
  return dtype_name_bytes(dtype_option);
}

bool is_matrix_op(const std::string& op_type, const std::string& domain) { return op_traits(domain, op_type).matrix(); }

std::string node_compute_dtype(const NodeAnalysis& node, const std::string& dtype_option) {
  const Node& n = *node.node;
  const Graph& g = *node.graph;
  std::string natural;
  if (op_traits(n.domain, n.op_type).integer_math) {
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

bool is_folded(const NodeAnalysis& node) { return outputs_known(node); }

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

double recast_group_bytes(const FusedGroup& group, const Analysis& analysis, const std::string& dtype_option) {
  const double bytes = group.bytes();
  if (dtype_option.empty() || bytes <= 0 || group.members.empty()) return bytes;
  const Graph& g = *analysis.nodes[group.members.front()].graph;
  double original = 0, recast = 0;
  for (const auto* ids : {&group.inputs, &group.outputs})
    for (int id : *ids) {
      const TensorInfo& t = g.tensors[id];
      const double n = element_count(t.shape);
      original += n * dtype_size(t.dtype);
      recast += n * recast_element_size(t.dtype, dtype_option);
    }
  return original > 0 ? bytes * (recast / original) : bytes;
}

void check_view_option(const std::string& view) {
  if (view != "deployed" && view != "as-written")
    throw Error(kExitUsage, "unknown --view '" + view + "' (expected deployed or as-written)");
}

namespace {

// The work of one kernel: a node as written, or a fused group as deployed.
struct KernelWork {
  double flops = 0, bytes = 0;
  bool matrix = false;
  std::string compute_dtype;
  // A deployed group with its analysis: its matrix members go through the tile model.
  const FusedGroup* group = nullptr;
  const Analysis* analysis = nullptr;
  // The node itself, or the group's anchor.
  const NodeAnalysis* anchor = nullptr;
  // The class of kernel it runs as: names the calibrated curve that prices it.
  KernelShape kernel = {};
};

Ceilings ceilings_of(const Device& device, bool datasheet) {
  Ceilings c;
  const AchievableCeilings& a = device.achievable;
  c.achievable = !datasheet && !a.empty();
  c.datasheet_bandwidth_bytes_per_s = device.bandwidth_bytes_per_s();
  c.bandwidth_bytes_per_s = c.achievable && a.memory_bandwidth_gbps > 0 ? a.memory_bandwidth_gbps * 1e9 : c.datasheet_bandwidth_bytes_per_s;
  c.overhead_us = c.achievable && a.kernel_overhead_us > 0 ? a.kernel_overhead_us : device.launch_overhead_us;
  c.gap_us = c.achievable ? a.kernel_gap_us : 0;
  c.curve_gap_us = c.achievable && a.library_gap_us > 0 ? a.library_gap_us : c.gap_us;
  c.work_scale = c.achievable && a.in_graph_work_scale > 0 ? a.in_graph_work_scale : 1;
  c.attention_load_scale = c.achievable && a.attention_load_scale > 0 ? a.attention_load_scale : 1;
  if (c.achievable && device.kind == "gpu")
    for (const auto& [name, curve] : a.kernel_curves) c.kernel_curves.push_back(name);
  if (c.achievable) c.calibration = calibration_state(device);
  return c;
}

// A curve fitted for this kernel's class and dtype; nullopt where the device has none or the
// datasheet ceilings are asked for.
std::optional<PricedCurve> curve_for(const KernelWork& work, const PeakChoice& peak, const Device& device,
                                     const Ceilings& ceilings) {
  if (!ceilings.achievable || device.kind != "gpu") return std::nullopt;
  const KernelShape& k = work.kernel;
  const double element_bytes = dtype_name_bytes(work.compute_dtype);
  return fastest_curve(device, k, peak, {work.flops, work.bytes, k.groups * k.group_width * k.k * element_bytes, element_bytes});
}

// Without a calibrated curve: time = max(flops / peak, bytes / bandwidth, overhead) + gap.
// With one: time = fixed + s x (K loop + max(flops / class rate, bytes / class bandwidth)), all of
// the curve's class, s the device's in-graph work scale (docs/roofline.md). The largest term names the bound.
void place(const KernelWork& work, const Device& device, const Ceilings& ceilings, NodeRoofline& nr) {
  const PeakChoice peak = choose_peak(device, work.matrix ? MathPath::kTensor : MathPath::kVector, work.compute_dtype);
  if (!(peak.flops_per_s > 0))
    throw Error(kExitUsage, fmt::format("device '{}' has no peak usable for {} work (needs at least peak.vector.fp32)",
                                        device.id, work.compute_dtype));
  const double achievable = ceilings.achievable ? device.achievable_flops(peak.path, peak.dtype) : 0;
  const double flops_per_s = achievable > 0 ? achievable : peak.flops_per_s;
  const double bandwidth = ceilings.bandwidth_bytes_per_s;
  nr.launches = true;
  nr.path = peak.path;
  nr.peak_dtype = peak.dtype;
  nr.peak_flops = flops_per_s;
  nr.datasheet_peak_flops = peak.flops_per_s;
  nr.flops = work.flops;
  nr.bytes = work.bytes;
  nr.compute_dtype = work.compute_dtype;
  nr.compute_us = nr.flops / flops_per_s * 1e6;
  if (const std::optional<PricedCurve> priced = curve_for(work, peak, device, ceilings)) {
    const KernelCurve& curve = priced->curve;
    // Inside a whole model's graph the work (K loop, math or traffic) runs longer than the curve's
    // replays of the kernel alone; the fixed cost does not.
    const double scale = ceilings.work_scale;
    if (curve.tflops > 0) nr.compute_us = curve.compute_us(priced->flops) * scale;
    nr.memory_us = curve.memory_us(priced->bytes, priced->k) * scale;
    nr.overhead_us = curve.fixed_us + (curve.latency_us(priced->k) - curve.fixed_us) * scale;
    nr.intensity = nr.bytes > 0 ? nr.flops / nr.bytes : 0;
    nr.attainable_flops = nr.bytes > 0 ? std::min(flops_per_s, nr.intensity * bandwidth) : flops_per_s;
    nr.bound = (nr.flops > 0 && nr.compute_us >= nr.memory_us) ? Bound::kCompute : Bound::kMemory;
    if (nr.overhead_us > std::max(nr.compute_us, nr.memory_us)) nr.bound = Bound::kOverhead;
    nr.predicted_us = nr.overhead_us + curve.throughput_us(nr.compute_us, nr.memory_us) + ceilings.curve_gap_us;
    return;
  }
  if (work.group && work.matrix && device.kind == "gpu" && peak.path == MathPath::kTensor) {
    const SmArray sms{device.compute_units, flops_per_s, ceilings.bandwidth_bytes_per_s};
    nr.compute_us = std::max(nr.compute_us, tiled_matrix_us(*work.group, *work.analysis, sms));
  }
  nr.memory_us = nr.bytes / bandwidth * 1e6;
  nr.overhead_us = ceilings.overhead_us;
  nr.intensity = nr.bytes > 0 ? nr.flops / nr.bytes : 0;
  nr.attainable_flops = nr.bytes > 0 ? std::min(flops_per_s, nr.intensity * bandwidth) : flops_per_s;
  // At or past the ridge point (peak / bandwidth) the math takes at least as long as the traffic.
  nr.bound = (nr.flops > 0 && nr.compute_us >= nr.memory_us) ? Bound::kCompute : Bound::kMemory;
  if (nr.overhead_us > std::max(nr.compute_us, nr.memory_us)) nr.bound = Bound::kOverhead;
  nr.predicted_us = std::max({nr.compute_us, nr.memory_us, nr.overhead_us}) + ceilings.gap_us;
}

// A group whose library call leaves members to a kernel after it (runs_library_tail):
// the conv or GEMM as written (its own operands and output, the weights included), plus the chain's
// traffic (the product's output read back, the group's other inputs, its outputs written) and the
// calibrated gap before it (a second kernel in the graph), without a fixed cost of its own.
// Measured on the zoo's tuned families, such a chain replayed alone takes about 1.2 us beyond its
// traffic, well under a standalone pointwise kernel's fixed cost and gap (docs/roofline.md). Only
// where calibrated curves time library kernels.
void place_library_call_and_chain(const KernelWork& work, const Device& device, const Ceilings& ceilings,
                                  const std::string& dtype, NodeRoofline& nr) {
  const NodeAnalysis& product = *work.anchor;
  const RecastBytes b = recast_node_bytes_split(product, dtype);
  KernelWork library{product.cost.flops, b.read + b.written, true, work.compute_dtype};
  library.anchor = &product;
  library.kernel = work.kernel;
  KernelWork chain{std::max(0.0, work.flops - product.cost.flops), std::max(0.0, work.bytes - b.read) + b.written, false,
                   work.compute_dtype};
  chain.anchor = &product;
  chain.kernel.cls = KernelClass::kPointwise;
  NodeRoofline a, p;
  place(library, device, ceilings, a);
  place(chain, device, ceilings, p);
  place(work, device, ceilings, nr);  // the group's own figures: path, peak, intensity
  nr.compute_us = a.compute_us + p.compute_us;
  nr.memory_us = a.memory_us + p.memory_us;
  nr.overhead_us = a.overhead_us;
  nr.predicted_us = a.predicted_us + std::max(p.compute_us, p.memory_us) + ceilings.gap_us;
  nr.bound = (nr.flops > 0 && nr.compute_us >= nr.memory_us) ? Bound::kCompute : Bound::kMemory;
  if (nr.overhead_us > std::max(nr.compute_us, nr.memory_us)) nr.bound = Bound::kOverhead;
}

void count(const NodeRoofline& nr, RooflineTotals& t) {
  if (!nr.launches) return;
  t.predicted_latency_ms += nr.predicted_us / 1e3;
  t.flops += nr.flops;
  t.bytes += nr.bytes;
  ++t.launches;
  ++(nr.bound == Bound::kCompute ? t.compute_bound : nr.bound == Bound::kOverhead ? t.overhead_bound : t.memory_bound);
}

void set_shares(std::vector<NodeRoofline>& kernels, const RooflineTotals& t) {
  const double total_us = t.predicted_latency_ms * 1e3;
  for (auto& k : kernels) k.share = total_us > 0 ? k.predicted_us / total_us : 0;
}

void place_nodes(const Analysis& analysis, const Device& device, const RooflineOptions& options, RooflineReport& r) {
  r.nodes.resize(analysis.nodes.size());
  for (size_t i = 0; i < analysis.nodes.size(); ++i) {
    const NodeAnalysis& na = analysis.nodes[i];
    NodeRoofline& nr = r.nodes[i];
    nr.costed = na.cost.known;
    if (!nr.costed) {
      ++r.totals.uncosted;
      continue;
    }
    KernelWork work{na.cost.flops, recast_node_bytes(na, options.dtype),
                    is_matrix_op(na.node->op_type, na.node->domain) || na.cost.macs > 0,
                    node_compute_dtype(na, options.dtype)};
    work.anchor = &na;
    work.kernel = node_kernel(na);
    nr.flops = work.flops;
    nr.bytes = work.bytes;
    nr.compute_dtype = work.compute_dtype;
    nr.folded = is_folded(na);
    if (nr.folded || (nr.flops <= 0 && nr.bytes <= 0)) {  // folded, reinterpreting or empty: no kernel runs
      ++r.totals.no_bound;
      if (nr.folded) ++r.totals.folded;
      continue;
    }
    place(work, device, r.ceilings, nr);
    count(nr, r.totals);
  }
  set_shares(r.nodes, r.totals);
}

// A product whose math outlasts its traffic, as the deployed LLM step counts one (its fixed cost
// may still be the largest term).
bool is_compute_bound_product(const FusedGroup& g, const NodeRoofline& gr) {
  const KernelClass c = g.kernel.cls;
  return gr.launches && gr.flops > 0 && gr.compute_us >= gr.memory_us && (c == KernelClass::kGemm || c == KernelClass::kConv1x1);
}

// An attention kernel launched right after or right before a compute-bound product runs while the
// GPU sits at its power limit: its work takes the device's attention_load_scale longer than the
// curve, which times it alone (docs/roofline.md; the deployed LLM step prices its prefill
// attention the same way).
void load_attention_between_products(const FusionPlan& plan, const Ceilings& ceilings, std::vector<NodeRoofline>& groups) {
  if (!(ceilings.attention_load_scale > 1)) return;
  std::vector<size_t> launched;
  for (size_t k = 0; k < groups.size(); ++k)
    if (groups[k].launches) launched.push_back(k);
  for (size_t i = 0; i < launched.size(); ++i) {
    const size_t k = launched[i];
    if (plan.groups[k].kernel.cls != KernelClass::kAttention || plan.groups[k].library_tail) continue;
    auto product = [&](size_t j) { return is_compute_bound_product(plan.groups[launched[j]], groups[launched[j]]); };
    if (!((i > 0 && product(i - 1)) || (i + 1 < launched.size() && product(i + 1)))) continue;
    NodeRoofline& a = groups[k];
    const double work = std::max(a.compute_us, a.memory_us);
    a.compute_us *= ceilings.attention_load_scale;
    a.memory_us *= ceilings.attention_load_scale;
    a.predicted_us += (ceilings.attention_load_scale - 1) * work;
  }
}

void place_groups(const Analysis& analysis, const Device& device, const RooflineOptions& options, RooflineReport& r) {
  r.groups.resize(r.fusion->groups.size());
  r.deployed.uncosted = r.totals.uncosted;
  r.deployed.folded = r.totals.folded;
  for (size_t k = 0; k < r.groups.size(); ++k) {
    const FusedGroup& g = r.fusion->groups[k];
    NodeRoofline& gr = r.groups[k];
    gr.costed = g.costed;
    KernelWork work{g.flops, recast_group_bytes(g, analysis, options.dtype), g.matrix,
                    node_compute_dtype(analysis.nodes[g.anchor], options.dtype), &g, &analysis, &analysis.nodes[g.anchor]};
    work.kernel = g.kernel;
    if (!g.launches || (work.flops <= 0 && work.bytes <= 0)) {
      ++r.deployed.no_bound;
      continue;
    }
    const double element_bytes = dtype_name_bytes(work.compute_dtype);
    const bool tail = runs_library_tail(g, element_bytes);
    if (tail && r.ceilings.achievable && !r.ceilings.kernel_curves.empty())
      place_library_call_and_chain(work, device, r.ceilings, options.dtype, gr);
    else
      place(work, device, r.ceilings, gr);
    // Vector work after the K loop that the product's curve does not time.
    const double epilogue_us = gelu_epilogue_us(g, device, element_bytes, r.ceilings.achievable) * r.ceilings.work_scale;
    gr.compute_us += epilogue_us;
    gr.predicted_us += epilogue_us;
    gr.library_tail = tail;
  }
  load_attention_between_products(*r.fusion, r.ceilings, r.groups);
  for (const NodeRoofline& gr : r.groups) count(gr, r.deployed);
  set_shares(r.groups, r.deployed);
}

std::string model_stem(const Analysis& analysis) {
  if (!analysis.model || analysis.model->path.empty()) return "model";
  return std::filesystem::path(analysis.model->path).stem().string();
}

std::string format_ms(double ms) { return fmt::format("{:.3g} ms", ms); }

// The kernels of the view with the op type that names them: a node's own op, a group's anchor op.
struct VerdictKernel {
  const NodeRoofline* roofline;
  const Node* node;
  bool matrix;
};

std::vector<VerdictKernel> view_kernels(const Analysis& analysis, const RooflineReport& r) {
  std::vector<VerdictKernel> out;
  if (r.view == "deployed") {
    for (size_t k = 0; k < r.groups.size(); ++k) {
      const FusedGroup& g = r.fusion->groups[k];
      out.push_back({&r.groups[k], analysis.nodes[g.anchor].node, g.matrix});
    }
    return out;
  }
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const Node* n = analysis.nodes[i].node;
    out.push_back({&r.nodes[i], n, is_matrix_op(n->op_type, n->domain) || analysis.nodes[i].cost.macs > 0});
  }
  return out;
}

std::string make_verdict(const Analysis& analysis, const RooflineReport& r, const RooflineOptions& options) {
  // The op type that takes the most predicted time among matrix ops (Conv in a CNN, MatMul in a
  // transformer), or among all ops when the model has none.
  const std::vector<VerdictKernel> kernels = view_kernels(analysis, r);
  std::map<std::string, double> time_by_op;
  std::map<std::string, std::map<Bound, size_t>> counts;
  bool any_matrix = false;
  for (const auto& k : kernels) any_matrix = any_matrix || (k.roofline->costed && k.roofline->launches && k.matrix);
  for (const auto& k : kernels) {
    if (!k.roofline->costed || !k.roofline->launches || (any_matrix && !k.matrix)) continue;
    time_by_op[k.node->op_type] += k.roofline->predicted_us;
    ++counts[k.node->op_type][k.roofline->bound];
  }
  const bool deployed = r.view == "deployed";
  std::string head = options.model_name.empty() ? model_stem(analysis) : options.model_name;
  head += " on " + r.device->name + ", " + r.dtype;
  if (r.batch > 0) head += fmt::format(", batch {}", r.batch);
  std::string body;
  if (!time_by_op.empty()) {
    auto top = std::max_element(time_by_op.begin(), time_by_op.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    auto& c = counts[top->first];
    const size_t n = c[Bound::kCompute] + c[Bound::kMemory] + c[Bound::kOverhead];
    body = fmt::format("{} of {} {} {} memory-bound", c[Bound::kMemory], n, top->first, deployed ? "kernels" : "layers");
    if (c[Bound::kOverhead]) body += fmt::format(", {} overhead-bound", c[Bound::kOverhead]);
    body += "; ";
  }
  const double other_ms = deployed ? r.totals.predicted_latency_ms : r.deployed.predicted_latency_ms;
  body += "predicted " + format_ms(r.latency_ms()) + (deployed ? " deployed" : " as written");
  body += " (" + format_ms(other_ms) + (deployed ? " as written)" : " deployed)");
  if (r.totals.uncosted) body += fmt::format(" ({} uncosted nodes not included)", r.totals.uncosted);
  // A planner must know when the GPU was never measured: its timings are carried over.
  if (r.ceilings.calibration.rfind("derived", 0) == 0) body += "; kernel timings " + r.ceilings.calibration;
  return head + ": " + body;
}

std::string dominant_dtype(const RooflineReport& r) {
  std::map<std::string, double> flops_by_dtype;
  for (const auto& nr : r.nodes)
    if (nr.launches) flops_by_dtype[nr.compute_dtype] += nr.flops;
  if (flops_by_dtype.empty()) return "fp32";
  return std::max_element(flops_by_dtype.begin(), flops_by_dtype.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

// One roof per (path, dtype) some kernel of the view uses.
std::vector<Roof> roofs_in_use(const std::vector<NodeRoofline>& kernels, double bandwidth) {
  std::map<std::pair<int, std::string>, Roof> roofs;
  for (const auto& k : kernels) {
    if (!k.launches) continue;
    Roof& roof = roofs[{static_cast<int>(k.path), k.peak_dtype}];
    roof.path = k.path;
    roof.dtype = k.peak_dtype;
    roof.peak_flops = k.peak_flops;
    roof.datasheet_peak_flops = k.datasheet_peak_flops;
    roof.ridge_intensity = k.peak_flops / bandwidth;
    ++roof.nodes;
  }
  std::vector<Roof> out;
  for (auto& [key, roof] : roofs) out.push_back(roof);
  std::sort(out.begin(), out.end(), [](const Roof& a, const Roof& b) { return a.peak_flops > b.peak_flops; });
  return out;
}

}  // namespace

RooflineReport compute_roofline(const Analysis& analysis, const Device& device, const RooflineOptions& options) {
  check_dtype_option(options.dtype);
  check_view_option(options.view);
  if (!(device.bandwidth_bytes_per_s() > 0)) throw Error(kExitUsage, "device '" + device.id + "' has no memory bandwidth figure");
  RooflineReport r;
  r.device = &device;
  r.batch = options.batch;
  r.recast_dtype = options.dtype;
  r.view = options.view;
  r.ceilings = ceilings_of(device, options.datasheet);
  r.fusion = options.fusion ? options.fusion : std::make_shared<const FusionPlan>(fuse(analysis));
  place_nodes(analysis, device, options, r);
  place_groups(analysis, device, options, r);
  r.roofs = roofs_in_use(r.view == "deployed" ? r.groups : r.nodes, r.ceilings.bandwidth_bytes_per_s);
  r.dtype = options.dtype.empty() ? dominant_dtype(r) : options.dtype;
  r.verdict = make_verdict(analysis, r, options);
  return r;
}

}  // namespace modelcost
