// Unary and broadcasting binary elementwise kernels, fills and random fills. Contiguous data
// moves in 16-byte vectors; broadcast inputs index through per-dim strides.
#include <cstring>

#include "core/cuda_check.h"
#include "core/device_math.cuh"
#include "core/element_types.cuh"
#include "core/index_math.cuh"
#include "core/kernels.h"
#include "core/storage_access.cuh"

namespace modelcost::cuda {

constexpr int kMaxRank = 8;

struct Indexing {
  int rank;
  int64_t dims[kMaxRank];
  int64_t a[kMaxRank], b[kMaxRank];
};


#define MC_CASE(name, onnx, flops, expr) \
  case ElementwiseOp::k##name: return expr;

// Ops of one input (the vector and scalar unary kernels) and of two (the broadcast binary kernels).
__device__ __forceinline__ float unary(ElementwiseOp op, float a, float alpha, float beta) {
  using namespace device_math;
  using F = float;
  switch (op) {
    MC_UNARY_OPS(MC_CASE)
    default: return a;
  }
}

__device__ __forceinline__ float binary(ElementwiseOp op, float a, float b) {
  using namespace device_math;
  using F = float;
  switch (op) {
    MC_BINARY_OPS(MC_CASE)
    default: return a;
  }
}

#undef MC_CASE

template <typename T>
struct alignas(16) Vec {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <typename T>
__global__ void unary_vector_kernel(ElementwiseOp op, const Vec<T>* x, Vec<T>* y, int64_t vectors, float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < vectors; i += int64_t(gridDim.x) * blockDim.x) {
    Vec<T> in = x[i], out;
#pragma unroll
    for (int k = 0; k < Vec<T>::kSize; ++k) out.v[k] = from_float<T>(unary(op, to_float(in.v[k]), alpha, beta));
    y[i] = out;
  }
}

template <typename T>
__global__ void unary_scalar_kernel(ElementwiseOp op, const T* x, T* y, int64_t begin, int64_t n, float alpha, float beta) {
  for (int64_t i = begin + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = from_float<T>(unary(op, to_float(x[i]), alpha, beta));
}

// The 16-byte vector of an operand at p: loaded whole where its innermost dim is contiguous,
// else its one broadcast element repeated.
template <typename T>
__device__ __forceinline__ Vec<T> load_vector(const T* p, bool contiguous) {
  if (contiguous) return *reinterpret_cast<const Vec<T>*>(p);
  Vec<T> v;
#pragma unroll
  for (int k = 0; k < Vec<T>::kSize; ++k) v.v[k] = *p;
  return v;
}

template <typename T>
__device__ __forceinline__ Vec<T> binary_vector(ElementwiseOp op, const Vec<T>& a, const Vec<T>& b) {
  Vec<T> out;
#pragma unroll
  for (int k = 0; k < Vec<T>::kSize; ++k) out.v[k] = from_float<T>(binary(op, to_float(a.v[k]), to_float(b.v[k])));
  return out;
}

// Offsets of a and b for the element at flat index i of the output (row-major over dims).
__device__ __forceinline__ void offsets(const Indexing& ix, int64_t i, int64_t* oa, int64_t* ob) {
  int64_t a = 0, b = 0;
  for (int d = ix.rank - 1; d >= 0; --d) {
    const int64_t q = i / ix.dims[d], r = i - q * ix.dims[d];
    a += r * ix.a[d];
    b += r * ix.b[d];
    i = q;
  }
  *oa = a;
  *ob = b;
}

template <typename T>
__global__ void binary_kernel(ElementwiseOp op, const T* a, const T* b, T* y, Indexing ix, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    offsets(ix, i, &oa, &ob);
    y[i] = from_float<T>(binary(op, to_float(a[oa]), to_float(b[ob])));
  }
}

// Innermost dim contiguous (stride 1) or broadcast (stride 0) in both inputs and a multiple of the
// vector width: each thread produces one 16-byte vector of outputs.
template <typename T>
__global__ void binary_vector_kernel(ElementwiseOp op, const T* a, const T* b, T* y, Indexing ix, int64_t vectors) {
  constexpr int W = Vec<T>::kSize;
  const int last = ix.rank - 1;
  const bool a_vector = ix.a[last] == 1, b_vector = ix.b[last] == 1;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < vectors; v += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    offsets(ix, v * W, &oa, &ob);
    reinterpret_cast<Vec<T>*>(y)[v] = binary_vector(op, load_vector(a + oa, a_vector), load_vector(b + ob, b_vector));
  }
}

