// Times the channels-last depthwise algorithms (direct, tiled, one pixel a thread of 16 bytes or
// of 2 channels, staged; fp16) on the zoo's depthwise shapes and prints each one's time, the
// fastest over direct, and the DRAM roofline of the conv (input, weights and output once at --bandwidth GB/s);
// checks that all give the same outputs.
// Usage: depthwise_kernels [--bandwidth 3350] [--case SUBSTRING] [--batch N]   (those cases and batches only)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/kernels.h"

namespace {

using modelcost::cuda::DepthwiseAlgorithm;
using modelcost::cuda::DepthwiseGeometry;

struct Case {
  const char* where;
  int64_t batch, in_channels, size;
  int kernel, stride;
  int64_t multiplier = 1;
  int dilation = 1;
};

// Each case at batch 1 and 32 (the zoo's two batches).
const std::vector<Case>& cases() {
  static const std::vector<Case> list = {
      {"pvt-v2 stage 1", 1, 256, 56, 3, 1},      {"pvt-v2 stage 2", 1, 512, 28, 3, 1},
      {"convnext 7x7 s1", 1, 96, 56, 7, 1},      {"convnext 7x7 s3", 1, 384, 14, 7, 1},
      {"convnext 7x7 s4", 1, 768, 7, 7, 1},      {"effnet 3x3 s2", 1, 96, 112, 3, 2},
      {"effnet 5x5 s1", 1, 240, 28, 5, 1},       {"effnet 5x5 14", 1, 672, 14, 5, 1},
      {"effnet 3x3 7", 1, 1152, 7, 3, 1},        {"fastvit 7x7 s2 x2", 1, 48, 64, 7, 2, 2},
      {"fastvit 3x3 s1", 1, 48, 64, 3, 1},       {"convmixer 9x9", 1, 768, 37, 9, 1},
      {"mobilenet 3x3 s1", 1, 144, 56, 3, 1},    {"mixnet 9x9 90ch", 1, 90, 14, 9, 1},
      {"mixnet 3x3 300ch", 1, 300, 7, 3, 1},     {"mixnet 9x9 7", 1, 144, 7, 9, 1},
      {"ghostnet 3x3 36ch", 1, 36, 56, 3, 1},    {"ghostnet 3x3 12ch", 1, 12, 56, 3, 1},
      {"ghostnet 3x3 60ch", 1, 60, 28, 3, 1},    {"ghostnet 5x5 36ch", 1, 36, 56, 5, 2},
      {"deeplab 5x5 d2", 1, 960, 32, 5, 1, 1, 2}, {"deeplab 3x3 d2", 1, 480, 32, 3, 1, 1, 2},
  };
  return list;
}

DepthwiseGeometry geometry(const Case& c, int64_t batch) {
  DepthwiseGeometry g{};
  const int64_t span = int64_t(c.kernel - 1) * c.dilation + 1, pad = span / 2;
  const int64_t out = (c.size + 2 * pad - span) / c.stride + 1;
  g.batch = batch;
  g.channels = c.in_channels * c.multiplier;
  g.in_h = g.in_w = c.size;
  g.out_h = g.out_w = out;
  g.kernel_h = g.kernel_w = c.kernel;
  g.stride_h = g.stride_w = c.stride;
  g.pad_h = g.pad_w = static_cast<int>(pad);
  g.dilation_h = g.dilation_w = c.dilation;
  g.channels_last = true;
  g.multiplier = c.multiplier;
  return g;
}

float median_us(const DepthwiseGeometry& g, const modelcost::cuda::DepthwiseOperands& ops) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 5; ++i) modelcost::cuda::launch_depthwise_conv(modelcost::cuda::ElementType::kFloat16, g, ops, nullptr);
  std::vector<float> trials;
  for (int t = 0; t < 9; ++t) {
    constexpr int kReps = 20;
    cudaEventRecord(start);
    for (int i = 0; i < kReps; ++i) modelcost::cuda::launch_depthwise_conv(modelcost::cuda::ElementType::kFloat16, g, ops, nullptr);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    trials.push_back(ms * 1000.f / kReps);
  }
  std::sort(trials.begin(), trials.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return trials[trials.size() / 2];
}

