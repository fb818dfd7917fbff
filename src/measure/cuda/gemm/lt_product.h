// A row-major product D (m x n) = A (m x k) * B^T, B stored [n, k] (the layout of ONNX's
// recurrence weights), of one shape, with cuBLASLt's heuristic algorithm: the operands are given
// at each launch, so that one product serves every time step of a recurrent layer.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/device_buffer.h"

namespace modelcost::cuda {

class LtProduct {
 public:
  struct Shape {
    int64_t m = 0, n = 0, k = 0;
    int64_t ldb = 0;  // B's row stride (elements); 0: k
  };
  // dtype: ONNX float dtype of A, B and D; allow_tf32 for fp32.
  LtProduct(cublasLtHandle_t handle, Shape shape, int32_t dtype, bool allow_tf32, size_t max_workspace);
  ~LtProduct();
  LtProduct(const LtProduct&) = delete;
  LtProduct& operator=(const LtProduct&) = delete;
  void launch(const void* a, const void* b, void* d, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer workspace_;
};

}  // namespace modelcost::cuda
