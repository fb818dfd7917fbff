// The quantization kinds on the project's own kernels (quantize_kernels.cu): QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul and QLinearConv.
#include "core/cuda_check.h"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

class QuantizedRunner : public OperatorRunner {
 public:
  QuantizedRunner(const NodeSpec& spec, const OpPlan& plan) : spec_(spec), plan_(plan) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext&) override {
    in_ = in;
    out_ = out;
    if (std::holds_alternative<DynamicQuantizePlan>(plan_)) scratch_.resize(dynamic_quantize_scratch_bytes());
  }

  void launch(cudaStream_t s) override {
    std::visit(Overloaded{
                   [&](const QuantizePlan& p) {
                     launch_quantize(p, {data(0), type(0), data(1), type(1), data(2), type(2), out_[0].data, out_type(0)}, s);
                   },
                   [&](const DynamicQuantizePlan& p) {
                     launch_dynamic_quantize({data(0), type(0), static_cast<float*>(scratch_.data()), out_[0].data,
                                              output(1), out_type(1), output(2)},
                                             p.elements, s);
                   },
                   [&](const IntegerMatMulPlan& p) {
                     launch_integer_matmul(p, product(matmul_inputs(p)), s);
                   },
                   [&](const QLinearConvPlan& p) { launch_qlinear_conv(p, product(qlinear_conv_inputs()), s); },
                   [&](const auto&) {},
               },
               plan_);
  }

  std::string implementation() const override { return "own kernel " + spec_.op_type; }

 private:
  const void* data(int i) const { return i >= 0 && static_cast<size_t>(i) < in_.size() && in_[i].spec.present ? in_[i].data : nullptr; }
  StorageType type(int i) const { return data(i) ? storage_type(in_[i].spec.dtype) : StorageType::kU8; }
  void* output(size_t i) const { return i < out_.size() && out_[i].spec.present ? out_[i].data : nullptr; }
  StorageType out_type(size_t i) const { return output(i) ? storage_type(out_[i].spec.dtype) : StorageType::kF32; }

  // The input positions of an integer product's operands (-1: none).
  struct ProductInputs {
    int a = -1, b = -1, a_zero = -1, b_zero = -1, a_scale = -1, b_scale = -1, y_scale = -1, y_zero = -1, bias = -1;
  };
  static ProductInputs matmul_inputs(const IntegerMatMulPlan& p) {
    ProductInputs in;
    in.a = p.a, in.b = p.b, in.a_zero = p.a_zero, in.b_zero = p.b_zero;
    in.a_scale = p.a_scale, in.b_scale = p.b_scale, in.y_scale = p.y_scale, in.y_zero = p.y_zero;
    return in;
  }
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, bias.
  static ProductInputs qlinear_conv_inputs() {
    ProductInputs in;
    in.a = 0, in.a_scale = 1, in.a_zero = 2, in.b = 3, in.b_scale = 4, in.b_zero = 5, in.y_scale = 6, in.y_zero = 7;
    in.bias = 8;
    return in;
  }

  IntegerProductOperands product(const ProductInputs& in) const {
    IntegerProductOperands o{};
    o.a = data(in.a), o.a_type = type(in.a);
    o.b = data(in.b), o.b_type = type(in.b);
    o.a_zero = data(in.a_zero), o.a_zero_type = type(in.a_zero);
    o.b_zero = data(in.b_zero), o.b_zero_type = type(in.b_zero);
    o.a_scale = data(in.a_scale), o.b_scale = data(in.b_scale), o.y_scale = data(in.y_scale);
    o.scale_type = data(in.a_scale) ? type(in.a_scale) : StorageType::kF32;
    o.y_zero = data(in.y_zero), o.y_zero_type = type(in.y_zero);
    o.bias = data(in.bias);
    o.y = out_[0].data, o.y_type = out_type(0);
    return o;
  }

  NodeSpec spec_;
  OpPlan plan_;
  std::vector<DeviceTensor> in_, out_;
  DeviceBuffer scratch_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_quantized_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  for (const auto* list : {&spec.inputs, &spec.outputs})
    for (const auto& t : *list)
      if (t.present && (t.dtype == 8 || t.dtype > 16)) {
        *reason = spec.op_type + " with a " + dtype_name(t.dtype) + " tensor";
        return nullptr;
      }
  return std::make_unique<QuantizedRunner>(spec, plan);
}

}  // namespace modelcost::cuda
