// Host-side launchers of the project's own CUDA kernels (the .cu files of the kernel-family
// folders: pointwise/, index/, norm/, pool/, conv/, quantize/, recurrent/, calibrate/). Every
// launcher enqueues on the given stream and checks the launch; none synchronises.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "measure/op_plan.h"

namespace modelcost::cuda {

enum class ElementType { kFloat32, kFloat16, kBFloat16 };

// The element type of a float ONNX dtype; throws Error(kExitRuntime) for any other dtype.
ElementType element_type(int32_t onnx_dtype);
size_t element_bytes(ElementType type);

// Elementwise (elementwise.cu). Fast paths for float tensors of one dtype: unary over contiguous
// data, binary with broadcast strides.
// launch_unary: the plan's op (with its alpha, beta) over n contiguous elements; launch_binary:
// over the plan's dims, the two inputs read through its input strides.
void launch_unary(ElementType type, const ElementwisePlan& plan, const void* x, void* y, int64_t n, cudaStream_t stream);
void launch_binary(ElementType type, const ElementwisePlan& plan, const void* a, const void* b, void* y,
                   cudaStream_t stream);
// Any op of elementwise_ops.h over operands of any numeric or bool dtype (computed in float).
enum class StorageType : uint8_t { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kU16, kU32, kU64 };
// Throws Error(kExitRuntime) for a dtype no kernel stores (strings, fp8, 4-bit).
StorageType storage_type(int32_t onnx_dtype);
struct AnyOperand {
  const void* data;
  int32_t dtype;
};
void launch_elementwise_any(const ElementwisePlan& plan, const std::vector<AnyOperand>& inputs, void* output,
                            int32_t output_dtype, cudaStream_t stream);
// Conversion between float element types (Cast).
void launch_cast(ElementType from, ElementType to, const void* x, void* y, int64_t n, cudaStream_t stream);
void launch_fill(ElementType type, void* y, int64_t n, float value, cudaStream_t stream);
// Uniform random values in [lo, hi] (floats), or integers in [0, range) (int32/int64 when bytes is 4/8).
void launch_fill_random(ElementType type, void* y, int64_t n, float lo, float hi, uint64_t seed, cudaStream_t stream);
void launch_fill_random_int(void* y, int64_t n, int element_bytes, int64_t range, uint64_t seed, cudaStream_t stream);

// Data movement (copy_kernels.cu). Copies work on raw elements of 1, 2, 4 or 8 bytes.
// Pad of the reflect, edge or wrap mode: every output element reads its mapped source.
void launch_pad_mapped(int element_bytes, const PadPlan& plan, const void* src, void* dst, cudaStream_t stream);
void launch_strided_copy(int element_bytes, const void* src, void* dst, const StridedCopy& copy, cudaStream_t stream);
// Several copies as one kernel (batched_copy.cu): 2 to 32 of them, each rows of contiguous
// columns (a Concat's inputs, a Split's outputs); false, with nothing launched, where they are not.
struct BatchedCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  const StridedCopy* copy = nullptr;
};
bool launch_batched_copies(int element_bytes, const std::vector<BatchedCopy>& copies, cudaStream_t stream);
// The tensors of a gather or scatter by an index tensor: data, indices (int64 or int32), updates
// (scatters; nullptr for gathers) and the output.
struct IndexOperands {
  const void* data = nullptr;
  const void* indices = nullptr;
  bool indices_int64 = true;
  const void* updates = nullptr;
  void* y = nullptr;
};
void launch_gather(int element_bytes, const GatherPlan& plan, const IndexOperands& operands, cudaStream_t stream);
// NCHW resize of H and W (planes = N * C); coordinate modes as in ONNX.
struct ResizeGeometry {
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
};
void launch_resize(ElementType type, const ResizePlan& plan, const ResizeGeometry& geometry, const void* x, void* y,
                   cudaStream_t stream);

// Row operations over [outer, n, inner] (norm_kernels.cu).
void launch_reduce(ElementType type, const ReducePlan& plan, const void* x, void* y, cudaStream_t stream);
void launch_softmax(ElementType type, const SoftmaxPlan& plan, const void* x, void* y, cudaStream_t stream);
// The tensors of a normalization: x, the per-channel scale and bias (nullptr where a
// LayerNormalization has none), BatchNormalization's mean and variance, and y.
struct NormOperands {
  const void *x = nullptr, *scale = nullptr, *bias = nullptr, *mean = nullptr, *variance = nullptr;
  void* y = nullptr;
  void* workspace = nullptr;  // group norm's partial statistics (group_norm_workspace_bytes)
};
// Inference BatchNormalization over [outer, channels (axis_len), inner].
void launch_batch_norm(ElementType type, const BatchNormPlan& plan, const NormOperands& operands, cudaStream_t stream);
// LayerNormalization over rows (outer) of axis_len elements.
void launch_layer_norm(ElementType type, const LayerNormPlan& plan, const NormOperands& operands, cudaStream_t stream);
// InstanceNormalization / GroupNormalization over NCHW (group_norm_kernels.cu): partial statistics
// of slices of each group into the workspace, then the normalisation.
size_t group_norm_workspace_bytes(const GroupNormPlan& plan);
void launch_group_norm(ElementType type, const GroupNormPlan& plan, const NormOperands& operands, cudaStream_t stream);

