// The kernel plan: the closed set of kernel classes a runtime launches, and the class and shape
// of each kernel the fusion stage plans (docs/fusion.md, "Kernel plan"). The roofline prices each
// class with one model and measurement runs each with one runner: a switch over KernelClass with no
// default case makes the compiler name any class a consumer forgets.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "modelcost/analysis.h"
#include "modelcost/runtime_limits.h"

namespace modelcost {

enum class KernelClass : uint8_t {
  kNone,          // runs nothing: folded, reinterpreting or empty
  kGemm,          // matrix products (MatMul, Gemm, Einsum, fused and quantized forms), batched or not
  kConv,          // dense convolution with a window larger than one pixel
  kConv1x1,       // 1x1 convolution: one GEMM over the pixels
  kGroupedConv,   // groups > 1 with several channels per group
  kDepthwise,     // one input channel per group: a window sum per channel (K = the taps)
  kAttention,     // one fused attention kernel: scores, softmax, mask and the value product
  kPointwise,     // a chain of elementwise work
  kReduction,     // a reduction (reduce, softmax, cumulative) with its pointwise prologue and epilogue
  kNorm,          // a normalisation: row statistics with their prologue and epilogue
  kPooling,       // window and global pooling
  kLayoutCopy,    // a copy that changes layout: transpose, concat, slice, pad, tile
  kGatherScatter, // indexed reads and writes
  kOther,         // runs alone: resize, sort, selection, control flow, sequence and ml ops
};
constexpr KernelClass kAllKernelClasses[] = {
    KernelClass::kNone,      KernelClass::kGemm,      KernelClass::kConv,      KernelClass::kConv1x1,
    KernelClass::kGroupedConv, KernelClass::kDepthwise, KernelClass::kAttention, KernelClass::kPointwise,
    KernelClass::kReduction, KernelClass::kNorm,      KernelClass::kPooling,   KernelClass::kLayoutCopy,
    KernelClass::kGatherScatter, KernelClass::kOther};
const char* kernel_class_name(KernelClass c);  // "gemm", "conv1x1", "grouped_conv", ...
bool kernel_class_is_matrix(KernelClass c);    // gemm, the convs and attention: a K loop and a FLOP term

// One kernel's class and the parameters its time depends on beyond its FLOPs and bytes.
struct KernelShape {
  KernelClass cls = KernelClass::kNone;
  double k = 0;            // reduction length: a GEMM's K, a conv's input channels per group x taps,
                           // a depthwise conv's taps, attention's key length
  double n = 0;            // GEMMs: output columns (0: unknown)
  double rows = 0;         // GEMMs and convs: rows of a single product, the batch times the output
                           // pixels for a conv (0: unknown, or several products)
  double taps = 0;         // convolutions: window elements
  double dilation = 1;     // convolutions: the window's largest dilation
  double group_width = 0;  // grouped convolutions: output channels per group
  double groups = 0;       // grouped and depthwise convolutions
  double math_padding = 1; // the math the kernel does over the math counted: attention of a head
                           // size its kernel pads (48 runs as 64: 4/3)
  bool swish_epilogue = false;  // depthwise convs: SiLU applied in the same kernel (a tactic of its own)
};

// Whether library kernels tile the shape well, which decides the curve that prices it and the one
// calibrate's sample of it fits (docs/roofline.md, "Unaligned shapes"): a GEMM or 1x1 conv whose N
// and K are whole 16-byte units (what TMA loads and vectorised stores need); a dense conv whose
// channels in and out are multiples of 32 (cuDNN's Hopper conv tiles; an image stem's 3 input
// channels are padded by an extra kernel first) and whose window is not dilated (a dilated window
// gathers its implicit GEMM's rows from scattered pixels); a grouped conv whose channels per group
// are that or a power of two (its narrow group tiles). Other classes, and dimensions not known,
// count as aligned.
bool tile_aligned(const KernelShape& kernel, double element_bytes);

// The kernel curve a kernel of this shape is priced by first and a calibrate call of it is fitted
// to: its class's, "<class>_unaligned" where tile_aligned says no, "conv_dilated" for a dense conv
// of a dilated window (its own curve: the gathered pixels cost more than the channel counts say),
// "pointwise" for a depthwise window of one tap (a per-channel scale and bias: a stream),
// "depthwise_dilated" for a depthwise conv of a dilated window (it runs other, slower kernels),
// "depthwise_swish" for a depthwise conv with its SiLU in the kernel (cuDNN's runtime fusion
// runs conv + bias + SiLU as one grouped kernel that neither the conv alone nor another
// activation reaches; docs/roofline.md), "decode_gemm_m1" for a product of one row (a classifier
// or a squeeze-excite 1x1 conv at batch 1: a stream of its weights, as a decode step's products are).
std::string kernel_curve_name(const KernelShape& kernel, double element_bytes);

// `count` independent GEMMs of M x N outputs, each summing over K (groups, heads, batch).
struct GemmShape {
  double m = 0, n = 0, k = 0, count = 1;
};
// The GEMMs a matrix node runs; empty when its shapes are unknown or it has none (depthwise).
std::vector<GemmShape> gemm_shapes(const NodeAnalysis& node);

// The kernel one node runs as written.
KernelShape node_kernel(const NodeAnalysis& node);

}  // namespace modelcost