// 32-bit indexing (see index_math.cuh) for up to three strided operands.
struct Indexing32 {
  int rank;
  FastDivider dims[kMaxRank];
  uint32_t a[kMaxRank], b[kMaxRank], c[kMaxRank];
};

__device__ __forceinline__ void offsets32(const Indexing32& ix, uint32_t i, uint32_t* oa, uint32_t* ob, uint32_t* oc) {
  uint32_t a = 0, b = 0, c = 0;
#pragma unroll
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d >= ix.rank) continue;
    const uint32_t q = ix.dims[d].div(i), r = i - q * ix.dims[d].divisor;
    a += r * ix.a[d];
    b += r * ix.b[d];
    c += r * ix.c[d];
    i = q;
  }
  *oa = a;
  *ob = b;
  *oc = c;
}

template <typename T>
__global__ void binary_kernel32(ElementwiseOp op, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                                Indexing32 ix, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t oa, ob, oc;
    offsets32(ix, i, &oa, &ob, &oc);
    y[i] = from_float<T>(binary(op, to_float(a[oa]), to_float(b[ob])));
  }
}

template <typename T>
__global__ void binary_vector_kernel32(ElementwiseOp op, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                                       Indexing32 ix, uint32_t vectors) {
  constexpr int W = Vec<T>::kSize;
  const int last = ix.rank - 1;
  const bool a_vector = ix.a[last] == 1, b_vector = ix.b[last] == 1;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += gridDim.x * blockDim.x) {
    uint32_t oa, ob, oc;
    offsets32(ix, v * W, &oa, &ob, &oc);
    reinterpret_cast<Vec<T>*>(y)[v] = binary_vector(op, load_vector(a + oa, a_vector), load_vector(b + ob, b_vector));
  }
}

// Operands of any dtype, loaded to and stored from float: the generic path (integers, bools,
// comparisons, mixed dtypes, Where).
struct AnyOperands {
  const void* in[3];
  StorageType in_type[3];
  void* out;
  StorageType out_type;
};

__global__ void elementwise_any_kernel(ElementwiseOp op, AnyOperands o, int arity, Indexing32 ix, uint32_t n, float alpha,
                                       float beta) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t oa, ob, oc;
    offsets32(ix, i, &oa, &ob, &oc);
    const float a = load_any(o.in[0], o.in_type[0], oa);
    const float b = arity > 1 ? load_any(o.in[1], o.in_type[1], ob) : 0.f;
    const float c = arity > 2 ? load_any(o.in[2], o.in_type[2], oc) : 0.f;
    store_any(o.out, o.out_type, i, evaluate_elementwise(op, a, b, c, alpha, beta));
  }
}

template <typename In, typename Out>
__global__ void cast_kernel(const In* __restrict__ x, Out* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = from_float<Out>(to_float(x[i]));
}

template <typename T>
__global__ void fill_kernel(T* y, int64_t n, float value) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = from_float<T>(value);
}

__device__ __forceinline__ uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill_random_kernel(T* y, int64_t n, float lo, float hi, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float u = static_cast<float>(mix(seed * 0x9e3779b97f4a7c15ull + i) >> 40) * (1.f / 16777216.f);
    y[i] = from_float<T>(lo + (hi - lo) * u);
  }
}

template <typename I>
__global__ void fill_random_int_kernel(I* y, int64_t n, int64_t range, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = static_cast<I>(mix(seed * 0x9e3779b97f4a7c15ull + i) % static_cast<uint64_t>(range < 1 ? 1 : range));
}

ElementType element_type(int32_t dtype) {
  switch (dtype) {
    case 1: return ElementType::kFloat32;
    case 10: return ElementType::kFloat16;
    case 16: return ElementType::kBFloat16;
  }
  throw Error(kExitRuntime, std::string("no CUDA kernel for dtype ") + dtype_name(dtype));
}

size_t element_bytes(ElementType type) { return type == ElementType::kFloat32 ? 4 : 2; }

