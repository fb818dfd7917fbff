#include "core/tensor_transfer.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

#include "core/cuda_check.h"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

template <typename T, typename Fn>
std::vector<T> convert(const std::vector<float>& values, Fn fn) {
  std::vector<T> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = fn(values[i]);
  return out;
}

template <typename T>
void copy_up(const std::vector<T>& v, void* device, cudaStream_t stream) {
  MC_CUDA_CHECK(cudaMemcpyAsync(device, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  MC_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vector dies on return
}

}  // namespace

void upload(const HostTensor& t, void* device, cudaStream_t stream) {
  if (t.data.empty()) return;
  switch (t.dtype) {
    case 1: copy_up(t.data, device, stream); break;
    case 10: copy_up(convert<__half>(t.data, [](float v) { return __float2half_rn(v); }), device, stream); break;
    case 16: copy_up(convert<__nv_bfloat16>(t.data, [](float v) { return __float2bfloat16_rn(v); }), device, stream); break;
    case 11: copy_up(convert<double>(t.data, [](float v) { return double(v); }), device, stream); break;
    case 7: copy_up(convert<int64_t>(t.data, [](float v) { return int64_t(v); }), device, stream); break;
    case 6: copy_up(convert<int32_t>(t.data, [](float v) { return int32_t(v); }), device, stream); break;
    case 2: case 3: case 9:
      copy_up(convert<uint8_t>(t.data, [](float v) { return uint8_t(int(v)); }), device, stream);
      break;
    default: throw Error(kExitRuntime, std::string("no upload for dtype ") + dtype_name(t.dtype));
  }
}

HostTensor download(const void* device, const TensorSpec& spec, cudaStream_t stream) {
  HostTensor t(spec.shape, spec.dtype);
  const size_t n = t.data.size();
  auto fetch = [&](auto* dummy) {
    using T = std::remove_pointer_t<decltype(dummy)>;
    std::vector<T> v(n);
    MC_CUDA_CHECK(cudaMemcpyAsync(v.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    MC_CUDA_CHECK(cudaStreamSynchronize(stream));
    return v;
  };
  switch (spec.dtype) {
    case 1: t.data = fetch(static_cast<float*>(nullptr)); break;
    case 10: { auto v = fetch(static_cast<__half*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = __half2float(v[i]); break; }
    case 16: { auto v = fetch(static_cast<__nv_bfloat16*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = __bfloat162float(v[i]); break; }
    case 7: { auto v = fetch(static_cast<int64_t*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = float(v[i]); break; }
    case 6: { auto v = fetch(static_cast<int32_t*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = float(v[i]); break; }
    case 11: { auto v = fetch(static_cast<double*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = float(v[i]); break; }
    case 2: case 9: { auto v = fetch(static_cast<uint8_t*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = float(v[i]); break; }
    case 3: { auto v = fetch(static_cast<int8_t*>(nullptr)); for (size_t i = 0; i < n; ++i) t.data[i] = float(v[i]); break; }
    default: throw Error(kExitRuntime, std::string("no download for dtype ") + dtype_name(spec.dtype));
  }
  return t;
}

void fill_input(const NodeSpec& spec, const OpPlan& plan, size_t index, void* device, uint64_t seed, cudaStream_t stream) {
  const TensorSpec& t = spec.in(index);
  const int64_t n = static_cast<int64_t>(t.elements());
  if (n == 0) return;
  const bool small_known = t.value && static_cast<int64_t>(t.value->size()) == n;
  const bool float_type = t.dtype == 1 || t.dtype == 10 || t.dtype == 16;
  if (small_known || !(float_type || t.dtype == 7 || t.dtype == 6 || t.dtype == 9 || t.dtype == 2 || t.dtype == 3)) {
    upload(random_input(spec, plan, index, seed), device, stream);
    return;
  }
  const InputRange range = input_range(spec, plan, index);
  if (float_type)
    launch_fill_random(element_type(t.dtype), device, n, range.lo, range.hi, seed * 131 + index, stream);
  else
    launch_fill_random_int(device, n, static_cast<int>(dtype_size(t.dtype)), range.int_range, seed * 131 + index, stream);
}

}  // namespace modelcost::cuda
