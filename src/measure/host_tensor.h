// Host-side tensors for the CPU reference kernels and for checking GPU results: values held as
// float whatever the dtype (indices too: exact below 2^24), with the tensor's dtype alongside.
#pragma once
#include <cstdint>
#include <vector>

#include "measure/op_plan.h"

namespace modelcost {

struct HostTensor {
  Shape shape;
  int32_t dtype = 0;
  std::vector<float> data;
  HostTensor() = default;
  HostTensor(Shape s, int32_t t) : shape(std::move(s)), dtype(t), data(static_cast<size_t>(element_count(shape))) {}
};

// Rounds every value to what the dtype can hold (fp16, bf16: nearest even; ints: truncation).
void round_to_dtype(HostTensor& tensor);

// Random contents for input `index` of a node: floats uniform in [-1, 1] ([0.1, 1] where the op
// needs positive inputs), integer indices within the gathered axis. Deterministic for a seed.
HostTensor random_input(const NodeSpec& spec, const OpPlan& plan, size_t index, uint64_t seed);

}  // namespace modelcost
