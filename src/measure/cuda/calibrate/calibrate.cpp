// An empirical roofline of the local GPU: achievable DRAM bandwidth (streaming copy of 1 GiB,
// read + write bytes counted), vector FP32 and FP16 peaks (register-only FMA kernels), and
// tensor peaks per dtype from large cuBLASLt GEMMs on random data (8192^3; fp8 e4m3 in, bf16 out).
#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include <cstdio>

#include "calibrate/allreduce_calibration.h"
#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

// Median of `runs` event-timed calls after two warm-ups, in seconds.
double median_seconds(cudaStream_t stream, int runs, const std::function<void()>& enqueue) {
  cudaEvent_t begin, end;
  MC_CUDA_CHECK(cudaEventCreate(&begin));
  MC_CUDA_CHECK(cudaEventCreate(&end));
  enqueue();
  enqueue();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    MC_CUDA_CHECK(cudaEventRecord(begin, stream));
    enqueue();
    MC_CUDA_CHECK(cudaEventRecord(end, stream));
    MC_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    MC_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

NodeSpec square_matmul_spec(int64_t n, int32_t dtype, bool tf32) {
  NodeSpec s;
  s.name = "calibrate_gemm";
  s.op_type = "MatMul";
  s.opset = 17;
  s.allow_tf32 = tf32;
  TensorSpec t;
  t.present = true;
  t.shape = {n, n};
  t.dtype = dtype;
  s.inputs = {t, t};
  s.outputs = {t};
  return s;
}

// fp8 (e4m3) GEMM straight through cuBLASLt: fp8 needs the "TN" layout and a 16-bit output.
double fp8_gemm_tflops(CudaContext& ctx, int64_t n, void* a, void* b, void* d, DeviceBuffer& workspace) {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  auto cleanup = [&] {
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (desc) cublasLtMatmulDescDestroy(desc);
  };
  const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
  bool ok = cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof(nop)) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, n, n, n) == CUBLAS_STATUS_SUCCESS;
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  if (ok) {
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const uint64_t ws = workspace.bytes();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    ok = cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc, la, lb, ld, ld, pref, 1, &result, &returned) == CUBLAS_STATUS_SUCCESS &&
         returned > 0;
    cublasLtMatmulPreferenceDestroy(pref);
  }
  double tflops = 0;
  if (ok) {
    const float alpha = 1.f, beta = 0.f;
    const double s = median_seconds(ctx.stream, 10, [&] {
      cublasLtMatmul(ctx.lt, desc, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &result.algo, workspace.data(),
                     workspace.bytes(), ctx.stream);
    });
    tflops = 2.0 * n * n * n / s / 1e12;
  }
  cleanup();
  return tflops;
}

// DRAM: 1 GiB copied, 2 GiB moved.
void calibrate_dram(cudaStream_t stream, int sms, CalibrationResult& r) {
  const size_t bytes = size_t(1) << 30;
  DeviceBuffer src(bytes), dst(bytes);
  launch_fill_random(ElementType::kFloat32, src.data(), bytes / 4, -1.f, 1.f, 7, stream);
  const double s = median_seconds(stream, 20, [&] { launch_stream_copy(src.data(), dst.data(), bytes, sms * 4, stream); });
  r.dram_gbps = 2.0 * bytes / s / 1e9;
  r.notes.push_back("dram: 1 GiB device copy, 16-byte accesses, read + write bytes, median of 20");
}

// Vector FMA peaks: enough blocks for several waves, registers only.
void calibrate_vector_peaks(cudaStream_t stream, int sms, CalibrationResult& r) {
  DeviceBuffer sink(1 << 16);
  const int blocks = sms * 16, threads = 256, iterations = 8192;
  double flops = 0;
  double s = median_seconds(stream, 10, [&] { flops = launch_fma_fp32(static_cast<float*>(sink.data()), blocks, threads, iterations, stream); });
  r.fp32_vector_tflops = flops / s / 1e12;
  r.notes.push_back("vector fp32: FMA loop of 8 independent chains per thread, 2 flops per FMA");
  // fp16: the best of 8, 16 and 32 independent half2 chains (HFMA2 throughput depends on how
  // ptxas schedules them); the note names each figure.
  std::string fp16_note = "vector fp16: HFMA2 loops, 4 flops per HFMA2, best of";
  for (int chains : {8, 16, 32}) {
    const int its = iterations * 8 / chains;
    s = median_seconds(stream, 10, [&] { flops = launch_fma_fp16(sink.data(), blocks, threads, its, chains, stream); });
    const double tflops = flops / s / 1e12;
    r.fp16_vector_tflops = std::max(r.fp16_vector_tflops, tflops);
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %d chains %.1f TF;", chains, tflops);
    fp16_note += buf;
  }
  r.notes.push_back(fp16_note);
}

