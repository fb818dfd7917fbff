// The measured kinds: what a node computes, in the form the measurement runners implement (CPU
// reference and CUDA alike). Pure data, so that each op rule can name the builder of its plan
// beside its shape and cost rule (op_registry.h); the measure stage runs them. The kinds are a
// closed sum type, OpPlan: every consumer dispatches with std::visit over overloaded handlers, so
// the compiler names any kind a consumer forgets.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "modelcost/tensor.h"
#include "ops/elementwise_ops.h"

namespace modelcost {

// Overloaded lambdas for std::visit.
template <class... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

constexpr int kMaxCopyRank = 8;

// Nothing runs (reinterpreting, folded or empty nodes): reason says which.
struct ZeroCostPlan { std::string reason; };
struct UnsupportedPlan { std::string reason; };

// Any elementwise op of elementwise_ops.h over the output dims; each input read through its own
// broadcast strides (0 on broadcast dims). Cast and CastLike are kIdentity between dtypes.
struct ElementwisePlan {
  ElementwiseOp op = ElementwiseOp::kIdentity;
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> input_strides;
  double alpha = 0, beta = 0;  // attribute parameters (LeakyRelu alpha, Clip bounds, ...)
};

// dims iterated in row-major order; element i of the iteration reads src[src_offset + sum(idx*src_stride)]
// and writes dst[dst_offset + sum(idx*dst_stride)] (strides in elements).
struct StridedCopy {
  int input = 0, output = 0;
  std::vector<int64_t> dims, src_strides, dst_strides;
  int64_t src_offset = 0, dst_offset = 0;
  double elements() const;
  void merge_dims();  // folds adjacent dims that are contiguous in both source and destination
};

// Transpose, Slice, Concat, Split, Expand, constant Pad, Tile, a scalar Gather.
struct CopyPlan {
  std::vector<StridedCopy> copies;
  bool fill_output = false;
  double fill_value = 0;
};

// [outer, n, inner] with n the gathered, reduced, scanned or channel axis.
struct RowView {
  int64_t outer = 1, axis_len = 1, inner = 1;
};

struct GatherPlan : RowView { int64_t indices = 0; };

enum class ReduceOp { kSum, kMean, kMax, kMin, kSumSquare, kL2, kL1, kLogSumExp, kLogSum, kProd, kArgMax, kArgMin };
struct ReducePlan : RowView {
  ReduceOp op = ReduceOp::kSum;
  bool select_last_index = false;  // ArgMax / ArgMin ties
};
struct SoftmaxPlan : RowView { bool log_softmax = false; };
struct LayerNormPlan : RowView {
  double epsilon = 1e-5;
  bool has_scale = false, has_bias = false;
};
struct BatchNormPlan : RowView { double epsilon = 1e-5; };
// InstanceNormalization and GroupNormalization over [N, C, spatial...]: statistics per (n, group)
// over the group's C / groups channels of `spatial` elements each (contiguous in NCHW); scale and
// bias per channel, or per group (GroupNormalization as opset 18 specified them).
struct GroupNormPlan {
  int64_t batch = 1, channels = 1, groups = 1, spatial = 1;
  double epsilon = 1e-5;
  bool per_group_affine = false;
};
// CumSum along the axis.
struct ScanPlan : RowView { bool exclusive = false, reverse = false; };

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

// Resize of H and W of NCHW: nearest, linear or cubic, ONNX coordinate modes.
struct ResizePlan {
  bool linear = false;
  bool cubic = false;  // 4x4 taps of ONNX's cubic convolution
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;  // cubic: taps outside the input weigh 0, the rest renormalised
  std::string coordinate_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
};

// Indexed element access over a data tensor (input 0) with an index tensor (input 1).
// GatherElements / ScatterElements: one index per element along `axis`; the iteration runs over
// index_dims (the indices' shape; the updates' too). GatherND / ScatterND: index tuples of
// tuple_dims.size() components pick slices of `slice` elements, `tuples` tuples per batch.
// The scatters first copy data to the output, then write the updates (input 2).
struct IndexedPlan {
  enum class Kind { kGatherElements, kScatterElements, kGatherND, kScatterND } kind = Kind::kGatherElements;
  std::vector<int64_t> index_dims, data_strides;  // elements kinds
  int64_t axis = 0, axis_len = 0;                 // elements kinds
  int64_t batch = 1, tuples = 0, slice = 1, batch_stride = 0;  // ND kinds
  std::vector<int64_t> tuple_dims, tuple_strides;             // ND kinds: the indexed data dims
  int64_t smallest_indexed_dim() const;           // random indices stay below it
};

// TopK along the axis: the k largest (or smallest) of each row, values and int64 indices, in
// order (ties: the lower index first).
struct TopKPlan : RowView {
  int64_t k = 1;
  bool largest = true;
};

// Pad of a mode other than constant: each output element reads the input element its mode maps
// it to, dim by dim (reflect: mirrored without the edge; edge: clamped; wrap: modulo).
struct PadPlan {
  enum class Mode { kReflect, kEdge, kWrap } mode = Mode::kReflect;
  std::vector<int64_t> in_dims, out_dims, begin;  // begin: pads before each dim
};

// Range: out[i] = start + i * delta, start and delta read from the inputs.
struct RangePlan { int64_t count = 0; };

// Einsum of two operands as one batched product: an operand whose layout is neither
// [batch, m, k] (A) / [batch, k, n] (B) nor its transpose is first packed into it; a product
// whose [batch, m, n] order is not the output's is unpacked after. loops: the naive loop nest
// the CPU reference runs instead: every index (the output's first, then the summed ones), with
// each operand's stride along it (0 where the operand lacks it or broadcasts it).
struct ContractionPlan {
  MatMulParams gemm;
  bool pack_a = false, pack_b = false, unpack_output = false;
  StridedCopy a_to_packed, b_to_packed, packed_to_output;  // used where the flag is set
  std::vector<int64_t> loop_dims, a_loop_strides, b_loop_strides;
  size_t output_rank = 0;
};

// ConvTranspose: the data gradient of the Conv from Y to X. The geometry is read from the
// ConvTranspose's side: in_size / in_channels are X's, out_size / out_channels Y's; the weight
// is [in_channels, out_channels / groups, kernel...]; pads begin then end.
struct ConvTransposePlan { ConvParams conv; };

// RNN, GRU or LSTM over [seq, batch, input] (layout 0) with the default activations; gates
// in ONNX's order (GRU: z, r, h; LSTM: i, o, f, c). reverse: a one-direction reverse layer.
struct RecurrentPlan {
  enum class Cell { kRnn, kGru, kLstm } cell = Cell::kLstm;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool reverse = false, linear_before_reset = false;
  bool has_bias = false, has_initial_h = false, has_initial_c = false, has_peepholes = false;
  int64_t gates() const { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
};

// QuantizeLinear (y = saturate(round(x / scale) + zero_point)) or DequantizeLinear
// (y = (x - zero_point) * scale) over [outer, axis_len, inner]: one scale and zero point per
// index along the axis (axis_len 1: per tensor).
struct QuantizePlan : RowView {
  bool dequantize = false;
  bool has_zero_point = false;
};

// DynamicQuantizeLinear: uint8 y, its scale and zero point from the data's range.
struct DynamicQuantizePlan { int64_t elements = 0; };

// MatMulInteger (int32 out) or QLinearMatMul (requantized to y's type): zero points per tensor
// or (MatMulInteger) per row of A / column of B. Inputs by position, -1 where the op has none.
struct IntegerMatMulPlan {
  MatMulParams gemm;  // no bias; batch strides as MatMul's
  int a = 0, b = 1, a_zero = 2, b_zero = 3, a_scale = -1, b_scale = -1, y_scale = -1, y_zero = -1;
  bool a_zero_per_row = false, b_zero_per_column = false;
  bool requantize() const { return y_scale >= 0; }
};

// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, int32
// bias; w's scale and zero point per tensor or per output channel.
struct QLinearConvPlan {
  ConvParams conv;
  bool per_channel_weight = false;
};

// RoiAlign over X [N, C, H, W] (NCHW) with rois [R, 4] (x1, y1, x2, y2) and batch_indices [R]:
// each output bin is the average (or, as ONNX Runtime, the maximum of the weighted corner values)
// of grid x grid bilinear samples (sampling_ratio, or ceil(ROI size / bins) when 0). half_pixel
// shifts the ROI by half a pixel; output_half_pixel (opset 10's only mode) does not and widens
// ROIs to at least one pixel. Whatever the data (a replay feeds computed ROIs), the adaptive grid
// stays within the analyzer's bound, an ROI covering the whole map, and batch indices are clamped
// to the batch: neither changes a valid ROI's result.
struct RoiAlignPlan {
  int64_t batches = 1, rois = 0, channels = 0, height = 0, width = 0, out_h = 1, out_w = 1, sampling_ratio = 0;
  float spatial_scale = 1;
  bool max = false, half_pixel = true;
};

// NonZero of a tensor of `dims` into int64 coordinates [rank, capacity]: the analyzer's bound of
// the non-zero count (every element). The coordinates of the non-zero elements come first in
// row-major order, the columns after them are 0, so the output has the assumed size in any run.
struct NonZeroPlan {
  std::vector<int64_t> dims;
  int64_t capacity = 0;
};

// NonMaxSuppression of boxes [batches, boxes, 4] by scores [batches, classes, boxes]: each
// (batch, class) keeps, in descending score order, up to max_per_class boxes whose IoU with every
// box kept before is at most iou_threshold (and whose score exceeds score_threshold). The output
// has the analyzer's size, batches * classes * max_per_class rows of (batch, class, box): each
// (batch, class) writes its kept boxes into its own max_per_class rows, the rest stay 0.
struct NmsPlan {
  int64_t batches = 1, classes = 1, boxes = 0, max_per_class = 0;
  float iou_threshold = 0, score_threshold = 0;
  bool has_score_threshold = false, center_point_box = false;
};

// If: the one branch (index in Node::subgraphs) the analyzer costs, run as its nodes' own kinds;
// why says how it was chosen (the known condition, or the heavier branch).
struct BranchPlan {
  int subgraph = 0;
  std::string why;
};

using OpPlan = std::variant<UnsupportedPlan, ZeroCostPlan, ElementwisePlan, CopyPlan, GatherPlan, ReducePlan,
                            SoftmaxPlan, LayerNormPlan, BatchNormPlan, GroupNormPlan, ScanPlan, PoolParams, ConvParams, MatMulParams,
                            ResizePlan, IndexedPlan, RangePlan, TopKPlan, PadPlan, ContractionPlan, ConvTransposePlan,
                            RecurrentPlan, QuantizePlan, DynamicQuantizePlan, IntegerMatMulPlan, QLinearConvPlan,
                            RoiAlignPlan, NonZeroPlan, NmsPlan, BranchPlan>;

inline bool is_zero_cost(const OpPlan& p) { return std::holds_alternative<ZeroCostPlan>(p); }
inline bool is_unsupported(const OpPlan& p) { return std::holds_alternative<UnsupportedPlan>(p); }
// The reason of a ZeroCost or Unsupported plan ("" for the others).
std::string plan_reason(const OpPlan& plan);

// Contiguous row-major strides of a shape (elements).
std::vector<int64_t> contiguous_strides(const Shape& shape);
// Strides of `shape` read as if broadcast to `target` (numpy rules): 0 on broadcast dims.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target);
// The one stride that walks dims [lead, rank) of `target` in order through `strides` (0 where
// they are all broadcast), or -1 where no single stride does: how a row kernel reads an operand
// along a row of the trailing dims.
int64_t row_stride(const std::vector<int64_t>& strides, const Shape& target, size_t lead);

}  // namespace modelcost
