// RNN, GRU and LSTM as a deployment without cuDNN's fused RNN runs them: per direction one
// product x*W^T for every time step at once, then per step the product h*R^T and a pointwise
// kernel for the gates (GRU without linear_before_reset: two products and two kernels, since
// r scales h before R_h). The steps' products share one cuBLASLt setup (lt_product.h).
#include <memory>

#include "core/kernels.h"
#include "core/runner.h"
#include "gemm/lt_product.h"

namespace modelcost::cuda {
namespace {

class RecurrentRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  RecurrentRunner(const NodeSpec& spec, const RecurrentPlan& plan) : spec_(spec), p_(plan) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    in_ = in;
    out_ = out;
    dtype_ = in[0].spec.dtype;
    const size_t bytes = dtype_size(dtype_);
    const int64_t B = p_.batch, H = p_.hidden, G = p_.gates(), S = p_.seq, D = p_.directions;
    const bool two_pass = p_.cell == RecurrentPlan::Cell::kGru && !p_.linear_before_reset;
    y_ = out.size() > 0 && out[0].spec.present ? out[0].data : nullptr;
    if (!y_) y_ = (own_y_.resize(static_cast<size_t>(S * D * B * H) * bytes), own_y_.data());
    xw_.resize(static_cast<size_t>(S * B * G * H) * bytes);
    hr_.resize(static_cast<size_t>(B * G * H) * bytes);
    hr_candidate_.resize(static_cast<size_t>(B * H) * bytes);
    reset_h_.resize(static_cast<size_t>(B * H) * bytes);
    zeros_.resize(static_cast<size_t>(B * H) * bytes);
    c_.resize(static_cast<size_t>(B * H) * sizeof(float));
    z_.resize(static_cast<size_t>(B * H) * sizeof(float));
    MC_CUDA_CHECK(cudaMemsetAsync(zeros_.data(), 0, zeros_.bytes(), ctx.stream));
    input_product_ = std::make_unique<LtProduct>(ctx.lt, LtProduct::Shape{S * B, G * H, p_.input}, dtype_, spec_.allow_tf32,
                                                 ctx.max_workspace_bytes);
    state_product_ = std::make_unique<LtProduct>(ctx.lt, LtProduct::Shape{B, (two_pass ? 2 : G) * H, H}, dtype_,
                                                 spec_.allow_tf32, ctx.max_workspace_bytes);
    if (two_pass)
      candidate_product_ =
          std::make_unique<LtProduct>(ctx.lt, LtProduct::Shape{B, H, H}, dtype_, spec_.allow_tf32, ctx.max_workspace_bytes);
  }

  void launch(cudaStream_t stream) override {
    for (int64_t dir = 0; dir < p_.directions; ++dir) run_direction(dir, stream);
  }

  std::string implementation() const override {
    return "cublasLt products + own step kernels (" + std::to_string(p_.seq) + " steps x " + std::to_string(p_.directions) +
           " directions)";
  }

 private:
  const char* at(const void* base, int64_t elements) const {
    return static_cast<const char*>(base) + elements * static_cast<int64_t>(dtype_size(dtype_));
  }
  char* at(void* base, int64_t elements) const { return static_cast<char*>(base) + elements * static_cast<int64_t>(dtype_size(dtype_)); }
  const void* optional(size_t i) const { return i < in_.size() && in_[i].spec.present ? in_[i].data : nullptr; }
  void* output(size_t i) const { return i < out_.size() && out_[i].spec.present ? out_[i].data : nullptr; }

  void run_direction(int64_t dir, cudaStream_t stream) {
    const int64_t B = p_.batch, H = p_.hidden, G = p_.gates(), S = p_.seq, D = p_.directions;
    input_product_->launch(in_[0].data, at(in_[1].data, dir * G * H * p_.input), xw_.data(), stream);
    const void* recurrence = at(in_[2].data, dir * G * H * H);
    const bool backward = p_.reverse || dir == 1;
    const ElementType type = element_type(dtype_);
    RecurrentStep s{};
    s.bias = optional(3) ? at(optional(3), dir * 2 * G * H) : nullptr;
    s.peepholes = p_.has_peepholes ? at(optional(7), dir * 3 * H) : nullptr;
    s.c_initial = p_.has_initial_c ? at(optional(6), dir * B * H) : nullptr;
    s.c = static_cast<float*>(c_.data());
    s.z = static_cast<float*>(z_.data());
    s.reset_h = reset_h_.data();
    s.hr = hr_.data();
    s.hr_candidate = hr_candidate_.data();
    s.batch = B;
    s.hidden = H;
    const void* h_prev = p_.has_initial_h ? at(optional(5), dir * B * H) : zeros_.data();
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = backward ? S - 1 - step : step;
      s.first = step == 0;
      s.xw = at(xw_.data(), t * B * G * H);
      s.h_prev = h_prev;
      s.h_out = at(y_, (t * D + dir) * B * H);
      const bool last = step == S - 1;
      s.y_h = last && output(1) ? at(output(1), dir * B * H) : nullptr;
      s.y_c = last && output(2) ? at(output(2), dir * B * H) : nullptr;
      state_product_->launch(h_prev, recurrence, hr_.data(), stream);
      switch (p_.cell) {
        case RecurrentPlan::Cell::kRnn: launch_recurrent_step(type, RecurrentStage::kRnn, s, stream); break;
        case RecurrentPlan::Cell::kLstm: launch_recurrent_step(type, RecurrentStage::kLstm, s, stream); break;
        case RecurrentPlan::Cell::kGru:
          if (p_.linear_before_reset) {
            launch_recurrent_step(type, RecurrentStage::kGru, s, stream);
          } else {
            launch_recurrent_step(type, RecurrentStage::kGruGates, s, stream);
            candidate_product_->launch(reset_h_.data(), at(recurrence, 2 * H * H), hr_candidate_.data(), stream);
            launch_recurrent_step(type, RecurrentStage::kGruCandidate, s, stream);
          }
          break;
      }
      h_prev = s.h_out;
    }
  }

  NodeSpec spec_;
  RecurrentPlan p_;
  std::vector<DeviceTensor> in_, out_;
  int32_t dtype_ = 1;
  void* y_ = nullptr;
  DeviceBuffer own_y_, xw_, hr_, hr_candidate_, reset_h_, zeros_, c_, z_;
  std::unique_ptr<LtProduct> input_product_, state_product_, candidate_product_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_recurrent_runner(const NodeSpec& spec, const RecurrentPlan& plan, std::string* reason) {
  const int32_t dtype = spec.inputs[0].dtype;
  if (!accepts_dtype(RecurrentRunner::kDtypes, dtype, spec.op_type + " in ", reason)) return nullptr;
  return std::make_unique<RecurrentRunner>(spec, plan);
}

}  // namespace modelcost::cuda