// Indexed access, scans, ranges (index_kernels.cu). ArgMax / ArgMin write int64 indices.
void launch_arg_reduce(ElementType type, const ReducePlan& plan, const void* x, int64_t* y, cudaStream_t stream);
void launch_scan(ElementType type, const ScanPlan& plan, const void* x, void* y, cudaStream_t stream);
// int32 (element_bytes 4) or int64 (8) CumSum.
void launch_scan_int(int element_bytes, const ScanPlan& plan, const void* x, void* y, cudaStream_t stream);
// Element bytes 1-8.
void launch_indexed(int element_bytes, const IndexedPlan& plan, const IndexOperands& operands, cudaStream_t stream);
void launch_range(StorageType type, const void* start, const void* delta, void* y, int64_t count, cudaStream_t stream);

// The layout CUB's segmented sorts take (topk_runner.cu): index[i] = i % segment_len for the
// segments * segment_len items, and offsets[r] = r * segment_len for r <= segments.
void launch_segment_layout(int* index, int64_t* offsets, int64_t segments, int64_t segment_len, cudaStream_t stream);

// RoiAlign over NCHW maps (roi_align_kernels.cu): rois in the maps' float type, int64 batch indices.
void launch_roi_align(ElementType type, const RoiAlignPlan& plan, const void* x, const void* rois,
                      const int64_t* batch_indices, void* y, cudaStream_t stream);

// Pooling over 1-3 spatial dims with any pads (pool_kernels.cu): NCHW, or channels-last for 2-D
// windows. Spatial dims sit right-aligned in the 3 slots (1 elsewhere).
struct PoolGeometry {
  int64_t planes = 1;    // N * C
  int64_t channels = 1;  // C
  int in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1};
  int pad[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  bool max = true, count_include_pad = false;
  bool channels_last = false;  // [N, H, W, C]: 2-D windows only
};
PoolGeometry pool_geometry(const PoolParams& p, const Shape& x, const Shape& y);
void launch_pool(ElementType type, const PoolGeometry& g, const void* x, void* y, cudaStream_t stream);

// Depthwise 2-D convolution (depthwise_kernels.cu): channels-last takes weights laid out
// [KH, KW, C], NCHW the ONNX [C, 1, KH, KW]; bias may be nullptr. The epilogue runs on each
// output before the store, as a deployed one: the activation (with its alpha and beta: Identity,
// Relu, Clip, Sigmoid, Silu, HardSwish, HardSigmoid, LeakyRelu or Gelu, see
// depthwise_activation_supported), then a per-channel scale and shift (a folded BatchNorm), then
// a residual of the output's shape and layout, each where given.
struct DepthwiseEpilogue {
  ElementwiseOp activation = ElementwiseOp::kIdentity;
  float alpha = 0, beta = 0;
  const float* scale = nullptr;  // with shift: fp32, one per output channel
  const float* shift = nullptr;
  const void* residual = nullptr;
};
// Channels-last kernels: kTiled stages an output tile's input window and filters in shared memory
// (any window, stride, dilation and a multiplier dividing 32); kDirect reads them from global memory
// (row kernels for the common windows); kAuto takes the tiled kernel where it runs faster. kPixel
// and kPixelPair compute one output pixel per thread, of 16 bytes of channels or of 2 (C even):
// more threads than a row kernel's, for work too small to fill the GPU with those. kStaged stages
// the window in fp16 and computes a register block of outputs a thread (3, 5, 7 or 9 wide undilated
// windows at stride 1 or 2, channels in multiples of 8, a multiplier of 1).
enum class DepthwiseAlgorithm { kAuto, kDirect, kTiled, kPixel, kPixelPair, kStaged };
struct DepthwiseGeometry {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  DepthwiseEpilogue epilogue;
  bool channels_last = false;
  int64_t multiplier = 1;  // output channels per input channel; `channels` counts the outputs
  DepthwiseAlgorithm algorithm = DepthwiseAlgorithm::kAuto;
  int multiprocessors = 0;  // the device's SMs, which size the grids (0: the launch asks the current device)
};
struct DepthwiseOperands {
  const void *x = nullptr, *w = nullptr, *bias = nullptr;
  void* y = nullptr;
};
bool depthwise_activation_supported(ElementwiseOp op);
// True where the channels-last tiled kernel runs the geometry.
bool depthwise_tiled_supported(const DepthwiseGeometry& g);
// The channels-last algorithms besides kAuto that run the geometry (its own `algorithm` ignored).
std::vector<DepthwiseAlgorithm> depthwise_algorithms(const DepthwiseGeometry& g);
const char* depthwise_algorithm_name(DepthwiseAlgorithm algorithm);
void launch_depthwise_conv(ElementType type, const DepthwiseGeometry& g, const DepthwiseOperands& operands,
                           cudaStream_t stream);