// Tensor peaks: 8192^3 GEMMs through the same cuBLASLt runner the measurements use (autotuned
// as `autotune` says), and fp8 straight through cuBLASLt where the GPU has it (sm_89 on).
void calibrate_tensor_peaks(CudaContext& ctx, const DeviceInfo& info, bool autotune, CalibrationResult& r) {
  const int64_t n = 8192;
  struct Case { const char* name; int32_t dtype; bool tf32; };
  const Case cases[] = {{"fp32", 1, false}, {"tf32", 1, true}, {"fp16", 10, false}, {"bf16", 16, false}};
  DeviceBuffer a(n * n * 4), b(n * n * 4), d(n * n * 4);
  for (const Case& c : cases) {
    const NodeSpec spec = square_matmul_spec(n, c.dtype, c.tf32);
    MatMulParams product;  // a made-up node: its plan written out
    product.m = product.n = product.k = n;
    std::string reason;
    auto runner = make_runner(spec, product, &reason);
    if (!runner) continue;
    const ElementType type = element_type(c.dtype);
    launch_fill_random(type, a.data(), n * n, -1.f, 1.f, 11, ctx.stream);
    launch_fill_random(type, b.data(), n * n, -1.f, 1.f, 12, ctx.stream);
    std::vector<DeviceTensor> in(2), out(1);
    in[0] = {a.data(), spec.inputs[0]};
    in[1] = {b.data(), spec.inputs[1]};
    out[0] = {d.data(), spec.outputs[0]};
    const bool context_autotune = ctx.autotune;
    ctx.autotune = autotune;
    runner->prepare(in, out, ctx);
    ctx.autotune = context_autotune;
    const double s = median_seconds(ctx.stream, 10, [&] { runner->launch(ctx.stream); });
    r.tensor_tflops[c.name] = 2.0 * n * n * n / s / 1e12;
  }
  if (info.compute_capability_major >= 9 || (info.compute_capability_major == 8 && info.compute_capability_minor >= 9)) {
    // fp8 bytes: random bytes are random e4m3 values (NaN patterns are rare: 2 of 256).
    launch_fill_random_int(a.data(), n * n, 1, 120, 13, ctx.stream);
    launch_fill_random_int(b.data(), n * n, 1, 120, 14, ctx.stream);
    DeviceBuffer workspace(size_t(64) << 20);
    const double t = fp8_gemm_tflops(ctx, n, a.data(), b.data(), d.data(), workspace);
    if (t > 0) r.tensor_tflops["fp8"] = t;
  }
  r.notes.push_back("tensor: cuBLASLt 8192^3 GEMMs on random data, fp32 accumulation, median of 10 after 2 warm-ups");
}

}  // namespace

CalibrationResult CudaBackend::calibrate(const MeasureOptions& options) {
  CalibrationResult r;
  r.device = info_;
  cudaStream_t stream = context_.stream;
  const int sms = std::max(1, info_.multiprocessors);
  calibrate_dram(stream, sms, r);
  calibrate_vector_peaks(stream, sms, r);
  calibrate_tensor_peaks(context_, info_, options.autotune, r);
  calibrate_kernel_overhead(timing_, stream, r, r.dram_gbps, sms);
  calibrate_library_kernels(r);
  calibrate_decode_kernels(stream, sms, r);
  calibrate_attention_load(stream, r);
  r.library_curves = fit_library_curves(r.library_kernels);
  r.library_gap_us = median_library_gap_us(r.library_kernels);
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));
  const AllReduceFigures allreduce = calibrate_allreduce();
  r.allreduce_ranks = allreduce.ranks;
  r.allreduce_bus_gbps = allreduce.bus_gbps;
  r.allreduce_latency_us = allreduce.step_latency_us;
  r.allreduce_curve.ranks = allreduce.ranks;
  r.allreduce_curve.bytes_us = allreduce.bytes_us;
  r.notes.push_back(allreduce.note);
  return r;
}

}  // namespace modelcost::cuda
