// The kernel plan's classes (include/modelcost/kernel_plan.h): which class of kernel a node or a
// fused group runs as, read from the op's traits and its shapes.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "modelcost/fusion.h"
#include "fusion/tensor_access.h"
#include "ops/op_registry.h"

namespace modelcost {

int64_t fusion::int_attribute(const Node& node, const char* name, int64_t fallback) {
  if (!node.proto) return fallback;
  for (const auto& a : node.proto->attribute())
    if (a.name() == name && a.has_i()) return a.i();
  return fallback;
}

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::kNone: return "none";
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kConv: return "conv";
    case KernelClass::kConv1x1: return "conv1x1";
    case KernelClass::kGroupedConv: return "grouped_conv";
    case KernelClass::kDepthwise: return "depthwise";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kPointwise: return "pointwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kPooling: return "pooling";
    case KernelClass::kLayoutCopy: return "layout_copy";
    case KernelClass::kGatherScatter: return "gather_scatter";
    case KernelClass::kOther: return "other";
  }
  return "none";
}

bool kernel_class_is_matrix(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
    case KernelClass::kConv:
    case KernelClass::kConv1x1:
    case KernelClass::kGroupedConv:
    case KernelClass::kDepthwise:
    case KernelClass::kAttention: return true;
    case KernelClass::kNone:
    case KernelClass::kPointwise:
    case KernelClass::kReduction:
    case KernelClass::kNorm:
    case KernelClass::kPooling:
    case KernelClass::kLayoutCopy:
    case KernelClass::kGatherScatter:
    case KernelClass::kOther: return false;
  }
  return false;
}

namespace {

// Window elements from the kernel_shape attribute, else from an OIHW weight (input 1).
double conv_taps(const NodeAnalysis& node) {
  if (node.node->proto)
    for (const auto& a : node.node->proto->attribute())
      if (a.name() == "kernel_shape" && a.ints_size() > 0) {
        double taps = 1;
        for (int64_t v : a.ints()) taps *= static_cast<double>(std::max<int64_t>(v, 1));
        return taps;
      }
  const TensorInfo* w = fusion::shaped_operand(node, 1, false);
  return w && w->shape.size() >= 3 ? fusion::dims_product(w->shape, 2, w->shape.size()) : 0;
}

// The largest of the dilations attribute's values (1 without it).
double conv_dilation(const Node& node) {
  double largest = 1;
  if (node.proto)
    for (const auto& a : node.proto->attribute())
      if (a.name() == "dilations")
        for (int64_t v : a.ints()) largest = std::max(largest, static_cast<double>(v));
  return largest;
}

// K of a matrix node when its GEMM shapes are unknown: its MACs over its output elements.
double k_from_outputs(const NodeAnalysis& node) {
  const TensorInfo* y = fusion::shaped_operand(node, 0, true);
  const double out = y ? fusion::dims_product(y->shape, 0, y->shape.size()) : 0;
  return out > 0 && node.cost.macs > 0 ? node.cost.macs / out : 0;
}

// The rows of a node's one product (KernelShape::rows): 0 where it runs several or none is known.
double single_product_rows(const std::vector<GemmShape>& gemms) {
  return gemms.size() == 1 && gemms.front().count == 1 ? gemms.front().m : 0;
}

KernelShape conv_kernel(const NodeAnalysis& node) {
  KernelShape s;
  s.taps = conv_taps(node);
  s.dilation = conv_dilation(*node.node);
  s.groups = static_cast<double>(std::max<int64_t>(fusion::int_attribute(*node.node, "group", 0), 0));
  const TensorInfo* x = fusion::shaped_operand(node, 0, false);
  const TensorInfo* w = fusion::shaped_operand(node, 1, false);
  if (s.groups == 0 && x && w && x->shape.size() >= 2 && w->shape.size() >= 2)  // no attribute: NCHW operands
    s.groups = std::max(1.0, std::floor(static_cast<double>(x->shape[1]) / static_cast<double>(w->shape[1])));
  s.groups = std::max(1.0, s.groups);
  const std::vector<GemmShape> gemms = gemm_shapes(node);
  s.k = gemms.empty() ? k_from_outputs(node) : gemms.front().k;
  s.rows = single_product_rows(gemms);
  const TensorInfo* y = fusion::shaped_operand(node, 0, true);
  const double out_channels = y && y->shape.size() >= 2 ? static_cast<double>(y->shape[1]) : 0;
  s.group_width = s.groups > 0 ? out_channels / s.groups : 0;
  if (s.groups > 1 && s.k > 0 && s.taps > 0 && s.k <= s.taps && s.group_width <= 1) {
    s.cls = KernelClass::kDepthwise;  // one input and one output channel per group
    s.k = s.taps;
  } else if (s.groups > 1) {
    s.cls = KernelClass::kGroupedConv;
  } else {
    s.cls = s.taps == 1 ? KernelClass::kConv1x1 : KernelClass::kConv;
  }
  return s;
}

}  // namespace

