// Data movement: strided copies (Transpose, Slice, Concat, Split, Expand, Pad, scalar Gather),
// Gather by an index tensor, and Resize. Copies are element-size generic (1, 2, 4, 8 bytes) and
// move 16-byte vectors where the innermost dim is contiguous on both sides.
#include "measure/cuda/cuda_check.h"
#include "measure/cuda/element_types.cuh"
#include "measure/cuda/kernels.h"

namespace modelcost::cuda {

struct CopyIndexing {
  int rank;
  int64_t dims[kMaxCopyRank], src[kMaxCopyRank], dst[kMaxCopyRank];
  int64_t src_offset, dst_offset;
};

template <typename E>
__global__ void strided_copy_kernel(const E* src, E* dst, CopyIndexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, s = ix.src_offset, d = ix.dst_offset;
    for (int k = ix.rank - 1; k >= 0; --k) {
      const int64_t q = rest / ix.dims[k], r = rest - q * ix.dims[k];
      s += r * ix.src[k];
      d += r * ix.dst[k];
      rest = q;
    }
    dst[d] = src[s];
  }
}

template <typename E, typename I>
__global__ void gather_kernel(const E* data, const I* indices, E* out, int64_t axis_len, int64_t inner, int64_t count,
                              int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t in_row = i % inner, j = (i / inner) % count, o = i / (inner * count);
    int64_t k = static_cast<int64_t>(indices[j]);
    if (k < 0) k += axis_len;
    out[i] = data[(o * axis_len + k) * inner + in_row];
  }
}

enum Coord { kHalfPixel, kAsymmetric, kAlignCorners, kPytorchHalfPixel };
enum Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

__device__ __forceinline__ float source_coordinate(int mode, int64_t o, int64_t in, int64_t out) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  if (mode == kAsymmetric) return o / scale;
  if (mode == kAlignCorners) return out == 1 ? 0.f : o * static_cast<float>(in - 1) / static_cast<float>(out - 1);
  if (mode == kPytorchHalfPixel && out == 1) return -0.5f;
  return (o + 0.5f) / scale - 0.5f;
}

__device__ __forceinline__ int64_t nearest(int mode, float x, int64_t in) {
  float r = mode == kFloor ? floorf(x) : mode == kCeil ? ceilf(x) : mode == kRoundPreferCeil ? floorf(x + 0.5f) : ceilf(x - 0.5f);
  int64_t i = static_cast<int64_t>(r);
  return i < 0 ? 0 : (i >= in ? in - 1 : i);
}

template <typename T>
__global__ void resize_kernel(const T* x, T* y, bool linear, int coord, int near, int64_t ih, int64_t iw, int64_t oh,
                              int64_t ow, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % ow, r = (i / ow) % oh, plane = i / (ow * oh);
    const T* src = x + plane * ih * iw;
    const float sy = source_coordinate(coord, r, ih, oh), sx = source_coordinate(coord, c, iw, ow);
    if (!linear) {
      y[i] = src[nearest(near, sy, ih) * iw + nearest(near, sx, iw)];
      continue;
    }
    const float cy = fminf(fmaxf(sy, 0.f), float(ih - 1)), cx = fminf(fmaxf(sx, 0.f), float(iw - 1));
    const int64_t y0 = static_cast<int64_t>(floorf(cy)), x0 = static_cast<int64_t>(floorf(cx));
    const int64_t y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    const float fy = cy - y0, fx = cx - x0;
    const float v = (1 - fy) * ((1 - fx) * to_float(src[y0 * iw + x0]) + fx * to_float(src[y0 * iw + x1])) +
                    fy * ((1 - fx) * to_float(src[y1 * iw + x0]) + fx * to_float(src[y1 * iw + x1]));
    y[i] = from_float<T>(v);
  }
}

namespace {
int capped_grid(int64_t work) { return grid_for(work) > 132 * 16 ? 132 * 16 : grid_for(work); }

template <typename E>
void copy_as(const void* src, void* dst, const CopyIndexing& ix, int64_t n, cudaStream_t stream) {
  strided_copy_kernel<E><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<const E*>(src), static_cast<E*>(dst), ix, n);
}

template <typename E>
void gather_as(const void* data, const void* indices, bool i64, void* out, int64_t axis_len, int64_t inner, int64_t count,
               int64_t n, cudaStream_t stream) {
  if (i64)
    gather_kernel<E, int64_t><<<capped_grid(n), kThreads, 0, stream>>>(
        static_cast<const E*>(data), static_cast<const int64_t*>(indices), static_cast<E*>(out), axis_len, inner, count, n);
  else
    gather_kernel<E, int32_t><<<capped_grid(n), kThreads, 0, stream>>>(
        static_cast<const E*>(data), static_cast<const int32_t*>(indices), static_cast<E*>(out), axis_len, inner, count, n);
}
}  // namespace

