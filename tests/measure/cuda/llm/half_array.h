// Host arrays rounded through fp16 with their device copies, and the relative error of a
// device result: what the LLM step's kernel tests compare with (GPU builds only).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <random>
#include <vector>

namespace modelcost::testing {

// Host values rounded through fp16, and their device copy.
struct HalfArray {
  std::vector<float> host;
  __half* device = nullptr;
  explicit HalfArray(size_t n, std::mt19937* rng = nullptr, float scale = 1.f) : host(n, 0.f) {
    std::uniform_real_distribution<float> u(-scale, scale);
    for (float& v : host) v = rng ? __half2float(__float2half(u(*rng))) : 0.f;
    std::vector<__half> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = __float2half(host[i]);
    cudaMalloc(&device, n * sizeof(__half));
    cudaMemcpy(device, h.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
  }
  ~HalfArray() { cudaFree(device); }
  std::vector<float> read() const {
    std::vector<__half> h(host.size());
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), device, h.size() * sizeof(__half), cudaMemcpyDeviceToHost);
    std::vector<float> out(h.size());
    for (size_t i = 0; i < h.size(); ++i) out[i] = __half2float(h[i]);
    return out;
  }
};

inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return 1e9;
    diff += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace modelcost::testing
