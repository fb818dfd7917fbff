// ArgMax / ArgMin, CumSum, gathers and scatters by index tensors, Range. Plain grid-stride
// kernels with 64-bit indexing: these ops are rare and small next to the convs and GEMMs.
#include <type_traits>

#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {

constexpr int kMaxIndexRank = 8;

namespace {
int capped(int64_t work) { return grid_for(work) > 132 * 16 ? 132 * 16 : grid_for(work); }
}  // namespace

// One thread per (outer, inner) column walks the axis.
template <typename T>
__global__ void arg_reduce_kernel(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool max,
                                  bool last) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner; c += int64_t(gridDim.x) * blockDim.x) {
    const T* p = x + (c / inner) * n * inner + c % inner;
    float best = to_float(p[0]);
    int64_t at = 0;
    for (int64_t r = 1; r < n; ++r) {
      const float v = to_float(p[r * inner]);
      if ((max ? v > best : v < best) || (last && v == best)) { best = v; at = r; }
    }
    y[c] = at;
  }
}

// Integer scans accumulate in the integer type itself (position ids: CumSum over an int64 mask),
// the others in fp32.
template <typename T>
using ScanAccumulator = std::conditional_t<std::is_integral<T>::value, T, float>;

template <typename T>
__device__ __forceinline__ ScanAccumulator<T> scan_load(T v) {
  if constexpr (std::is_integral<T>::value) return v;
  else return to_float(v);
}

template <typename T>
__device__ __forceinline__ T scan_store(ScanAccumulator<T> acc) {
  if constexpr (std::is_integral<T>::value) return acc;
  else return from_float<T>(acc);
}

template <typename T>
__global__ void scan_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < outer * inner; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    ScanAccumulator<T> acc = 0;
    for (int64_t step = 0; step < n; ++step) {
      const int64_t at = base + (reverse ? n - 1 - step : step) * inner;
      const ScanAccumulator<T> v = scan_load(x[at]);
      if (!exclusive) acc += v;
      y[at] = scan_store<T>(acc);
      if (exclusive) acc += v;
    }
  }
}

struct ElementsIndexing {
  int rank, axis;
  int64_t dims[kMaxIndexRank], strides[kMaxIndexRank], axis_len;
};

template <typename E, typename I>
__global__ void elements_kernel(const E* data, const I* indices, const E* updates, E* y, ElementsIndexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = ix.rank - 1; d >= 0; --d) {
      int64_t coordinate = rest % ix.dims[d];
      rest /= ix.dims[d];
      if (d == ix.axis) {
        coordinate = static_cast<int64_t>(indices[i]);
        if (coordinate < 0) coordinate += ix.axis_len;
      }
      offset += coordinate * ix.strides[d];
    }
    if (updates) y[offset] = updates[i];
    else y[i] = data[offset];
  }
}

struct TupleIndexing {
  int k;
  int64_t dims[kMaxIndexRank], strides[kMaxIndexRank];
  int64_t tuples, slice, batch_stride;
};

template <typename E, typename I>
__global__ void nd_kernel(const E* data, const I* indices, const E* updates, E* y, TupleIndexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ix.slice, element = i - row * ix.slice;  // row = batch * tuples + tuple
    int64_t offset = (row / ix.tuples) * ix.batch_stride + element;
    for (int j = 0; j < ix.k; ++j) {
      int64_t index = static_cast<int64_t>(indices[row * ix.k + j]);
      if (index < 0) index += ix.dims[j];
      offset += index * ix.strides[j];
    }
    if (updates) y[offset] = updates[i];
    else y[i] = data[offset];
  }
}

template <typename T>
__global__ void range_kernel(const T* start, const T* delta, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = static_cast<T>(start[0] + static_cast<T>(i) * delta[0]);
}

void launch_arg_reduce(ElementType type, const ReducePlan& p, const void* x, int64_t* y, cudaStream_t stream) {
  const int64_t columns = p.outer * p.inner;
  if (columns == 0) return;
  MC_DISPATCH_TYPE(type, arg_reduce_kernel<T><<<capped(columns), kThreads, 0, stream>>>(
                             static_cast<const T*>(x), y, p.outer, p.axis_len, p.inner, p.op == ReduceOp::kArgMax,
                             p.select_last_index));
  MC_CUDA_CHECK_LAUNCH();
}

void launch_scan_int(int element_bytes, const ScanPlan& p, const void* x, void* y, cudaStream_t stream) {
  const int64_t columns = p.outer * p.inner;
  if (columns == 0) return;
  if (element_bytes == 8)
    scan_kernel<int64_t><<<capped(columns), kThreads, 0, stream>>>(static_cast<const int64_t*>(x), static_cast<int64_t*>(y),
                                                                       p.outer, p.axis_len, p.inner, p.exclusive, p.reverse);
  else
    scan_kernel<int32_t><<<capped(columns), kThreads, 0, stream>>>(static_cast<const int32_t*>(x), static_cast<int32_t*>(y),
                                                                       p.outer, p.axis_len, p.inner, p.exclusive, p.reverse);
  MC_CUDA_CHECK_LAUNCH();
}

