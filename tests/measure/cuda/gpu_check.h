// Checks a node's GPU kernels against the CPU reference on the same random inputs. Shared by
// the GPU operator tests; only for builds with CUDA.
#pragma once
#include <gtest/gtest.h>

#include <cmath>

#include "measure/cpu_reference.h"
#include "measure/cuda_entry.h"
#include "modelcost/measure.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!cuda_device_available()) GTEST_SKIP() << "no NVIDIA GPU"

// ||gpu - ref|| / ||ref|| over every output; NaN (an unwritten, poisoned element) fails.
inline double relative_error(const HostTensor& gpu, const HostTensor& ref) {
  double diff = 0, norm = 0;
  if (gpu.data.size() != ref.data.size()) return 1e9;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    if (!std::isfinite(gpu.data[i])) return 1e9;
    diff += (gpu.data[i] - ref.data[i]) * double(gpu.data[i] - ref.data[i]);
    norm += double(ref.data[i]) * ref.data[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// NCHW <-> NHWC for 4-D tensors (to_nhwc: true = NCHW to NHWC).
inline HostTensor relayout(const HostTensor& t, bool to_nhwc) {
  HostTensor out = t;
  const int64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((a * c + b) * h + y) * w + x, nhwc = ((a * h + y) * w + x) * c + b;
          if (to_nhwc) out.data[nhwc] = t.data[nchw];
          else out.data[nchw] = t.data[nhwc];
        }
  return out;
}

// Runs node `name` on the GPU and the CPU on the same random inputs (fresh per call).
inline void check_node(const ModelBuilder& builder, const std::string& name, const std::string& dtype, double tolerance,
                bool channels_last = false) {
  auto run = analyse(builder);
  const NodeSpec spec = make_node_spec(run->node(name), dtype);
  const OpPlan plan = plan_operation(spec);
  ASSERT_FALSE(is_unsupported(plan)) << plan_reason(plan);
  static uint64_t seed = 100;
  std::vector<HostTensor> inputs;
  std::vector<const HostTensor*> in;
  for (size_t i = 0; i < spec.inputs.size(); ++i) inputs.push_back(random_input(spec, plan, i, ++seed));
  for (size_t i = 0; i < spec.inputs.size(); ++i) in.push_back(spec.has_input(i) ? &inputs[i] : nullptr);
  auto expected = make_outputs(spec);
  run_cpu_reference(spec, plan, in, expected);
  std::vector<HostTensor> gpu_inputs = inputs;
  if (channels_last)
    for (size_t i = 0; i < 2 && i < gpu_inputs.size(); ++i)
      if (gpu_inputs[i].shape.size() == 4) gpu_inputs[i] = relayout(gpu_inputs[i], true);
  auto actual = run_node_on_gpu(spec, gpu_inputs, channels_last);
  if (channels_last) actual[0] = relayout(actual[0], false);
  for (size_t o = 0; o < expected.size(); ++o) {
    if (!spec.outputs[o].present) continue;
    EXPECT_LT(relative_error(actual[o], expected[o]), tolerance) << name << " (" << spec.op_type << ", " << dtype << ") output " << o;
  }
}

inline void check_both(const ModelBuilder& b, const std::string& name, double fp32_tol = 1e-5, double fp16_tol = 2e-3) {
  check_node(b, name, "fp32", fp32_tol);
  check_node(b, name, "fp16", fp16_tol);
}

}  // namespace
}  // namespace modelcost::testing
