// The fused pointwise chain interpreted: one thread per output element walks the chain's steps
// (ops from the elementwise list through device_math.cuh), reading each external input once
// through its broadcast strides and storing only the chain's outputs. The fallback where NVRTC is
// missing: the chain's generated kernel (chain_source.h) runs several times faster on large
// tensors, since here the op switch and the step values' local array cost per element.
#include "core/cuda_check.h"
#include "core/device_math.cuh"
#include "core/element_types.cuh"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {

int64_t ChainProgram::elements() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

void ChainProgram::set_flat() {
  flat = true;
  for (int k = 0; k < inputs; ++k) {
    bool contiguous = true, scalar = true;
    int64_t expected = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (dims[d] == 1) continue;
      contiguous = contiguous && strides[k][d] == expected;
      scalar = scalar && strides[k][d] == 0;
      expected *= dims[d];
    }
    flat = flat && (contiguous || scalar);
    flat_stride[k] = contiguous ? 1 : 0;
  }
}

namespace {

__device__ __forceinline__ float load_as_float(const void* p, ElementType type, int64_t i) {
  switch (type) {
    case ElementType::kFloat16: return __half2float(static_cast<const __half*>(p)[i]);
    case ElementType::kBFloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store_from_float(void* p, ElementType type, int64_t i, float v) {
  switch (type) {
    case ElementType::kFloat16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case ElementType::kBFloat16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v;
  }
}

// The program is copied to shared memory first: indexing the kernel parameter with run-time
// indices would copy it to each thread's local memory.
__global__ void pointwise_chain_kernel(const ChainProgram program, int64_t n) {
  __shared__ ChainProgram p;
  for (int i = threadIdx.x; i < int(sizeof(ChainProgram) / 4); i += blockDim.x)
    reinterpret_cast<int*>(&p)[i] = reinterpret_cast<const int*>(&program)[i];
  __syncthreads();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t offset[kChainMaxInputs];
#pragma unroll
    for (int k = 0; k < kChainMaxInputs; ++k) offset[k] = p.flat ? i * p.flat_stride[k] : 0;
    if (!p.flat) {
      // 32-bit division where the indices fit: 64-bit division is many times slower.
      if (n < (int64_t(1) << 31)) {
        uint32_t rest = static_cast<uint32_t>(i);
        for (int d = p.rank - 1; d >= 0; --d) {
          const uint32_t dim = static_cast<uint32_t>(p.dims[d]), q = rest / dim, r = rest - q * dim;
#pragma unroll
          for (int k = 0; k < kChainMaxInputs; ++k)
            if (k < p.inputs) offset[k] += int64_t(r) * p.strides[k][d];
          rest = q;
        }
      } else {
        int64_t rest = i;
        for (int d = p.rank - 1; d >= 0; --d) {
          const int64_t q = rest / p.dims[d], r = rest - q * p.dims[d];
#pragma unroll
          for (int k = 0; k < kChainMaxInputs; ++k)
            if (k < p.inputs) offset[k] += r * p.strides[k][d];
          rest = q;
        }
      }
    }
    float input[kChainMaxInputs];
#pragma unroll
    for (int k = 0; k < kChainMaxInputs; ++k)
      if (k < p.inputs) input[k] = load_as_float(p.input[k], p.input_type[k], offset[k]);
    float value[kChainMaxSteps];
    float last = 0.f;
    for (int s = 0; s < p.steps; ++s) {
      const ChainStep& st = p.step[s];
      float x[3];
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        const int o = st.operand[k];
        float v = 0.f;
#pragma unroll
        for (int j = 0; j < kChainMaxInputs; ++j)
          if (o == j) v = input[j];
        x[k] = o >= 0 ? v : value[-o - 1];
      }
      last = evaluate_elementwise(st.op, x[0], x[1], x[2], st.alpha, st.beta);
      value[s] = last;
    }
    for (int o = 0; o < p.outputs; ++o)
      store_from_float(p.output[o], p.output_type[o], i, p.output_step[o] == p.steps - 1 ? last : value[p.output_step[o]]);
  }
}

}  // namespace

void launch_pointwise_chain(const ChainProgram& program, cudaStream_t stream) {
  const int64_t n = program.elements();
  if (n == 0) return;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(132) * 8);
  pointwise_chain_kernel<<<static_cast<int>(blocks), kThreads, 0, stream>>>(program, n);
  MC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace modelcost::cuda