void launch_scan(ElementType type, const ScanPlan& p, const void* x, void* y, cudaStream_t stream) {
  const int64_t columns = p.outer * p.inner;
  if (columns == 0) return;
  MC_DISPATCH_TYPE(type, scan_kernel<T><<<capped(columns), kThreads, 0, stream>>>(
                             static_cast<const T*>(x), static_cast<T*>(y), p.outer, p.axis_len, p.inner, p.exclusive,
                             p.reverse));
  MC_CUDA_CHECK_LAUNCH();
}

namespace {

template <typename E, typename I>
void launch_indexed_typed(const IndexedPlan& p, const E* data, const I* indices, const E* updates, E* y,
                          cudaStream_t stream) {
  using Kind = IndexedPlan::Kind;
  if (p.kind == Kind::kGatherElements || p.kind == Kind::kScatterElements) {
    ElementsIndexing ix{};
    ix.rank = static_cast<int>(p.index_dims.size());
    if (ix.rank > kMaxIndexRank) throw Error(kExitRuntime, "indexed op of rank above 8");
    ix.axis = static_cast<int>(p.axis);
    ix.axis_len = p.axis_len;
    int64_t n = 1;
    for (int d = 0; d < ix.rank; ++d) {
      ix.dims[d] = p.index_dims[d];
      ix.strides[d] = p.data_strides[d];
      n *= p.index_dims[d];
    }
    if (n > 0) elements_kernel<E, I><<<capped(n), kThreads, 0, stream>>>(data, indices, updates, y, ix, n);
    return;
  }
  TupleIndexing ix{};
  ix.k = static_cast<int>(p.tuple_dims.size());
  if (ix.k > kMaxIndexRank) throw Error(kExitRuntime, "index tuples of more than 8 components");
  for (int j = 0; j < ix.k; ++j) {
    ix.dims[j] = p.tuple_dims[j];
    ix.strides[j] = p.tuple_strides[j];
  }
  ix.tuples = p.tuples;
  ix.slice = p.slice;
  ix.batch_stride = p.batch_stride;
  const int64_t n = p.batch * p.tuples * p.slice;
  if (n > 0) nd_kernel<E, I><<<capped(n), kThreads, 0, stream>>>(data, indices, updates, y, ix, n);
}

template <typename E>
void launch_indexed_elements(const IndexedPlan& p, const IndexOperands& o, cudaStream_t stream) {
  const auto* d = static_cast<const E*>(o.data);
  const auto* u = static_cast<const E*>(o.updates);
  if (o.indices_int64) launch_indexed_typed(p, d, static_cast<const int64_t*>(o.indices), u, static_cast<E*>(o.y), stream);
  else launch_indexed_typed(p, d, static_cast<const int32_t*>(o.indices), u, static_cast<E*>(o.y), stream);
}

}  // namespace

void launch_indexed(int bytes, const IndexedPlan& p, const IndexOperands& o, cudaStream_t stream) {
  switch (bytes) {
    case 1: launch_indexed_elements<uint8_t>(p, o, stream); break;
    case 2: launch_indexed_elements<uint16_t>(p, o, stream); break;
    case 4: launch_indexed_elements<uint32_t>(p, o, stream); break;
    case 8: launch_indexed_elements<uint64_t>(p, o, stream); break;
    default: throw Error(kExitRuntime, "indexed op on elements of " + std::to_string(bytes) + " bytes");
  }
  MC_CUDA_CHECK_LAUNCH();
}

void launch_range(StorageType type, const void* start, const void* delta, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (type) {
    case StorageType::kF32:
      range_kernel<float><<<capped(n), kThreads, 0, stream>>>(static_cast<const float*>(start),
                                                              static_cast<const float*>(delta), static_cast<float*>(y), n);
      break;
    case StorageType::kF64:
      range_kernel<double><<<capped(n), kThreads, 0, stream>>>(static_cast<const double*>(start),
                                                               static_cast<const double*>(delta), static_cast<double*>(y), n);
      break;
    case StorageType::kI64:
      range_kernel<int64_t><<<capped(n), kThreads, 0, stream>>>(
          static_cast<const int64_t*>(start), static_cast<const int64_t*>(delta), static_cast<int64_t*>(y), n);
      break;
    case StorageType::kI32:
      range_kernel<int32_t><<<capped(n), kThreads, 0, stream>>>(
          static_cast<const int32_t*>(start), static_cast<const int32_t*>(delta), static_cast<int32_t*>(y), n);
      break;
    default: throw Error(kExitRuntime, "Range of a dtype other than float, double, int32 or int64");
  }
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
