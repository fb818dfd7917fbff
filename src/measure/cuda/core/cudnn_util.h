// cuDNN status checks and descriptor helpers shared by the cuDNN runners.
#pragma once
#include <cudnn.h>

#include <string>
#include <vector>

#include "core/cuda_check.h"

#define MC_CUDNN_CHECK(call)                                                                           \
  do {                                                                                                 \
    cudnnStatus_t mc_status_ = (call);                                                                 \
    if (mc_status_ != CUDNN_STATUS_SUCCESS)                                                            \
      ::modelcost::cuda::throw_cuda_error(#call, cudnnGetErrorString(mc_status_), __FILE__, __LINE__); \
  } while (0)

namespace modelcost::cuda {

inline cudnnDataType_t cudnn_type(int32_t onnx_dtype) {
  switch (onnx_dtype) {
    case 10: return CUDNN_DATA_HALF;
    case 16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// Dims of an N, C, spatial... tensor padded to at least 4 (1-D spatial becomes H = 1).
inline std::vector<int> nchw_dims(int64_t n, int64_t c, const std::vector<int64_t>& spatial) {
  std::vector<int> dims = {static_cast<int>(n), static_cast<int>(c)};
  if (spatial.size() == 1) dims.push_back(1);
  for (int64_t s : spatial) dims.push_back(static_cast<int>(s));
  return dims;
}

// Sets a tensor descriptor in NCHW or NHWC (channels-last) format.
inline void set_tensor(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format, cudnnDataType_t type,
                       const std::vector<int>& dims) {
  MC_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(desc, format, type, static_cast<int>(dims.size()), dims.data()));
}

// Spatial parameters padded like nchw_dims (a leading 1 / 0 for 1-D).
inline std::vector<int> spatial_params(const std::vector<int64_t>& v, int64_t fill, size_t count) {
  std::vector<int> out;
  if (count == 1) out.push_back(static_cast<int>(fill));
  for (size_t i = 0; i < count; ++i) out.push_back(static_cast<int>(v[i]));
  return out;
}

}  // namespace modelcost::cuda
