#include "measure/host_tensor.h"

#include <Eigen/Core>
#include <cmath>
#include <random>

#include "measure/op_plan.h"

namespace modelcost {

void round_to_dtype(HostTensor& t) {
  switch (t.dtype) {
    case 10:  // FLOAT16
      for (float& v : t.data) v = static_cast<float>(Eigen::half(v));
      break;
    case 16:  // BFLOAT16
      for (float& v : t.data) v = static_cast<float>(Eigen::bfloat16(v));
      break;
    case 1: case 11: break;  // FLOAT, DOUBLE (held as float)
    default:
      for (float& v : t.data) v = std::trunc(v);
  }
}

HostTensor random_input(const NodeSpec& spec, const OpPlan& plan, size_t index, uint64_t seed) {
  const TensorSpec& t = spec.in(index);
  HostTensor h(t.shape, t.dtype);
  std::mt19937_64 rng(seed * 1000003u + index);
  if (t.value && t.value->size() == h.data.size()) {
    // Known contents (shape constants, Clip bounds, scalar weights) are used as they are.
    for (size_t i = 0; i < h.data.size(); ++i) h.data[i] = static_cast<float>(t.value->as_double(i));
  } else if (!dtype_is_float(t.dtype)) {
    const InputRange range = input_range(spec, plan, index);
    std::uniform_int_distribution<int64_t> dist(0, std::max<int64_t>(0, range.int_range - 1));
    for (float& v : h.data) v = static_cast<float>(dist(rng));
  } else {
    const InputRange range = input_range(spec, plan, index);
    std::uniform_real_distribution<float> dist(range.lo, range.hi);
    for (float& v : h.data) v = dist(rng);
  }
  round_to_dtype(h);
  return h;
}

}  // namespace modelcost
