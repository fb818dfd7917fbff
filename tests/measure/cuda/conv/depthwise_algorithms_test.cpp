// The channels-last depthwise kernels against each other: the tiled kernel (shared-memory window),
// the staged one (a shared-memory window in fp16), the one-pixel-a-thread ones and the direct
// ones (the row kernels, dilated rows included) give the same outputs on windows, strides, dilations, multipliers and channel counts each may take,
// with an activation, a per-channel scale and shift and a residual in the store. (The CPU reference checks the
// runtime's choice in gpu_own_kernels_test.)
#ifdef MODELCOST_HAVE_CUDA

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/device_buffer.h"
#include "core/kernels.h"
#include "measure/cuda/gpu_check.h"

namespace modelcost::testing {
namespace {

struct Window {
  int64_t channels, size;
  int kernel, stride, dilation;
  int64_t multiplier;
};

template <typename T>
cuda::DeviceBuffer upload_random(size_t n, unsigned seed, T (*convert)(float)) {
  std::vector<T> host(n);
  for (auto& v : host) {
    seed = seed * 1664525u + 1013904223u;
    v = convert(static_cast<float>(seed >> 8) / float(1 << 24) - 0.5f);
  }
  cuda::DeviceBuffer buffer(n * sizeof(T));
  cudaMemcpy(buffer.data(), host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  return buffer;
}

std::vector<float> run(cuda::DepthwiseGeometry g, cuda::DepthwiseAlgorithm algorithm, const cuda::DepthwiseOperands& ops) {
  g.algorithm = algorithm;
  cuda::launch_depthwise_conv(cuda::ElementType::kFloat16, g, ops, nullptr);
  const size_t n = g.batch * g.channels * g.out_h * g.out_w;
  std::vector<__half> out(n);
  cudaMemcpy(out.data(), ops.y, n * sizeof(__half), cudaMemcpyDeviceToHost);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = __half2float(out[i]);
  return values;
}

// Every algorithm's outputs on one window against the direct kernels', with and without the epilogue's tail.
// `multiprocessors` sizes the launch: 1 takes the row kernels even where the work is small.
void expect_algorithms_agree(const Window& w, int multiprocessors) {
  for (const bool tail : {false, true}) {
    cuda::DepthwiseGeometry g{};
    const int64_t in_channels = w.channels / w.multiplier, pad = (w.kernel / 2) * w.dilation;
    g.batch = 2;
    g.channels = w.channels;
    g.in_h = g.in_w = w.size;
    g.out_h = g.out_w = (w.size + 2 * pad - w.dilation * (w.kernel - 1) - 1) / w.stride + 1;
    g.kernel_h = g.kernel_w = w.kernel;
    g.stride_h = g.stride_w = w.stride;
    g.pad_h = g.pad_w = static_cast<int>(pad);
    g.dilation_h = g.dilation_w = w.dilation;
    g.channels_last = true;
    g.multiplier = w.multiplier;
    g.multiprocessors = multiprocessors;
    ASSERT_TRUE(cuda::depthwise_tiled_supported(g)) << w.channels << " channels, " << w.kernel << "x" << w.kernel;
    const size_t outputs = g.batch * g.channels * g.out_h * g.out_w;
    auto x = upload_random<__half>(g.batch * in_channels * w.size * w.size, 1, __float2half);
    auto weights = upload_random<__half>(w.channels * w.kernel * w.kernel, 2, __float2half);
    auto bias = upload_random<__half>(w.channels, 3, __float2half);
    auto scale = upload_random<float>(w.channels, 4, [](float v) { return v; });
    auto shift = upload_random<float>(w.channels, 5, [](float v) { return v; });
    auto residual = upload_random<__half>(outputs, 6, __float2half);
    cuda::DeviceBuffer y(outputs * sizeof(__half));
    g.epilogue.activation = ElementwiseOp::kGelu;
    if (tail) {
      g.epilogue.scale = static_cast<const float*>(scale.data());
      g.epilogue.shift = static_cast<const float*>(shift.data());
      g.epilogue.residual = residual.data();
    }
    const cuda::DepthwiseOperands ops{x.data(), weights.data(), bias.data(), y.data()};
    const std::vector<float> direct = run(g, cuda::DepthwiseAlgorithm::kDirect, ops);
    const std::vector<cuda::DepthwiseAlgorithm> algorithms = cuda::depthwise_algorithms(g);
    ASSERT_GE(algorithms.size(), 3u) << "direct, pixel and tiled run every window here";
    for (cuda::DepthwiseAlgorithm algorithm : algorithms) {
      cudaMemset(y.data(), 0, outputs * sizeof(__half));
      const std::vector<float> other = run(g, algorithm, ops);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      float worst = 0, largest = 0;
      for (size_t i = 0; i < outputs; ++i) {
        worst = std::max(worst, std::fabs(direct[i] - other[i]));
        largest = std::max(largest, std::fabs(direct[i]));
      }
      EXPECT_GT(largest, 0.05f) << "outputs all near zero";
      EXPECT_LT(worst, 2e-3f * std::max(1.f, largest))
          << cuda::depthwise_algorithm_name(algorithm) << ": " << w.channels << " channels, " << w.kernel << "x" << w.kernel
          << " stride " << w.stride << " dilation " << w.dilation << (tail ? ", with the tail" : "");
    }
  }
}

TEST(DepthwiseAlgorithms, TiledAndDirectAgree) {
  SKIP_WITHOUT_GPU();
  const std::vector<Window> windows = {{64, 12, 3, 1, 1, 1}, {24, 11, 5, 2, 1, 1}, {16, 13, 7, 2, 1, 2},
                                       {40, 9, 3, 1, 2, 1},  {90, 7, 9, 1, 1, 1},  {8, 10, 3, 1, 1, 4}};
  for (const Window& w : windows) expect_algorithms_agree(w, 0);
}

TEST(DepthwiseAlgorithms, StagedKernelAgreesOverTilesAndChannelChunks) {
  SKIP_WITHOUT_GPU();
  // Several output tiles per image, tiles cut by the image's edge, channel pairs split unevenly
  // over chunks (72 channels: 20 and 16 pairs; 520: eight chunks of 32 and one of 4), both
  // strides, 9-wide windows.
  const std::vector<Window> windows = {{72, 30, 7, 1, 1, 1}, {96, 23, 3, 2, 1, 1}, {128, 20, 5, 1, 1, 1},
                                       {256, 17, 9, 2, 1, 1}, {520, 9, 3, 1, 1, 1}, {48, 37, 9, 1, 1, 1}};
  for (const Window& w : windows)
    for (const int multiprocessors : {1, 132}) {
      expect_algorithms_agree(w, multiprocessors);
      cuda::DepthwiseGeometry g{};
      g.channels_last = true;
      g.channels = w.channels;
      g.multiplier = w.multiplier;
      g.batch = 2;
      g.in_h = g.in_w = g.out_h = g.out_w = w.size;
      g.kernel_h = g.kernel_w = w.kernel;
      g.stride_h = g.stride_w = w.stride;
      g.dilation_h = g.dilation_w = w.dilation;
      const auto algorithms = cuda::depthwise_algorithms(g);
      EXPECT_NE(std::find(algorithms.begin(), algorithms.end(), cuda::DepthwiseAlgorithm::kStaged), algorithms.end())
          << w.channels << " channels, " << w.kernel << "x" << w.kernel;
    }
}

TEST(DepthwiseAlgorithms, DilatedRowKernelsAgreeWithTheTiledKernel) {
  SKIP_WITHOUT_GPU();
  // Rows whose output count is no multiple of the dilation, so the phases differ in length; the
  // tiled kernel's shared window fits each.
  const std::vector<Window> windows = {{64, 13, 3, 1, 2, 1}, {32, 17, 5, 1, 2, 1}, {16, 19, 3, 1, 3, 1}, {16, 12, 5, 1, 3, 1}};
  for (const Window& w : windows) expect_algorithms_agree(w, 1);
}

}  // namespace
}  // namespace modelcost::testing

#endif  // MODELCOST_HAVE_CUDA
