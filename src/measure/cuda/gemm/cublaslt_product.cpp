#include "gemm/cublaslt_product.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "timing/sampler.h"

namespace modelcost::cuda {
namespace {

void set_batches(cublasLtMatrixLayout_t layout, int32_t count, int64_t stride) {
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

}  // namespace

LtProductLayouts::LtProductLayouts(const MatMulParams& m, cudaDataType_t type, int64_t interleaved_batches) {
  const uint64_t n = m.n, k = m.k;
  const int64_t groups = interleaved_batches > 1 && m.batch == 1 && !m.trans_a ? interleaved_batches : 1;
  const uint64_t rows = m.m / groups;
  // B row-major [K, N] is column-major N x K (ld N); transposed, stored [N, K]: K x N (ld K).
  MC_CUBLASLT_CHECK(m.trans_b ? cublasLtMatrixLayoutCreate(&b, type, k, n, k) : cublasLtMatrixLayoutCreate(&b, type, n, k, n));
  if (groups > 1) {  // A's row (s, g) sits at (s G + g) K: G batches K apart, rows G K apart
    MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&a, type, k, rows, k * groups));
  } else {
    MC_CUBLASLT_CHECK(m.trans_a ? cublasLtMatrixLayoutCreate(&a, type, rows, k, rows) : cublasLtMatrixLayoutCreate(&a, type, k, rows, k));
  }
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&d, type, n, rows, n));
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&c, type, n, rows, n));
  const int64_t batches = groups > 1 ? groups : m.batch;
  if (batches <= 1) return;
  const int64_t a_stride = groups > 1 ? m.k : m.a_batch_stride, b_stride = groups > 1 ? 0 : m.b_batch_stride;
  const int64_t d_stride = static_cast<int64_t>(rows) * m.n;
  for (auto [layout, stride] : {std::pair{a, a_stride}, std::pair{b, b_stride}, std::pair{c, d_stride}, std::pair{d, d_stride}})
    set_batches(layout, static_cast<int32_t>(batches), stride);
}

LtProductLayouts::~LtProductLayouts() {
  for (auto* layout : {a, b, c, d})
    if (layout) cublasLtMatrixLayoutDestroy(layout);
}

bool choose_lt_algorithm(CudaContext& ctx, cublasLtMatmulDesc_t desc, const LtProductLayouts& layouts, DeviceBuffer& workspace,
                         const std::function<cublasStatus_t(const cublasLtMatmulAlgo_t&, cudaStream_t)>& call,
                         LtAlgorithmChoice& choice) {
  cublasLtMatmulPreference_t pref;
  MC_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t max_ws = std::min<size_t>(ctx.max_workspace_bytes, size_t(64) << 20);
  MC_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
  std::vector<cublasLtMatmulHeuristicResult_t> results(ctx.autotune ? 16 : 1);
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc, layouts.b, layouts.a, layouts.c, layouts.d, pref,
                                                               static_cast<int>(results.size()), results.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || returned == 0) return false;
  workspace.resize(max_ws);
  choice.algo = results[0].algo;
  if (!ctx.autotune || returned == 1) return true;
  // Each candidate timed as a measurement times (CUPTI kernel durations).
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulAlgo_t candidate = results[i].algo;
    if (call(candidate, ctx.stream) != CUBLAS_STATUS_SUCCESS) continue;
    const double us =
        quick_median_us(*ctx.timing, [&](cudaStream_t s) { MC_CUBLASLT_CHECK(call(candidate, s)); }, ctx.stream, {{}, best});
    if (us < best) {
      best = us;
      choice.algo = candidate;
    }
  }
  choice.tuned = true;
  return true;
}

}  // namespace modelcost::cuda
