// calibrate's attention grid: the flash-attention kernel the deployed view runs for attention
// groups (flash_attention.cu), on generic shapes: 8 to 512 heads in a batch, query and key
// lengths of 64 to 1024 (with lengths that leave a partial key tile), head dims 64 and 128,
// with and without an additive key mask. Its curve's K is the key length: every query tile
// walks the keys in order, as a GEMM's tile walks K.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/cuda_backend.h"
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "modelcost/errors.h"
#include "pointwise/fused_kernels.h"

namespace modelcost::cuda {
namespace {

constexpr int32_t kHalf = 10;  // onnx FLOAT16
constexpr int64_t kHeads = 8;  // heads per batch entry (the mask is read per batch entry)

struct AttentionPoint {
  int64_t bh, s, d;
  bool mask;
};

std::vector<AttentionPoint> attention_points() {
  std::vector<AttentionPoint> points;
  for (bool mask : {false, true})
    for (int64_t d : {64, 128}) {
      if (mask && d != 64) continue;
      for (int64_t bh : {8, 64, 512})
        for (int64_t s : {64, 96, 128, 256, 320, 512, 1024})
          if (bh * s <= (int64_t(1) << 17)) points.push_back({bh, s, d, mask});
    }
  return points;
}

TensorSpec half_spec(Shape shape) {
  TensorSpec t;
  t.present = true;
  t.shape = std::move(shape);
  t.dtype = kHalf;
  return t;
}

}  // namespace

void CudaBackend::calibrate_attention_kernels(std::vector<LibraryKernelSample>& samples) {
  cudaStream_t stream = context_.stream;
  for (const AttentionPoint& p : attention_points()) {
    const int64_t elements = p.bh * p.s * p.d;
    const size_t bytes = static_cast<size_t>(elements) * 2;
    const int64_t batch = p.bh / kHeads;
    DeviceBuffer q(bytes), k(bytes), v(bytes), o(bytes), mask(static_cast<size_t>(batch * p.s) * 2);
    launch_fill_random(ElementType::kFloat16, q.data(), elements, -1.f, 1.f, 21, stream);
    launch_fill_random(ElementType::kFloat16, k.data(), elements, -1.f, 1.f, 22, stream);
    launch_fill_random(ElementType::kFloat16, v.data(), elements, -1.f, 1.f, 23, stream);
    launch_fill_random(ElementType::kFloat16, mask.data(), batch * p.s, -4.f, 0.f, 24, stream);
    AttentionShape shape;
    shape.bh = p.bh;
    shape.heads = kHeads;
    shape.sq = shape.sk = p.s;
    shape.d = p.d;
    shape.scale = 1.f / std::sqrt(static_cast<float>(p.d));
    if (p.mask) {  // [batch, 1, 1, keys]: one row per batch entry, as a padding mask
      shape.mask = mask.data();
      shape.mask_b = p.s;
      shape.mask_j = 1;
    }
    LibraryKernelSample s;
    s.kind = "attention";
    char buf[96];
    std::snprintf(buf, sizeof(buf), "BH=%lld S=%lld D=%lld%s", (long long)p.bh, (long long)p.s, (long long)p.d,
                  p.mask ? " mask" : "");
    s.shape = buf;
    s.implementation = "own flash attention kernel";
    s.flops = 4.0 * p.bh * p.s * p.s * p.d;
    s.bytes = 4.0 * bytes + (p.mask ? batch * p.s * 2.0 : 0);
    s.k = static_cast<double>(p.s);
    const DeviceTensor first{q.data(), half_spec({p.bh, p.s, p.d})};
    try {
      if (!time_grid_call([&](cudaStream_t st) { launch_flash_attention(shape, q.data(), k.data(), v.data(), o.data(), st); },
                          first, s))
        continue;
    } catch (const Error&) {
      cudaGetLastError();
      cudaStreamSynchronize(stream);
      continue;
    }
    samples.push_back(s);
  }
}

}  // namespace modelcost::cuda