namespace {

// Merges adjacent dims whose strides are contiguous in every operand (and the output).
Indexing make_indexing(const std::vector<int64_t>& dims, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb,
                       const std::vector<int64_t>* sc = nullptr, std::vector<int64_t>* merged_c = nullptr) {
  std::vector<int64_t> d, a, b, c;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    const int64_t ci = sc ? (*sc)[i] : 0;
    if (!d.empty() && a.back() == sa[i] * dims[i] && b.back() == sb[i] * dims[i] && c.back() == ci * dims[i]) {
      d.back() *= dims[i];
      a.back() = sa[i];
      b.back() = sb[i];
      c.back() = ci;
    } else {
      d.push_back(dims[i]);
      a.push_back(sa[i]);
      b.push_back(sb[i]);
      c.push_back(ci);
    }
  }
  if (d.empty()) { d = {1}; a = {0}; b = {0}; c = {0}; }
  if (d.size() > kMaxRank) throw Error(kExitRuntime, "elementwise op of rank above 8");
  Indexing ix{};
  ix.rank = static_cast<int>(d.size());
  for (size_t i = 0; i < d.size(); ++i) { ix.dims[i] = d[i]; ix.a[i] = a[i]; ix.b[i] = b[i]; }
  if (merged_c) *merged_c = c;
  return ix;
}

// The 32-bit form of an indexing, or false when some offset would not fit.
bool to_indexing32(const Indexing& ix, const std::vector<int64_t>& c, Indexing32* out) {
  int64_t n = 1, a_end = 1, b_end = 1, c_end = 1;
  for (int k = 0; k < ix.rank; ++k) {
    n *= ix.dims[k];
    a_end += (ix.dims[k] - 1) * ix.a[k];
    b_end += (ix.dims[k] - 1) * ix.b[k];
    c_end += (ix.dims[k] - 1) * (k < static_cast<int>(c.size()) ? c[k] : 0);
  }
  if (!fits_int32(n) || !fits_int32(a_end) || !fits_int32(b_end) || !fits_int32(c_end)) return false;
  *out = Indexing32{};
  out->rank = ix.rank;
  for (int k = 0; k < ix.rank; ++k) {
    out->dims[k] = FastDivider(static_cast<uint32_t>(ix.dims[k]));
    out->a[k] = static_cast<uint32_t>(ix.a[k]);
    out->b[k] = static_cast<uint32_t>(ix.b[k]);
    out->c[k] = static_cast<uint32_t>(k < static_cast<int>(c.size()) ? c[k] : 0);
  }
  return true;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
}  // namespace