KernelShape node_kernel(const NodeAnalysis& node) {
  if (!node.node) return {};
  OpForm form = op_traits(node.node->domain, node.node->op_type).form;
  if (form == OpForm::kUnset) form = node.cost.macs > 0 ? OpForm::kGemm : OpForm::kOther;
  KernelShape s;
  switch (form) {
    case OpForm::kConv: return conv_kernel(node);
    case OpForm::kGemm: {
      const std::vector<GemmShape> gemms = gemm_shapes(node);
      s.cls = KernelClass::kGemm;
      s.k = gemms.empty() ? k_from_outputs(node) : gemms.front().k;
      s.n = gemms.empty() ? 0 : gemms.front().n;
      s.rows = single_product_rows(gemms);
      return s;
    }
    case OpForm::kAttention:
      // Two products per output element (scores and values), each over the key length.
      s.cls = KernelClass::kAttention;
      s.k = k_from_outputs(node) / 2;
      return s;
    case OpForm::kPointwise: s.cls = KernelClass::kPointwise; return s;
    case OpForm::kReduction: s.cls = KernelClass::kReduction; return s;
    case OpForm::kNorm: s.cls = KernelClass::kNorm; return s;
    case OpForm::kPooling: s.cls = KernelClass::kPooling; return s;
    case OpForm::kLayout: s.cls = KernelClass::kLayoutCopy; return s;
    case OpForm::kGather:
    case OpForm::kScatter: s.cls = KernelClass::kGatherScatter; return s;
    case OpForm::kUnset:
    case OpForm::kOther: s.cls = KernelClass::kOther; return s;
  }
  return s;
}

namespace {

bool whole_units(double elements, double element_bytes) {
  return !(elements > 0) || std::fmod(elements * element_bytes, 16) == 0;
}

bool conv_channels_tile(double channels, bool grouped) {
  if (!(channels > 0)) return true;
  const double c = std::round(channels);
  const auto n = static_cast<uint64_t>(c);
  return std::fmod(c, 32) == 0 || (grouped && (n & (n - 1)) == 0);
}

}  // namespace

bool tile_aligned(const KernelShape& kernel, double element_bytes) {
  switch (kernel.cls) {
    case KernelClass::kGemm: return whole_units(kernel.n, element_bytes) && whole_units(kernel.k, element_bytes);
    case KernelClass::kConv1x1: return whole_units(kernel.group_width, element_bytes) && whole_units(kernel.k, element_bytes);
    case KernelClass::kConv:
    case KernelClass::kGroupedConv: {
      const bool grouped = kernel.cls == KernelClass::kGroupedConv;
      if (kernel.dilation > 1) return false;
      return conv_channels_tile(kernel.group_width, grouped) &&
             (!(kernel.taps > 0) || conv_channels_tile(kernel.k / kernel.taps, grouped));
    }
    case KernelClass::kNone:
    case KernelClass::kDepthwise:
    case KernelClass::kAttention:
    case KernelClass::kPointwise:
    case KernelClass::kReduction:
    case KernelClass::kNorm:
    case KernelClass::kPooling:
    case KernelClass::kLayoutCopy:
    case KernelClass::kGatherScatter:
    case KernelClass::kOther: return true;
  }
  return true;
}

