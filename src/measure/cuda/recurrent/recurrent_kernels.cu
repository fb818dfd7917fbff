// The pointwise part of a recurrent time step (RNN, LSTM, GRU) in ONNX's gate order, computed
// in float: the products x*W^T and h*R^T come from cuBLASLt (recurrent_runner.cpp).
#include "core/cuda_check.h"
#include "core/element_types.cuh"
#include "core/kernels.h"

namespace modelcost::cuda {
namespace {

__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + __expf(-v)); }

template <typename T>
struct StepView {
  const RecurrentStep& s;
  int64_t b, j, gates;
  __device__ float in(const void* p, int64_t cols, int64_t col) const {
    return to_float(static_cast<const T*>(p)[b * cols + col]);
  }
  // x*W^T + Wb of gate g (the input half of the pre-activation).
  __device__ float x_part(int64_t g) const {
    const int64_t H = s.hidden, col = g * H + j;
    return in(s.xw, gates * H, col) + (s.bias ? to_float(static_cast<const T*>(s.bias)[col]) : 0.f);
  }
  // h*R^T + Rb of gate g, from a product of `cols` columns.
  __device__ float h_part(int64_t g, int64_t cols) const {
    const int64_t H = s.hidden;
    return in(s.hr, cols, g * H + j) + (s.bias ? to_float(static_cast<const T*>(s.bias)[gates * H + g * H + j]) : 0.f);
  }
  __device__ float h_prev() const { return in(s.h_prev, s.hidden, j); }
};

template <typename T>
__device__ void write_h(const RecurrentStep& s, int64_t i, float h) {
  static_cast<T*>(s.h_out)[i] = from_float<T>(h);
  if (s.y_h) static_cast<T*>(s.y_h)[i] = from_float<T>(h);
}

template <typename T>
__global__ void recurrent_step_kernel(RecurrentStage stage, RecurrentStep s) {
  const int64_t n = s.batch * s.hidden;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / s.hidden, j = i % s.hidden, H = s.hidden;
    const int64_t gates = stage == RecurrentStage::kRnn ? 1 : stage == RecurrentStage::kLstm ? 4 : 3;
    const StepView<T> v{s, b, j, gates};
    switch (stage) {
      case RecurrentStage::kRnn:
        write_h<T>(s, i, tanhf(v.x_part(0) + v.h_part(0, H)));
        break;
      case RecurrentStage::kLstm: {  // gates i, o, f, c; peepholes i, o, f
        const T* peep = static_cast<const T*>(s.peepholes);
        auto peephole = [&](int k) { return peep ? to_float(peep[k * H + j]) : 0.f; };
        const float c_prev = s.first ? (s.c_initial ? to_float(static_cast<const T*>(s.c_initial)[i]) : 0.f) : s.c[i];
        const float ig = sigmoid(v.x_part(0) + v.h_part(0, 4 * H) + peephole(0) * c_prev);
        const float fg = sigmoid(v.x_part(2) + v.h_part(2, 4 * H) + peephole(2) * c_prev);
        const float gg = tanhf(v.x_part(3) + v.h_part(3, 4 * H));
        const float c = fg * c_prev + ig * gg;
        const float og = sigmoid(v.x_part(1) + v.h_part(1, 4 * H) + peephole(1) * c);
        s.c[i] = c;
        if (s.y_c) static_cast<T*>(s.y_c)[i] = from_float<T>(c);
        write_h<T>(s, i, og * tanhf(c));
        break;
      }
      case RecurrentStage::kGru: {  // linear_before_reset: r scales h*R_h^T + Rb_h
        const float z = sigmoid(v.x_part(0) + v.h_part(0, 3 * H));
        const float r = sigmoid(v.x_part(1) + v.h_part(1, 3 * H));
        const float candidate = tanhf(v.x_part(2) + r * v.h_part(2, 3 * H));
        write_h<T>(s, i, (1.f - z) * candidate + z * v.h_prev());
        break;
      }
      case RecurrentStage::kGruGates: {
        s.z[i] = sigmoid(v.x_part(0) + v.h_part(0, 2 * H));
        const float r = sigmoid(v.x_part(1) + v.h_part(1, 2 * H));
        static_cast<T*>(s.reset_h)[i] = from_float<T>(r * v.h_prev());
        break;
      }
      case RecurrentStage::kGruCandidate: {
        const float rb = s.bias ? to_float(static_cast<const T*>(s.bias)[gates * H + 2 * H + j]) : 0.f;
        const float candidate = tanhf(v.x_part(2) + v.in(s.hr_candidate, H, j) + rb);
        const float z = s.z[i];
        write_h<T>(s, i, (1.f - z) * candidate + z * v.h_prev());
        break;
      }
    }
  }
}

}  // namespace

void launch_recurrent_step(ElementType type, RecurrentStage stage, const RecurrentStep& step, cudaStream_t stream) {
  const int64_t n = step.batch * step.hidden;
  MC_DISPATCH_TYPE(type, (recurrent_step_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(stage, step)));
  MC_CUDA_CHECK(cudaGetLastError());
}

}  // namespace modelcost::cuda
