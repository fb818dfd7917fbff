// StepGemm (step_gemm.h). Column-major view: y^T [N,M] = op_T(W) [N,K] x^T [K,M], so the
// stored [N,K] weight is cuBLASLt's first operand, transposed.
#include "llm/step_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "core/cuda_check.h"
#include "gemm/skinny_gemm.h"
#include "timing/captured_graph.h"

namespace modelcost::cuda {

namespace {

void set_batch(cublasLtMatrixLayout_t layout, int64_t count, int64_t stride) {
  const int32_t batch = static_cast<int32_t>(count);
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
}

}  // namespace

StepGemm::StepGemm(cublasLtHandle_t lt, const StepGemmShape& shape, GemmWorkspace workspace)
    : lt_(lt), shape_(shape), workspace_(workspace) {
  MC_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  MC_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)));
  const uint64_t m = shape.m, n = shape.n, k = shape.k;
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&w_, CUDA_R_16F, k, n, k));
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&x_, CUDA_R_16F, k, m, shape.x_ld > 0 ? shape.x_ld : k));
  MC_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&y_, CUDA_R_16F, n, m, shape.y_ld > 0 ? shape.y_ld : n));
  if (shape.batch > 1) {
    set_batch(w_, shape.batch, static_cast<int64_t>(n * k));
    set_batch(x_, shape.batch, shape.x_batch_stride);
    set_batch(y_, shape.batch, shape.y_batch_stride);
  }
  // The heuristic's candidates with the workspace, then without it: a product too small to fill
  // the GPU gets split-K candidates (a second, reduction kernel) first, and the ones that need no
  // workspace run in one kernel.
  for (const uint64_t most : {static_cast<uint64_t>(workspace.bytes), uint64_t(0)}) {
    cublasLtMatmulPreference_t pref;
    MC_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    MC_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &most, sizeof(most)));
    cublasLtMatmulHeuristicResult_t results[kMaxCandidates];
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt_, desc_, w_, x_, y_, y_, pref, kMaxCandidates - candidates_,
                                                                 results, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (status != CUBLAS_STATUS_SUCCESS) found = 0;
    for (int i = 0; i < found; ++i) candidates_algos_[candidates_++] = results[i].algo;
  }
  if (candidates_ == 0)
    throw Error(kExitRuntime, "cuBLASLt offers no algorithm for an fp16 product of " + std::to_string(m) + "x" +
                                  std::to_string(n) + "x" + std::to_string(k));
  algo_ = candidates_algos_[0];
}

