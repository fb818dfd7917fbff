// Quantization kernels: (de)quantization per tensor or axis, DynamicQuantizeLinear (partial
// min/max, then scale and zero point, then quantize), and the integer products: a tiled int32
// GEMM (MatMulInteger, QLinearMatMul) and a direct QLinearConv. Not tensor-core (IMMA) kernels:
// their times are what these simple kernels take, an upper bound on an int8 library's.
#include <algorithm>
#include <cfloat>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"
#include "core/storage_access.cuh"

namespace modelcost::cuda {
namespace {

__device__ __forceinline__ void integer_range(StorageType t, float* lo, float* hi) {
  switch (t) {
    case StorageType::kU8: *lo = 0.f, *hi = 255.f; break;
    case StorageType::kI8: *lo = -128.f, *hi = 127.f; break;
    case StorageType::kU16: *lo = 0.f, *hi = 65535.f; break;
    case StorageType::kI16: *lo = -32768.f, *hi = 32767.f; break;
    default: *lo = -2147483648.f, *hi = 2147483647.f;
  }
}

__device__ __forceinline__ float saturate(StorageType t, float v) {
  float lo, hi;
  integer_range(t, &lo, &hi);
  return fminf(fmaxf(v, lo), hi);
}

__device__ __forceinline__ float load_or_zero(const void* p, StorageType t, int64_t i) {
  return p ? load_any(p, t, i) : 0.f;
}

__global__ void quantize_kernel(QuantizePlan p, QuantizeOperands o, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t a = i / p.inner % p.axis_len;
    const float x = load_any(o.x, o.x_type, i), scale = load_any(o.scale, o.scale_type, a);
    const float zero = load_or_zero(o.zero, o.zero_type, a);
    if (p.dequantize) store_any(o.y, o.y_type, i, (x - zero) * scale);
    else store_any(o.y, o.y_type, i, saturate(o.y_type, rintf(x / scale) + zero));
  }
}

constexpr int kRangeBlocks = 256;

// Each block's min and max into partial[2 * block], partial[2 * block + 1].
__global__ void range_partial_kernel(const void* x, StorageType type, int64_t n, float* partial) {
  __shared__ float lo_s[kThreads], hi_s[kThreads];
  float lo = 0.f, hi = 0.f;  // the range always holds 0
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = load_any(x, type, i);
    lo = fminf(lo, v), hi = fmaxf(hi, v);
  }
  lo_s[threadIdx.x] = lo, hi_s[threadIdx.x] = hi;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      lo_s[threadIdx.x] = fminf(lo_s[threadIdx.x], lo_s[threadIdx.x + s]);
      hi_s[threadIdx.x] = fmaxf(hi_s[threadIdx.x], hi_s[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[2 * blockIdx.x] = lo_s[0], partial[2 * blockIdx.x + 1] = hi_s[0];
}

// One thread: the partials' range, then uint8 scale and zero point into params[0..1] and the outputs.
__global__ void range_finish_kernel(float* partial, int blocks, void* y_scale, StorageType scale_type, void* y_zero) {
  float lo = 0.f, hi = 0.f;
  for (int b = 0; b < blocks; ++b) lo = fminf(lo, partial[2 * b]), hi = fmaxf(hi, partial[2 * b + 1]);
  const float scale = (hi - lo) / 255.f;
  const float zero = scale > 0.f ? saturate(StorageType::kU8, rintf(-lo / scale)) : 0.f;
  partial[2 * kRangeBlocks] = scale, partial[2 * kRangeBlocks + 1] = zero;
  if (y_scale) store_any(y_scale, scale_type, 0, scale);
  if (y_zero) store_any(y_zero, StorageType::kU8, 0, zero);
}

__global__ void dynamic_quantize_kernel(const void* x, StorageType type, int64_t n, const float* params, uint8_t* y) {
  const float scale = params[0], zero = params[1];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = scale > 0.f ? static_cast<uint8_t>(saturate(StorageType::kU8, rintf(load_any(x, type, i) / scale) + zero)) : 0;
}

constexpr int kTile = 16;

// y[b] (m x n) = sum_k (a - a_zero) * (b - b_zero), int32, then requantized or stored as is.
template <typename TA, typename TB>
__global__ void integer_matmul_kernel(IntegerMatMulPlan p, IntegerProductOperands o) {
  __shared__ int a_tile[kTile][kTile + 1], b_tile[kTile][kTile + 1];
  const MatMulParams& g = p.gemm;
  const int64_t batch = blockIdx.z, row = blockIdx.y * int64_t(kTile) + threadIdx.y, col = blockIdx.x * int64_t(kTile) + threadIdx.x;
  const TA* a = static_cast<const TA*>(o.a) + batch * g.a_batch_stride;
  const TB* b = static_cast<const TB*>(o.b) + batch * g.b_batch_stride;
  const int a_zero_row = static_cast<int>(load_or_zero(o.a_zero, o.a_zero_type, p.a_zero_per_row && row < g.m ? row : 0));
  // The zero point of the B column this thread loads (column col), not the one it writes.
  const int b_zero_col = static_cast<int>(load_or_zero(o.b_zero, o.b_zero_type, p.b_zero_per_column && col < g.n ? col : 0));
  int acc = 0;
  for (int64_t k0 = 0; k0 < g.k; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = row < g.m && ka < g.k ? static_cast<int>(a[row * g.k + ka]) - a_zero_row : 0;
    b_tile[threadIdx.y][threadIdx.x] = kb < g.k && col < g.n ? static_cast<int>(b[kb * g.n + col]) - b_zero_col : 0;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  if (row >= g.m || col >= g.n) return;
  const int64_t at = (batch * g.m + row) * g.n + col;
  if (!o.y_scale) {
    static_cast<int32_t*>(o.y)[at] = acc;
    return;
  }
  const float multiplier = load_any(o.a_scale, o.scale_type, 0) * load_any(o.b_scale, o.scale_type, 0) / load_any(o.y_scale, o.scale_type, 0);
  store_any(o.y, o.y_type, at, saturate(o.y_type, rintf(static_cast<float>(acc) * multiplier) + load_or_zero(o.y_zero, o.y_zero_type, 0)));
}

// Spatial dims right-aligned in 3 slots, as the pools'.
struct ConvGeometry3 {
  int64_t in[3], out[3], k[3], stride[3], dil[3], pad[3];
};

template <typename TA, typename TB>
__global__ void qlinear_conv_kernel(ConvGeometry3 g, int64_t batch, int64_t in_channels, int64_t out_channels,
                                    int64_t groups, bool per_channel, IntegerProductOperands o) {
  const int64_t out_count = g.out[0] * g.out[1] * g.out[2], in_count = g.in[0] * g.in[1] * g.in[2];
  const int64_t k_count = g.k[0] * g.k[1] * g.k[2], total = batch * out_channels * out_count;
  const int64_t group_in = in_channels / groups, group_out = out_channels / groups;
  const TA* x = static_cast<const TA*>(o.a);
  const TB* w = static_cast<const TB*>(o.b);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t pos = i % out_count, m = i / out_count % out_channels, n = i / (out_count * out_channels);
    const int64_t op[3] = {pos / (g.out[1] * g.out[2]), pos / g.out[2] % g.out[1], pos % g.out[2]};
    const int64_t wc = per_channel ? m : 0, grp = m / group_out;
    const int x_zero = static_cast<int>(load_or_zero(o.a_zero, o.a_zero_type, 0));
    const int w_zero = static_cast<int>(load_or_zero(o.b_zero, o.b_zero_type, wc));
    int acc = o.bias ? static_cast<const int32_t*>(o.bias)[m] : 0;
    for (int64_t ci = 0; ci < group_in; ++ci) {
      const TA* plane = x + (n * in_channels + grp * group_in + ci) * in_count;
      const TB* kernel = w + (m * group_in + ci) * k_count;
      for (int64_t kk = 0; kk < k_count; ++kk) {
        const int64_t kp[3] = {kk / (g.k[1] * g.k[2]), kk / g.k[2] % g.k[1], kk % g.k[2]};
        int64_t at = 0;
        bool inside = true;
        for (int a = 0; a < 3; ++a) {
          const int64_t idx = op[a] * g.stride[a] - g.pad[a] + kp[a] * g.dil[a];
          inside = inside && idx >= 0 && idx < g.in[a];
          at = at * g.in[a] + idx;
        }
        if (inside) acc += (static_cast<int>(plane[at]) - x_zero) * (static_cast<int>(kernel[kk]) - w_zero);
      }
    }
    const float multiplier =
        load_any(o.a_scale, o.scale_type, 0) * load_any(o.b_scale, o.scale_type, wc) / load_any(o.y_scale, o.scale_type, 0);
    store_any(o.y, o.y_type, i, saturate(o.y_type, rintf(static_cast<float>(acc) * multiplier) + load_or_zero(o.y_zero, o.y_zero_type, 0)));
  }
}

// Runs body<TA, TB>() for int8 / uint8 operand types.
#define MC_DISPATCH_BYTES(a_type, b_type, ...)                                                              \
  do {                                                                                                      \
    const bool a_signed = (a_type) == StorageType::kI8, b_signed = (b_type) == StorageType::kI8;           \
    if (a_signed && b_signed) { using TA = int8_t; using TB = int8_t; __VA_ARGS__; }                       \
    else if (a_signed) { using TA = int8_t; using TB = uint8_t; __VA_ARGS__; }                             \
    else if (b_signed) { using TA = uint8_t; using TB = int8_t; __VA_ARGS__; }                             \
    else { using TA = uint8_t; using TB = uint8_t; __VA_ARGS__; }                                          \
  } while (0)

}  // namespace

void launch_quantize(const QuantizePlan& plan, const QuantizeOperands& o, cudaStream_t stream) {
  const int64_t n = plan.outer * plan.axis_len * plan.inner;
  quantize_kernel<<<grid_for(n), kThreads, 0, stream>>>(plan, o, n);
  MC_CUDA_CHECK(cudaGetLastError());
}

size_t dynamic_quantize_scratch_bytes() { return (2 * kRangeBlocks + 2) * sizeof(float); }

void launch_dynamic_quantize(const DynamicQuantizeOperands& o, int64_t n, cudaStream_t stream) {
  const int blocks = std::min(kRangeBlocks, grid_for(n));
  range_partial_kernel<<<blocks, kThreads, 0, stream>>>(o.x, o.x_type, n, o.scratch);
  range_finish_kernel<<<1, 1, 0, stream>>>(o.scratch, blocks, o.y_scale, o.scale_type, o.y_zero);
  dynamic_quantize_kernel<<<grid_for(n), kThreads, 0, stream>>>(o.x, o.x_type, n, o.scratch + 2 * kRangeBlocks,
                                                                 static_cast<uint8_t*>(o.y));
  MC_CUDA_CHECK(cudaGetLastError());
}

void launch_integer_matmul(const IntegerMatMulPlan& plan, const IntegerProductOperands& o, cudaStream_t stream) {
  const MatMulParams& g = plan.gemm;
  const dim3 grid(static_cast<unsigned>((g.n + kTile - 1) / kTile), static_cast<unsigned>((g.m + kTile - 1) / kTile),
                  static_cast<unsigned>(g.batch));
  MC_DISPATCH_BYTES(o.a_type, o.b_type, (integer_matmul_kernel<TA, TB><<<grid, dim3(kTile, kTile), 0, stream>>>(plan, o)));
  MC_CUDA_CHECK(cudaGetLastError());
}

void launch_qlinear_conv(const QLinearConvPlan& plan, const IntegerProductOperands& o, cudaStream_t stream) {
  const ConvParams& c = plan.conv;
  ConvGeometry3 g;
  const size_t n = c.kernel.size(), shift = 3 - n;
  for (int a = 0; a < 3; ++a) g.in[a] = g.out[a] = g.k[a] = g.stride[a] = g.dil[a] = 1, g.pad[a] = 0;
  for (size_t i = 0; i < n; ++i) {
    g.in[shift + i] = c.in_size[i], g.out[shift + i] = c.out_size[i], g.k[shift + i] = c.kernel[i];
    g.stride[shift + i] = c.strides[i], g.dil[shift + i] = c.dilations[i], g.pad[shift + i] = c.pads[i];
  }
  const int64_t total = c.batch * c.out_channels * g.out[0] * g.out[1] * g.out[2];
  MC_DISPATCH_BYTES(o.a_type, o.b_type,
                    (qlinear_conv_kernel<TA, TB><<<grid_for(total), kThreads, 0, stream>>>(
                        g, c.batch, c.in_channels, c.out_channels, c.groups, plan.per_channel_weight, o)));
  MC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace modelcost::cuda
