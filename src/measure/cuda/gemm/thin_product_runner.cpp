// The thin product (thin_product.h) as a MatMul / Gemm node's runner and as a matrix group's
// kernel with its bias and ReLU; both are timed against cuBLASLt by their callers, the faster kept.
#include <memory>

#include "core/runner.h"
#include "deployed/group_runner.h"
#include "gemm/thin_product.h"

namespace modelcost::cuda {
namespace {

constexpr auto kThinDtypes = kFloatDtypes;

// The product's rows once its batch is folded into them, or 0 where the kernel cannot take it:
// x's rows must follow each other and the weights be one matrix shared by the batch.
int64_t thin_rows(const MatMulParams& m) {
  if (m.trans_a || m.alpha == 0) return 0;
  if (m.batch > 1 && (m.b_batch_stride != 0 || m.a_batch_stride != m.m * m.k)) return 0;
  const int64_t rows = m.batch * m.m;
  return thin_product_supports(rows, m.n, m.k) ? rows : 0;
}

bool own_row_bias(const MatMulParams& m) { return m.bias == MatMulParams::Bias::kRow && m.beta == 1.0; }

ThinProductArgs thin_args(const MatMulParams& m, int32_t dtype) {
  ThinProductArgs a;
  a.type = element_type(dtype);
  a.rows = thin_rows(m);
  a.n = static_cast<int>(m.n);
  a.k = static_cast<int>(m.k);
  a.trans_w = m.trans_b;
  a.alpha = static_cast<float>(m.alpha);
  return a;
}

std::string describe(const ThinProductArgs& a) {
  return "thin product kernel " + std::to_string(a.rows) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k) +
         (a.bias ? " +bias" : "") + (a.relu ? " +relu" : "");
}

class ThinProductRunner : public OperatorRunner {
 public:
  // bias_input: input 2 is the [N] bias.
  ThinProductRunner(ThinProductArgs args, bool bias_input) : args_(args), bias_input_(bias_input) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext&) override {
    args_.x = in[0].data;
    args_.w = in[1].data;
    args_.bias = bias_input_ ? in[2].data : nullptr;
    args_.y = out[0].data;
  }
  void launch(cudaStream_t stream) override { launch_thin_product(args_, stream); }
  std::string implementation() const override { return describe(args_); }

 private:
  ThinProductArgs args_;
  bool bias_input_;
};

class ThinGemmKernel : public GroupKernel {
 public:
  explicit ThinGemmKernel(ThinProductArgs args) : args_(args) {}
  void launch(cudaStream_t stream) override { launch_thin_product(args_, stream); }
  std::string implementation() const override { return describe(args_); }

 private:
  ThinProductArgs args_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_thin_product_runner(const NodeSpec& spec, const MatMulParams& m, std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!accepts_dtype(kThinDtypes, dtype, "thin product in ", reason)) return nullptr;
  const bool bias = own_row_bias(m);
  if (!thin_rows(m) || (m.bias != MatMulParams::Bias::kNone && !bias)) {
    *reason = "not a thin product (K and N at most 32, shared weights, no bias but a [N] row)";
    return nullptr;
  }
  return std::make_unique<ThinProductRunner>(thin_args(m, dtype), bias);
}

std::unique_ptr<GroupKernel> make_thin_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m) {
  const int32_t dtype = view.spec(e.anchor).outputs[0].dtype;
  const bool relu_or_none = e.activation == EpilogueActivation::kNone || e.activation == EpilogueActivation::kRelu;
  if (!takes_dtype(kThinDtypes, dtype) || !thin_rows(m) || !relu_or_none || e.residual >= 0 || e.second_residual >= 0 ||
      e.interleaved_rows > 1)
    return nullptr;
  const bool own_bias = own_row_bias(m);
  if (m.bias != MatMulParams::Bias::kNone && !own_bias) return nullptr;
  const Node& node = view.node(e.anchor);
  ThinProductArgs args = thin_args(m, dtype);
  args.x = view.buffers.data(node.inputs[0]);
  args.w = view.buffers.data(node.inputs[1]);
  args.bias = own_bias ? view.buffers.data(node.inputs[2]) : e.bias >= 0 ? view.buffers.data(e.bias) : nullptr;
  args.y = view.buffers.data(e.output);
  args.relu = e.activation == EpilogueActivation::kRelu;
  return std::make_unique<ThinGemmKernel>(args);
}

}  // namespace modelcost::cuda