StepGemm::~StepGemm() {
  if (w_) cublasLtMatrixLayoutDestroy(w_);
  if (x_) cublasLtMatrixLayoutDestroy(x_);
  if (y_) cublasLtMatrixLayoutDestroy(y_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void StepGemm::enqueue(const __half* x, const __half* w, __half* y, cudaStream_t stream) const {
  if (skinny_) {
    launch_skinny_gemm(skinny_args(x, w, y), stream);
    return;
  }
  const float alpha = 1.f, beta = shape_.accumulate ? 1.f : 0.f;
  MC_CUBLASLT_CHECK(cublasLtMatmul(lt_, desc_, &alpha, w, w_, x, x_, &beta, y, y_, y, y_, &algo_, workspace_.data,
                             workspace_.bytes, stream));
}

namespace {

struct CandidateRun {
  bool ok = false;
  int kernels = 0;  // per product
  float ms = 0;     // per product
};

// `runs` products captured in a CUDA graph, as the step runs them: kernels per product, and the
// best of three replays per product.
CandidateRun run_candidate(const std::function<void()>& enqueue, cudaStream_t stream, int runs) {
  CandidateRun r;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  try {
    enqueue();  // once outside the capture: loads the candidate's kernels (lazy module loading)
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (const Error&) {
    cudaGetLastError();
    return r;
  }
  MC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  bool enqueued = true;
  try {
    for (int i = 0; i < runs; ++i) enqueue();
  } catch (const Error&) {
    enqueued = false;  // a candidate cuBLASLt refuses for these buffers
  }
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!enqueued || ended != cudaSuccess || !graph || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return r;
  }
  r.kernels = static_cast<int>(count_kernel_nodes(graph) / runs);
  cudaEvent_t start, stop;
  MC_CUDA_CHECK(cudaEventCreate(&start));
  MC_CUDA_CHECK(cudaEventCreate(&stop));
  MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up
  r.ms = std::numeric_limits<float>::infinity();
  for (int k = 0; k < 3; ++k) {
    MC_CUDA_CHECK(cudaEventRecord(start, stream));
    MC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    MC_CUDA_CHECK(cudaEventRecord(stop, stream));
    MC_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    MC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    r.ms = std::min(r.ms, ms / runs);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  r.ok = true;
  return r;
}

}  // namespace

int64_t count_kernel_nodes(cudaGraph_t graph) { return static_cast<int64_t>(count_graph_nodes(graph).kernels); }

SkinnyGemmArgs StepGemm::skinny_args(const __half* x, const __half* w, __half* y) const {
  return {x, w, y, static_cast<int>(shape_.m), static_cast<int>(shape_.n), static_cast<int>(shape_.k), shape_.accumulate};
}

// The step runs one kernel per product: the fastest one-kernel candidate wins; candidates that
// add a split-K reduction kernel only when none runs in one.
void StepGemm::autotune(const __half* x, const std::vector<const __half*>& weights, __half* y, cudaStream_t stream) {
  // 20 products per graph; fewer for a prefill's large products (about 0.4 TFLOP per graph), so
  // that the candidates of a long prompt are timed in seconds.
  const double flops = 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.n) * static_cast<double>(shape_.k);
  const int kRuns = static_cast<int>(std::clamp(4e11 / flops, 3.0, 20.0));
  size_t call = 0;
  auto next = [&] { return weights[call++ % weights.size()]; };
  skinny_ = false;
  bool best_single = false;
  float best_ms = std::numeric_limits<float>::infinity();
  for (int i = 0; i < candidates_; ++i) {
    algo_ = candidates_algos_[i];
    const CandidateRun r = run_candidate([&] { enqueue(x, next(), y, stream); }, stream, kRuns);
    if (!r.ok) continue;
    ++ran_;
    const bool single = r.kernels == 1;
    if ((single && !best_single) || (single == best_single && r.ms < best_ms)) {
      best_single = single;
      best_ms = r.ms;
      chosen_ = i;
      chosen_kernels_ = r.kernels;
      chosen_us_ = r.ms * 1e3;
    }
  }
  algo_ = candidates_algos_[chosen_];
  if (!shape_.plain() || !skinny_gemm_supports(skinny_args(x, weights.front(), y))) return;
  const CandidateRun r = run_candidate([&] { launch_skinny_gemm(skinny_args(x, next(), y), stream); }, stream, kRuns);
  if (!r.ok) return;
  skinny_us_ = r.ms * 1e3;
  skinny_ = !best_single || r.ms < best_ms;
}

std::string StepGemm::description() const {
  if (skinny_)
    return fmt::format("skinny {}x{}x{}{} ({:.1f} us; cuBLASLt's best {:.1f} us)", shape_.m, shape_.n, shape_.k,
                       shape_.accumulate ? " +residual" : "", skinny_us_, chosen_us_);
  const std::string batch = shape_.batch > 1 ? fmt::format("{} x ", shape_.batch) : "";
  return fmt::format("cuBLASLt {}{}x{}x{}{} (candidate {} of {}, {} ran; {} kernel{}, {:.1f} us)", batch, shape_.m, shape_.n,
                     shape_.k, shape_.accumulate ? " +residual" : "", chosen_ + 1, candidates_, ran_, chosen_kernels_,
                     chosen_kernels_ == 1 ? "" : "s", chosen_us_);
}

}  // namespace modelcost::cuda
