// What the two cuBLASLt users of the measurement (the per-node MatMul/Gemm runner and the
// deployed view's GEMM with its epilogue) share: the status check, the matrix layouts of a
// row-major product and the choice of algorithm. Row-major D = A B is computed as column-major
// D^T = B^T A^T, so B is cuBLASLt's first operand.
#pragma once
#include <cublasLt.h>

#include <functional>

#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/runner.h"
#include "ops/measured_kinds.h"

namespace modelcost::cuda {

// The layouts of A, B, C (shaped as D) and D for the product `m`. With interleaved_batches G > 1
// (an unbatched product, A not transposed) the product's rows, ordered (s, g) with g fastest, are
// computed as G strided batches and D is written in (g, s) order: the [S, G, N] -> [G, S, N]
// transpose after a sequence-first projection folded into the product's store.
class LtProductLayouts {
 public:
  LtProductLayouts(const MatMulParams& m, cudaDataType_t type, int64_t interleaved_batches = 1);
  ~LtProductLayouts();
  LtProductLayouts(const LtProductLayouts&) = delete;
  LtProductLayouts& operator=(const LtProductLayouts&) = delete;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
};

// The heuristic's first algorithm, or with ctx.autotune the fastest of its candidates timed on
// the actual buffers through `call` (candidates it refuses are skipped). False where cuBLASLt
// offers none. The workspace is sized to what the algorithms may use.
struct LtAlgorithmChoice {
  cublasLtMatmulAlgo_t algo{};
  bool tuned = false;
};
bool choose_lt_algorithm(CudaContext& ctx, cublasLtMatmulDesc_t desc, const LtProductLayouts& layouts, DeviceBuffer& workspace,
                         const std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&, cudaStream_t)>& call,
                         LtAlgorithmChoice& choice);

}  // namespace modelcost::cuda