std::string kernel_curve_name(const KernelShape& kernel, double element_bytes) {
  // A depthwise window of one tap is a per-channel scale and bias: it streams its input to its
  // output as a pointwise kernel does, with none of a window's reuse to pay for.
  if (kernel.cls == KernelClass::kDepthwise && kernel.k > 0 && kernel.k <= 1) return "pointwise";
  if (kernel.cls == KernelClass::kDepthwise && kernel.swish_epilogue) return "depthwise_swish";
  // A dilated depthwise window runs other, slower kernels (not the register-blocked one; the row
  // kernels a phase at a time).
  if (kernel.cls == KernelClass::kDepthwise && kernel.dilation > 1) return "depthwise_dilated";
  // One row: a matrix-vector product, which the runtime runs as a stream of the weights (the
  // skinny kernel or cuBLASLt, the faster), as calibrate times a decode step's one-row products.
  const bool product = kernel.cls == KernelClass::kGemm || kernel.cls == KernelClass::kConv1x1;
  if (product && kernel.rows == 1) return "decode_gemm_m1";
  const std::string base = kernel_class_name(kernel.cls);
  if (kernel.cls == KernelClass::kConv && kernel.dilation > 1) return base + "_dilated";
  return tile_aligned(kernel, element_bytes) ? base : base + "_unaligned";
}

namespace {

// Whether `label` ("conv+bias+silu") names `part` as one of its '+'-separated parts.
bool has_label_part(const std::string& label, const std::string& part) {
  size_t begin = 0;
  while (begin <= label.size()) {
    const size_t end = std::min(label.find('+', begin), label.size());
    if (label.compare(begin, end - begin, part) == 0) return true;
    begin = end + 1;
  }
  return false;
}

// Which member class names a group without a matrix member: the one that bounds how the kernel
// is written (a norm's two passes over a reduction's one over pooling windows over a pointwise map).
int weight(KernelClass c) {
  switch (c) {
    case KernelClass::kNorm: return 7;
    case KernelClass::kReduction: return 6;
    case KernelClass::kPooling: return 5;
    case KernelClass::kOther: return 4;
    case KernelClass::kGatherScatter: return 3;
    case KernelClass::kPointwise: return 2;
    case KernelClass::kLayoutCopy: return 1;
    case KernelClass::kNone:
    case KernelClass::kGemm:
    case KernelClass::kConv:
    case KernelClass::kConv1x1:
    case KernelClass::kGroupedConv:
    case KernelClass::kDepthwise:
    case KernelClass::kAttention: return 0;
  }
  return 0;
}

}  // namespace

KernelShape group_kernel(const FusedGroup& group, const Analysis& analysis) {
  if (group.pattern == "attention") {
    KernelShape s;
    s.cls = KernelClass::kAttention;
    for (size_t member : group.members) {
      const std::vector<GemmShape> gemms = gemm_shapes(analysis.nodes[member]);  // the first product: Q K^T
      if (!gemms.empty()) {
        s.k = gemms.front().n;
        const double d = gemms.front().k;
        if (flash_attention_head_size(static_cast<int64_t>(d)))
          s.math_padding = static_cast<double>(flash_attention_padded_head_size(static_cast<int64_t>(d))) / d;
        break;
      }
    }
    return s;
  }
  KernelShape anchor = node_kernel(analysis.nodes[group.anchor]);
  if (group.pattern == "sibling_products") anchor.rows = 0;  // several products in one batched call
  if (anchor.cls == KernelClass::kDepthwise) anchor.swish_epilogue = has_label_part(group.label, "silu");
  if (kernel_class_is_matrix(anchor.cls)) return anchor;
  // A spelled-out norm (ReduceMean, Sub, Pow, ... or Mul by a Sigmoid over a pooled mean) is a norm.
  if (group.label.find("norm") != std::string::npos) return {KernelClass::kNorm};
  KernelShape best = anchor;
  for (size_t member : group.members) {
    const KernelShape s = node_kernel(analysis.nodes[member]);
    if (weight(s.cls) > weight(best.cls)) best = s;
  }
  return best;
}

}  // namespace modelcost
