// The ONNX dtypes a runner takes, declared once per runner (`static constexpr auto kDtypes`) and
// checked by its factory before the runner is made: a node in any other dtype gets no runner and
// the reason names its dtype.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "modelcost/tensor.h"

namespace modelcost::cuda {

template <size_t N>
using DtypeList = std::array<int32_t, N>;
// ONNX codes: 1 float (TF32 where allowed), 10 float16, 16 bfloat16.
inline constexpr DtypeList<3> kFloatDtypes = {1, 10, 16};
// The tensor-core storage types only, the channels-last paths.
inline constexpr DtypeList<2> kHalfDtypes = {10, 16};

template <size_t N>
constexpr bool takes_dtype(const DtypeList<N>& dtypes, int32_t dtype) {
  for (int32_t d : dtypes)
    if (d == dtype) return true;
  return false;
}

// True where `dtype` is one of `dtypes`; otherwise false with *reason = `what` followed by the
// dtype's name ("Conv in " -> "Conv in float64").
template <size_t N>
bool accepts_dtype(const DtypeList<N>& dtypes, int32_t dtype, const std::string& what, std::string* reason) {
  if (takes_dtype(dtypes, dtype)) return true;
  *reason = what + dtype_name(dtype);
  return false;
}

}  // namespace modelcost::cuda