void launch_unary(ElementType type, const ElementwisePlan& plan, const void* x, void* y, int64_t n, cudaStream_t stream) {
  const ElementwiseOp op = plan.op;
  const float alpha = static_cast<float>(plan.alpha), beta = static_cast<float>(plan.beta);
  MC_DISPATCH_TYPE(type, {
    const int64_t width = Vec<T>::kSize;
    int64_t vectors = aligned16(x) && aligned16(y) ? n / width : 0;
    if (vectors > 0)
      unary_vector_kernel<T><<<capped_grid(vectors), kThreads, 0, stream>>>(
          op, static_cast<const Vec<T>*>(x), static_cast<Vec<T>*>(y), vectors, alpha, beta);
    if (vectors * width < n)
      unary_scalar_kernel<T><<<capped_grid(n - vectors * width), kThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), vectors * width, n, alpha, beta);
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_binary(ElementType type, const ElementwisePlan& plan, const void* a, const void* b, void* y,
                   cudaStream_t stream) {
  const ElementwiseOp op = plan.op;
  const Indexing ix = make_indexing(plan.dims, plan.input_strides[0], plan.input_strides[1]);
  int64_t n = 1;
  for (int64_t d : plan.dims) n *= d;
  if (n == 0) return;
  Indexing32 ix32;
  const bool small = to_indexing32(ix, {}, &ix32);
  MC_DISPATCH_TYPE(type, {
    const int last = ix.rank - 1;
    const int64_t width = Vec<T>::kSize;
    const bool vector_ok = ix.dims[last] % width == 0 && (ix.a[last] <= 1) && (ix.b[last] <= 1) &&
                           aligned16(a) && aligned16(b) && aligned16(y);
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    T* py = static_cast<T*>(y);
    if (vector_ok && small)
      binary_vector_kernel32<T><<<capped_grid(n / width), kThreads, 0, stream>>>(op, pa, pb, py, ix32,
                                                                                 static_cast<uint32_t>(n / width));
    else if (vector_ok)
      binary_vector_kernel<T><<<capped_grid(n / width), kThreads, 0, stream>>>(op, pa, pb, py, ix, n / width);
    else if (small)
      binary_kernel32<T><<<capped_grid(n), kThreads, 0, stream>>>(op, pa, pb, py, ix32, static_cast<uint32_t>(n));
    else
      binary_kernel<T><<<capped_grid(n), kThreads, 0, stream>>>(op, pa, pb, py, ix, n);
  });
  MC_CUDA_CHECK_LAUNCH();
}

StorageType storage_type(int32_t dtype) {
  switch (dtype) {
    case 1: return StorageType::kF32;
    case 10: return StorageType::kF16;
    case 16: return StorageType::kBF16;
    case 11: return StorageType::kF64;
    case 7: return StorageType::kI64;
    case 6: return StorageType::kI32;
    case 5: return StorageType::kI16;
    case 3: return StorageType::kI8;
    case 2: case 9: return StorageType::kU8;
    case 4: return StorageType::kU16;
    case 12: return StorageType::kU32;
    case 13: return StorageType::kU64;
  }
  throw Error(kExitRuntime, std::string("no elementwise kernel for dtype ") + dtype_name(dtype));
}

void launch_elementwise_any(const ElementwisePlan& plan, const std::vector<AnyOperand>& inputs, void* output,
                            int32_t output_dtype, cudaStream_t stream) {
  const int arity = static_cast<int>(plan.input_strides.size());
  std::vector<int64_t> zeros(plan.dims.size(), 0), merged_c;
  const auto& sb = arity > 1 ? plan.input_strides[1] : zeros;
  const auto& sc = arity > 2 ? plan.input_strides[2] : zeros;
  const Indexing ix = make_indexing(plan.dims, plan.input_strides[0], sb, &sc, &merged_c);
  int64_t n = 1;
  for (int64_t d : plan.dims) n *= d;
  if (n == 0) return;
  Indexing32 ix32;
  if (!to_indexing32(ix, merged_c, &ix32)) throw Error(kExitRuntime, "elementwise op of mixed dtypes over more than 2^31 elements");
  AnyOperands o{};
  for (int k = 0; k < arity; ++k) {
    o.in[k] = inputs[k].data;
    o.in_type[k] = storage_type(inputs[k].dtype);
  }
  o.out = output;
  o.out_type = storage_type(output_dtype);
  elementwise_any_kernel<<<capped_grid(n), kThreads, 0, stream>>>(plan.op, o, arity, ix32, static_cast<uint32_t>(n),
                                                                  static_cast<float>(plan.alpha), static_cast<float>(plan.beta));
  MC_CUDA_CHECK_LAUNCH();
}

void launch_cast(ElementType from, ElementType to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  MC_DISPATCH_TYPE(from, {
    using In = T;
    MC_DISPATCH_TYPE(to, cast_kernel<In, T><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<const In*>(x),
                                                                                     static_cast<T*>(y), n));
  });
  MC_CUDA_CHECK_LAUNCH();
}

void launch_fill(ElementType type, void* y, int64_t n, float value, cudaStream_t stream) {
  if (n == 0) return;
  MC_DISPATCH_TYPE(type, fill_kernel<T><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<T*>(y), n, value));
  MC_CUDA_CHECK_LAUNCH();
}

void launch_fill_random(ElementType type, void* y, int64_t n, float lo, float hi, uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  MC_DISPATCH_TYPE(type, fill_random_kernel<T><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<T*>(y), n, lo, hi, seed));
  MC_CUDA_CHECK_LAUNCH();
}

void launch_fill_random_int(void* y, int64_t n, int bytes, int64_t range, uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  if (bytes == 8) fill_random_int_kernel<int64_t><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<int64_t*>(y), n, range, seed);
  else if (bytes == 4) fill_random_int_kernel<int32_t><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<int32_t*>(y), n, range, seed);
  else if (bytes == 1) fill_random_int_kernel<uint8_t><<<capped_grid(n), kThreads, 0, stream>>>(static_cast<uint8_t*>(y), n, range, seed);
  else throw Error(kExitRuntime, "random fill of integers of " + std::to_string(bytes) + " bytes");
  MC_CUDA_CHECK_LAUNCH();
}

}  // namespace modelcost::cuda
