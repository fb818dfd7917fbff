// What a node computes, decoded once from its spec into the handful of operation kinds the
// runners implement (CPU reference and CUDA alike): elementwise with broadcast strides, strided
// copies (Transpose, Slice, Concat, Split, Expand, Pad, scalar Gather), Gather, reductions,
// softmax, layer norm, batch norm, pooling, convolution, matrix products, resize and Where. A
// node it cannot decode gets a reason string instead. Split by family: op_plan_*.cpp.
#pragma once
#include <string>
#include <vector>

#include "measure/node_spec.h"

namespace modelcost {

enum class OpKind {
  kUnsupported, kZeroCost, kUnary, kBinary, kCopy, kGather, kReduce, kSoftmax, kLayerNorm, kPool,
  kConv, kMatMul, kResize, kWhere, kBatchNorm
};

enum class UnaryOp {
  kIdentity, kRelu, kSigmoid, kTanh, kErf, kExp, kLog, kSqrt, kNeg, kAbs, kReciprocal, kGelu, kGeluTanh,
  kHardSigmoid, kHardSwish, kLeakyRelu, kClip, kSoftplus, kSilu, kElu, kFloor, kCeil
};
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu };
enum class ReduceOp { kSum, kMean, kMax, kMin, kSumSquare, kL2, kL1, kLogSumExp };

constexpr int kMaxCopyRank = 8;

// dims iterated in row-major order; element i of the iteration reads src[src_offset + sum(idx*src_stride)]
// and writes dst[dst_offset + sum(idx*dst_stride)] (strides in elements).
struct StridedCopy {
  int input = 0, output = 0;
  std::vector<int64_t> dims, src_strides, dst_strides;
  int64_t src_offset = 0, dst_offset = 0;
  double elements() const;
  void merge_dims();  // folds adjacent dims that are contiguous in both source and destination
};

struct ConvParams {
  int spatial = 2;                      // 1, 2 or 3 spatial dims
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::vector<int64_t> in_size, kernel, out_size, strides, dilations, pads;  // pads: begin then end
  bool has_bias = false;
};

struct PoolParams {
  bool max = true;
  bool global = false;
  bool count_include_pad = false;
  std::vector<int64_t> kernel, strides, pads;  // pads: begin then end
};

// out[b] (M x N) = alpha * op(A[b]) (M x K) * op(B[b]) (K x N) + beta * bias, row-major.
struct MatMulParams {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t a_batch_stride = 0, b_batch_stride = 0;  // elements; 0 = one matrix broadcast over the batch
  bool trans_a = false, trans_b = false;
  double alpha = 1, beta = 0;
  enum class Bias { kNone, kRow, kFull, kScalar, kColumn } bias = Bias::kNone;  // kRow: [N] over rows
};

struct OpPlan {
  OpKind kind = OpKind::kUnsupported;
  std::string reason;     // kUnsupported / kZeroCost: why
  UnaryOp unary = UnaryOp::kIdentity;
  BinaryOp binary = BinaryOp::kAdd;
  double alpha = 0, beta = 0;  // unary parameters (LeakyRelu alpha, Clip min/max, HardSigmoid alpha/beta)
  // Elementwise (Where: condition, x, y): output dims and each input's strides over them (0 = broadcast).
  // A kUnary whose input and output dtypes differ is a Cast between float types.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> input_strides;
  // Copies.
  std::vector<StridedCopy> copies;
  bool fill_output = false;
  double fill_value = 0;
  // Gather / reduce / softmax / layer norm / batch norm: [outer, n, inner] with n the gathered,
  // reduced or channel axis.
  int64_t outer = 1, axis_len = 1, inner = 1, indices = 0;
  ReduceOp reduce = ReduceOp::kSum;
  bool log_softmax = false;
  double epsilon = 1e-5;
  bool has_scale = false, has_bias = false;  // layer norm
  ConvParams conv;
  PoolParams pool;
  MatMulParams matmul;
  // Resize (4-D NCHW): nearest or linear, half_pixel or asymmetric/align_corners coordinates.
  bool resize_linear = false;
  std::string coordinate_mode;
  std::string nearest_mode;
};

OpPlan plan_operation(const NodeSpec& spec);

// Contiguous row-major strides of a shape (elements).
std::vector<int64_t> contiguous_strides(const Shape& shape);
// Strides of `shape` read as if broadcast to `target` (numpy rules): 0 on broadcast dims.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target);

}  // namespace modelcost