void launch_strided_copy(int bytes, const void* src, void* dst, const StridedCopy& c, cudaStream_t stream) {
  if (c.dims.size() > kMaxCopyRank) throw Error(kExitRuntime, "copy of rank above 8");
  CopyIndexing ix{};
  ix.rank = static_cast<int>(c.dims.size());
  int64_t n = 1;
  for (size_t i = 0; i < c.dims.size(); ++i) {
    ix.dims[i] = c.dims[i];
    ix.src[i] = c.src_strides[i];
    ix.dst[i] = c.dst_strides[i];
    n *= c.dims[i];
  }
  ix.src_offset = c.src_offset;
  ix.dst_offset = c.dst_offset;
  if (n == 0) return;
  // Widen the element: innermost dim contiguous on both sides, its length, every outer stride and
  // both offsets divisible by the widening factor, and 16-byte aligned pointers.
  const int last = ix.rank - 1;
  int widen = 16 / bytes;
  auto divisible = [&](int f) {
    if (ix.src[last] != 1 || ix.dst[last] != 1 || ix.dims[last] % f || ix.src_offset % f || ix.dst_offset % f) return false;
    for (int k = 0; k < last; ++k)
      if (ix.src[k] % f || ix.dst[k] % f) return false;
    return (reinterpret_cast<uintptr_t>(src) % (f * bytes)) == 0 && (reinterpret_cast<uintptr_t>(dst) % (f * bytes)) == 0;
  };
  while (widen > 1 && !divisible(widen)) widen /= 2;
  if (widen > 1) {
    for (int k = 0; k < last; ++k) { ix.src[k] /= widen; ix.dst[k] /= widen; }
    ix.dims[last] /= widen;
    ix.src_offset /= widen;
    ix.dst_offset /= widen;
    n /= widen;
  }
  switch (bytes * widen) {
    case 1: copy_as<uint8_t>(src, dst, ix, n, stream); break;
    case 2: copy_as<uint16_t>(src, dst, ix, n, stream); break;
    case 4: copy_as<uint32_t>(src, dst, ix, n, stream); break;
    case 8: copy_as<uint2>(src, dst, ix, n, stream); break;
    case 16: copy_as<uint4>(src, dst, ix, n, stream); break;
    default: throw Error(kExitRuntime, "copy of elements of " + std::to_string(bytes) + " bytes");
  }
  MC_CUDA_CHECK_LAUNCH();
}

void launch_gather(int bytes, const void* data, const void* indices, bool i64, void* out, int64_t outer, int64_t axis_len,
                   int64_t inner, int64_t count, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  switch (bytes) {
    case 1: gather_as<uint8_t>(data, indices, i64, out, axis_len, inner, count, n, stream); break;
    case 2: gather_as<uint16_t>(data, indices, i64, out, axis_len, inner, count, n, stream); break;
    case 4: gather_as<uint32_t>(data, indices, i64, out, axis_len, inner, count, n, stream); break;
    case 8: gather_as<uint2>(data, indices, i64, out, axis_len, inner, count, n, stream); break;
    default: throw Error(kExitRuntime, "gather of elements of " + std::to_string(bytes) + " bytes");
  }
  MC_CUDA_CHECK_LAUNCH();
}

void launch_resize(ElementType type, const OpPlan& plan, const void* x, void* y, int64_t planes, int64_t ih, int64_t iw,
                   int64_t oh, int64_t ow, cudaStream_t stream) {
  const int coord = plan.coordinate_mode == "asymmetric" ? kAsymmetric
                    : plan.coordinate_mode == "align_corners" ? kAlignCorners
                    : plan.coordinate_mode == "pytorch_half_pixel" ? kPytorchHalfPixel : kHalfPixel;
  const int near = plan.nearest_mode == "floor" ? kFloor : plan.nearest_mode == "ceil" ? kCeil
                   : plan.nearest_mode == "round_prefer_ceil" ? kRoundPreferCeil : kRoundPreferFloor;
  const int64_t n = planes * oh * ow;
  MC_DISPATCH_TYPE(type, resize_kernel<T><<<capped_grid(n), kThreads, 0, stream>>>(
                             static_cast<const T*>(x), static_cast<T*>(y), plan.resize_linear, coord, near, ih, iw, oh, ow, n));
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