// Quantization (quantize_kernels.cu): operands of any stored type; an omitted zero point is
// nullptr (zero).
struct QuantizeOperands {
  const void* x;
  StorageType x_type;
  const void* scale;
  StorageType scale_type;
  const void* zero;
  StorageType zero_type;
  void* y;
  StorageType y_type;
};
void launch_quantize(const QuantizePlan& plan, const QuantizeOperands& operands, cudaStream_t stream);
// DynamicQuantizeLinear: scratch of dynamic_quantize_scratch_bytes(); y uint8, y_scale and
// y_zero (uint8) may be nullptr when those outputs are omitted.
struct DynamicQuantizeOperands {
  const void* x;
  StorageType x_type;
  float* scratch;
  void* y;
  void* y_scale;
  StorageType scale_type;
  void* y_zero;
};
size_t dynamic_quantize_scratch_bytes();
void launch_dynamic_quantize(const DynamicQuantizeOperands& operands, int64_t elements, cudaStream_t stream);
// Integer products over int8 / uint8 operands a and b: zero points and (requantizing) scales
// nullptr where the op has none; y_scale nullptr: int32 y. QLinearConv: a = x, b = w, bias int32.
struct IntegerProductOperands {
  const void *a, *b, *a_zero, *b_zero, *a_scale, *b_scale, *y_scale, *y_zero, *bias;
  StorageType a_type, b_type, a_zero_type, b_zero_type, scale_type, y_zero_type;
  void* y;
  StorageType y_type;
};
void launch_integer_matmul(const IntegerMatMulPlan& plan, const IntegerProductOperands& operands, cudaStream_t stream);
void launch_qlinear_conv(const QLinearConvPlan& plan, const IntegerProductOperands& operands, cudaStream_t stream);

// Recurrent layers (recurrent_kernels.cu): the pointwise part of one time step, one thread per
// (batch row, hidden unit), after the products x*W^T (all steps at once) and h*R^T. Stages:
// RNN, LSTM, GRU with linear_before_reset in one pass; without it, the gates (z kept, r*h
// written for the candidate's product) and then the candidate.
enum class RecurrentStage { kRnn, kLstm, kGru, kGruGates, kGruCandidate };
struct RecurrentStep {
  const void* xw;            // [batch, gates*hidden]: this step's x*W^T
  const void* hr;            // [batch, gates*hidden] ([batch, 2*hidden] for kGruGates): h*R^T
  const void* hr_candidate;  // kGruCandidate: [batch, hidden] (r*h)*R_h^T
  const void* bias;          // [2*gates*hidden]: Wb then Rb, or nullptr
  const void* peepholes;     // LSTM [3*hidden] (i, o, f), or nullptr
  const void* h_prev;        // [batch, hidden]
  const void* c_initial;     // LSTM's first step: [batch, hidden] or nullptr (zeros)
  float* c;                  // LSTM cell state [batch, hidden]
  float* z;                  // GRU gates pass to candidate pass
  void* reset_h;             // kGruGates: r*h out
  void* h_out;               // [batch, hidden]
  void* y_h;                 // the last step: final h and c outputs, else nullptr
  void* y_c;
  int64_t batch, hidden;
  bool first;
};
void launch_recurrent_step(ElementType type, RecurrentStage stage, const RecurrentStep& step, cudaStream_t stream);

// Calibration (calibrate_kernels.cu).
void launch_stream_copy(const void* src, void* dst, size_t bytes, int blocks, cudaStream_t stream);
// Each thread runs `iterations` rounds of independent FMA chains; returns the flops it enqueued.
double launch_fma_fp32(float* sink, int blocks, int threads, int iterations, cudaStream_t stream);
// chains: independent half2 accumulators per thread (8, 16 or 32).
double launch_fma_fp16(void* sink, int blocks, int threads, int iterations, int chains, cudaStream_t stream);
// One block that records the GPU's global timer at its start and end into stamps[2 * index] and
// stamps[2 * index + 1], spinning `spin_ns` in between (0: an empty kernel): the per-kernel overhead
// and the idle gap between dependent kernels in a CUDA graph.
void launch_timestamp_kernel(unsigned long long* stamps, int index, unsigned spin_ns, cudaStream_t stream);

}  // namespace modelcost::cuda