std::vector<__half> random_halves(size_t n, unsigned seed) {
  std::vector<__half> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = __float2half(static_cast<float>(seed >> 8) / float(1 << 24) - 0.5f);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  double bandwidth = 3350;  // GB/s: an H100 SXM's HBM3 datasheet figure
  std::string only_case;
  int64_t only_batch = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--bandwidth") == 0) bandwidth = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--case") == 0) only_case = argv[i + 1];
    else if (std::strcmp(argv[i], "--batch") == 0) only_batch = std::atoll(argv[i + 1]);
  std::printf("%-20s %5s %10s %10s %10s %10s %10s %10s %10s %9s\n", "case", "batch", "direct_us", "tiled_us", "pixel_us",
              "pair_us", "staged_us", "best/direct", "dram_us", "max_diff");
  double log_sum = 0;
  int timed = 0;
  for (const Case& c : cases())
    for (int64_t batch : {int64_t(1), int64_t(32)}) {
      if ((!only_case.empty() && std::string(c.where).find(only_case) == std::string::npos) || (only_batch && batch != only_batch))
        continue;
      DepthwiseGeometry g = geometry(c, batch);
      const size_t nx = g.batch * c.in_channels * g.in_h * g.in_w, nw = g.channels * c.kernel * c.kernel,
                   ny = g.batch * g.channels * g.out_h * g.out_w;
      void *x, *w, *b, *y1, *y2;
      cudaMalloc(&x, nx * 2);
      cudaMalloc(&w, nw * 2);
      cudaMalloc(&b, g.channels * 2);
      cudaMalloc(&y1, ny * 2);
      cudaMalloc(&y2, ny * 2);
      const auto hx = random_halves(nx, 1), hw = random_halves(nw, 2), hb = random_halves(g.channels, 3);
      cudaMemcpy(x, hx.data(), nx * 2, cudaMemcpyHostToDevice);
      cudaMemcpy(w, hw.data(), nw * 2, cudaMemcpyHostToDevice);
      cudaMemcpy(b, hb.data(), g.channels * 2, cudaMemcpyHostToDevice);
      g.algorithm = DepthwiseAlgorithm::kDirect;
      const float direct = median_us(g, {x, w, b, y1});
      std::vector<__half> reference(ny), other(ny);
      cudaMemcpy(reference.data(), y1, ny * 2, cudaMemcpyDeviceToHost);
      float times[4] = {NAN, NAN, NAN, NAN}, diff = 0, best = direct;
      const DepthwiseAlgorithm others[4] = {DepthwiseAlgorithm::kTiled, DepthwiseAlgorithm::kPixel, DepthwiseAlgorithm::kPixelPair,
                                            DepthwiseAlgorithm::kStaged};
      const auto runs = modelcost::cuda::depthwise_algorithms(g);
      for (int k = 0; k < 4; ++k) {
        if (std::find(runs.begin(), runs.end(), others[k]) == runs.end()) continue;
        g.algorithm = others[k];
        times[k] = median_us(g, {x, w, b, y2});
        best = std::min(best, times[k]);
        cudaMemcpy(other.data(), y2, ny * 2, cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < ny; ++i) diff = std::max(diff, std::fabs(__half2float(reference[i]) - __half2float(other[i])));
      }
      const double dram_us = (nx + nw + ny) * 2.0 / (bandwidth * 1e3);
      std::printf("%-20s %5lld %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %9.4f\n", c.where, static_cast<long long>(batch),
                  direct, times[0], times[1], times[2], times[3], best / direct, dram_us, diff);
      log_sum += std::log(best / direct);
      ++timed;
      for (void* p : {x, w, b, y1, y2}) cudaFree(p);
    }
  if (cudaGetLastError() != cudaSuccess) return std::fprintf(stderr, "depthwise_kernels: a CUDA error\n"), 1;
  std::printf("geometric mean of the fastest algorithm / direct: %.3f over %d cases\n", std::exp(log_sum / std::max(timed, 1)),
              timed);
  return 0;
}
