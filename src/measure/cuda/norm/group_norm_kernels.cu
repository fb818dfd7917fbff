// InstanceNormalization and GroupNormalization over NCHW, where each (n, group) is one contiguous
// row of C / groups x spatial elements. Two launches: partial sums of slices of each row into a
// workspace, then the normalisation, each block combining its row's partials first. Slicing the
// rows keeps the GPU busy where there are few of them (poolformer's single group per image: one
// row of 200k-800k elements), where a block per row would leave most SMs idle.
#include "core/block_reduce.cuh"
#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int kNormThreads = 256;
constexpr int kTargetBlocks = 132 * 4;      // a few waves of the largest GPU's SMs
constexpr int64_t kMinSliceElements = 4096;  // a slice still amortises its block's start
constexpr int kMaxSlices = 256;              // the partials one block combines

// A row's slices, each a multiple of `step` elements (16-byte vectors when they fit).
struct Slicing {
  int64_t rows, row_len, slice_len;
  int slices;
};

Slicing slicing_of(const GroupNormPlan& p, int64_t step) {
  Slicing s;
  s.rows = p.batch * p.groups;
  s.row_len = p.channels / p.groups * p.spatial;
  const int64_t wanted = (kTargetBlocks + s.rows - 1) / s.rows;
  const int64_t most = (s.row_len + kMinSliceElements - 1) / kMinSliceElements;
  int64_t slices = wanted < most ? wanted : most;
  slices = slices < 1 ? 1 : slices > kMaxSlices ? kMaxSlices : slices;
  const int64_t len = (s.row_len + slices - 1) / slices;
  s.slice_len = (len + step - 1) / step * step;
  s.slices = static_cast<int>((s.row_len + s.slice_len - 1) / s.slice_len);
  return s;
}

// Sums of (x - shift) and its square over one slice. Every slice of a row subtracts the row's
// first element, so the partials add up exactly and the variance keeps its precision.
template <typename T, int kW>
__global__ void group_norm_partials_kernel(const T* __restrict__ x, float2* __restrict__ partials, Slicing s) {
  __shared__ float scratch[kNormThreads / 32];
  const int64_t row = blockIdx.x / s.slices, begin = (blockIdx.x % s.slices) * s.slice_len;
  const int64_t end = begin + s.slice_len < s.row_len ? begin + s.slice_len : s.row_len;
  const T* p = x + row * s.row_len;
  const float shift = to_float(p[0]);
  float sum = 0.f, squares = 0.f;
  const auto* packs = reinterpret_cast<const Pack<T, kW>*>(p);
  for (int64_t j = begin / kW + threadIdx.x; j < end / kW; j += kNormThreads) {
    const Pack<T, kW> pack = packs[j];
#pragma unroll
    for (int e = 0; e < kW; ++e) {
      const float d = to_float(pack.v[e]) - shift;
      sum += d;
      squares += d * d;
    }
  }
  sum = block_sum(sum, scratch);
  squares = block_sum(squares, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = make_float2(sum, squares);
}

struct GroupNormShape {
  Slicing s;
  int64_t groups, per_group, spatial;
  float epsilon;
  bool per_group_affine;
};

template <typename T, int kW>
__global__ void group_norm_apply_kernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                        T* __restrict__ y, const float2* __restrict__ partials, GroupNormShape g) {
  __shared__ float scratch[kNormThreads / 32];
  const Slicing& s = g.s;
  const int64_t row = blockIdx.x / s.slices, begin = (blockIdx.x % s.slices) * s.slice_len;
  const int64_t end = begin + s.slice_len < s.row_len ? begin + s.slice_len : s.row_len;
  const float2 part = threadIdx.x < s.slices ? partials[row * s.slices + threadIdx.x] : make_float2(0.f, 0.f);
  const float n = static_cast<float>(s.row_len);
  const float mean_shifted = block_sum(part.x, scratch) / n;
  const float variance = fmaxf(block_sum(part.y, scratch) / n - mean_shifted * mean_shifted, 0.f);
  const float mean = to_float(x[row * s.row_len]) + mean_shifted, inv = rsqrtf(variance + g.epsilon);
  const int64_t group = row % g.groups;
  const auto* in = reinterpret_cast<const Pack<T, kW>*>(x + row * s.row_len);
  auto* out = reinterpret_cast<Pack<T, kW>*>(y + row * s.row_len);
  for (int64_t j = begin / kW + threadIdx.x; j < end / kW; j += kNormThreads) {
    // A pack never straddles channels: kW > 1 only where it divides the spatial size.
    const int64_t c = g.per_group_affine ? group : group * g.per_group + j * kW / g.spatial;
    const float a = to_float(scale[c]) * inv, b = to_float(bias[c]) - mean * a;
    const Pack<T, kW> v = in[j];
    Pack<T, kW> r;
#pragma unroll
    for (int e = 0; e < kW; ++e) r.v[e] = from_float<T>(to_float(v.v[e]) * a + b);
    out[j] = r;
  }
}

template <typename T, int kW>
void launch_group_norm_with(const GroupNormPlan& p, const NormOperands& o, cudaStream_t stream) {
  const Slicing s = slicing_of(p, kW);
  const int64_t blocks = s.rows * s.slices;
  if (blocks > (int64_t(1) << 31) - 1) throw Error(kExitRuntime, "GroupNormalization over more than 2^31 slices");
  auto* partials = static_cast<float2*>(o.workspace);
  group_norm_partials_kernel<T, kW>
      <<<static_cast<int>(blocks), kNormThreads, 0, stream>>>(static_cast<const T*>(o.x), partials, s);
  const GroupNormShape g{s, p.groups, p.channels / p.groups, p.spatial, static_cast<float>(p.epsilon), p.per_group_affine};
  group_norm_apply_kernel<T, kW><<<static_cast<int>(blocks), kNormThreads, 0, stream>>>(
      static_cast<const T*>(o.x), static_cast<const T*>(o.scale), static_cast<const T*>(o.bias), static_cast<T*>(o.y),
      partials, g);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

// Slices of one element cut a row finest: no vector width needs more partials.
size_t group_norm_workspace_bytes(const GroupNormPlan& plan) {
  const Slicing s = slicing_of(plan, 1);
  return static_cast<size_t>(s.rows) * static_cast<size_t>(s.slices) * sizeof(float2);
}

void launch_group_norm(ElementType type, const GroupNormPlan& plan, const NormOperands& o, cudaStream_t stream) {
  if (plan.batch * plan.channels * plan.spatial == 0) return;
  MC_DISPATCH_TYPE(type, {
    constexpr int W = 16 / sizeof(T);
    if (plan.spatial % W == 0 && aligned16(o.x) && aligned16(o.y)) launch_group_norm_with<T, W>(plan, o, stream);
    else launch_group_norm_with<T, 1>(plan, o, stream);
  });
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
