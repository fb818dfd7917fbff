// Loads and stores of any stored element type through float: the generic kernels (elementwise
// over mixed dtypes, the quantization kernels) read and write every dtype with them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/kernels.h"

namespace modelcost::cuda {

template <typename Index>
__device__ __forceinline__ float load_any(const void* p, StorageType t, Index i) {
  switch (t) {
    case StorageType::kF32: return static_cast<const float*>(p)[i];
    case StorageType::kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case StorageType::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case StorageType::kF64: return static_cast<float>(static_cast<const double*>(p)[i]);
    case StorageType::kI64: return static_cast<float>(static_cast<const int64_t*>(p)[i]);
    case StorageType::kI32: return static_cast<float>(static_cast<const int32_t*>(p)[i]);
    case StorageType::kI16: return static_cast<float>(static_cast<const int16_t*>(p)[i]);
    case StorageType::kI8: return static_cast<float>(static_cast<const int8_t*>(p)[i]);
    case StorageType::kU8: return static_cast<float>(static_cast<const uint8_t*>(p)[i]);
    case StorageType::kU16: return static_cast<float>(static_cast<const uint16_t*>(p)[i]);
    case StorageType::kU32: return static_cast<float>(static_cast<const uint32_t*>(p)[i]);
    case StorageType::kU64: return static_cast<float>(static_cast<const uint64_t*>(p)[i]);
  }
  return 0.f;
}

template <typename Index>
__device__ __forceinline__ void store_any(void* p, StorageType t, Index i, float v) {
  switch (t) {
    case StorageType::kF32: static_cast<float*>(p)[i] = v; break;
    case StorageType::kF16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case StorageType::kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    case StorageType::kF64: static_cast<double*>(p)[i] = v; break;
    case StorageType::kI64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case StorageType::kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case StorageType::kI16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
    case StorageType::kI8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case StorageType::kU8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
    case StorageType::kU16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
    case StorageType::kU32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
    case StorageType::kU64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
  }
}

}  // namespace modelcost::cuda
