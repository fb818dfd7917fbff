// Runners over the project's own kernels: elementwise (Cast, Where too), copies, gather,
// reductions, softmax, layer norm, batch norm, resize.
#include "measure/cuda/kernels.h"
#include "measure/cuda/runner.h"

namespace modelcost::cuda {
namespace {

class KernelRunner : public OperatorRunner {
 public:
  KernelRunner(const NodeSpec& spec, const OpPlan& plan) : spec_(spec), plan_(plan) {}

  void prepare(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs, CudaContext&) override {
    in_ = inputs;
    out_ = outputs;
  }

  void launch(cudaStream_t s) override {
    const OpPlan& p = plan_;
    switch (p.kind) {
      case OpKind::kUnary:
        if (in_[0].spec.dtype != out_[0].spec.dtype) {  // Cast between float types
          launch_cast(element_type(in_[0].spec.dtype), type(), in_[0].data, out_[0].data,
                      static_cast<int64_t>(out_[0].spec.elements()), s);
          break;
        }
        launch_unary(type(), p.unary, in_[0].data, out_[0].data, static_cast<int64_t>(out_[0].spec.elements()),
                     static_cast<float>(p.alpha), static_cast<float>(p.beta), s);
        break;
      case OpKind::kBinary:
        launch_binary(type(), p.binary, in_[0].data, in_[1].data, out_[0].data, p.dims, p.input_strides[0],
                      p.input_strides[1], s);
        break;
      case OpKind::kCopy: {
        const int bytes = static_cast<int>(dtype_size(out_[0].spec.dtype));
        if (p.fill_output)
          for (auto& o : out_)
            if (o.spec.present) launch_fill(type(), o.data, static_cast<int64_t>(o.spec.elements()), static_cast<float>(p.fill_value), s);
        for (const StridedCopy& c : p.copies) launch_strided_copy(bytes, in_[c.input].data, out_[c.output].data, c, s);
        break;
      }
      case OpKind::kGather:
        launch_gather(static_cast<int>(dtype_size(out_[0].spec.dtype)), in_[0].data, in_[1].data,
                      in_[1].spec.dtype == 7, out_[0].data, p.outer, p.axis_len, p.inner, p.indices, s);
        break;
      case OpKind::kReduce: launch_reduce(type(), p.reduce, in_[0].data, out_[0].data, p.outer, p.axis_len, p.inner, s); break;
      case OpKind::kSoftmax:
        launch_softmax(type(), p.log_softmax, in_[0].data, out_[0].data, p.outer, p.axis_len, p.inner, s);
        break;
      case OpKind::kLayerNorm:
        launch_layer_norm(type(), in_[0].data, p.has_scale ? in_[1].data : nullptr, p.has_bias ? in_[2].data : nullptr,
                          out_[0].data, p.outer, p.axis_len, static_cast<float>(p.epsilon), s);
        break;
      case OpKind::kWhere:
        launch_where(type(), in_[0].data, in_[1].data, in_[2].data, out_[0].data, p.dims, p.input_strides[0],
                     p.input_strides[1], p.input_strides[2], s);
        break;
      case OpKind::kBatchNorm:
        launch_batch_norm(type(), in_[0].data, in_[1].data, in_[2].data, in_[3].data, in_[4].data, out_[0].data, p.outer,
                          p.axis_len, p.inner, static_cast<float>(p.epsilon), s);
        break;
      case OpKind::kResize: {
        const Shape& x = in_[0].spec.shape;
        const Shape& y = out_[0].spec.shape;
        launch_resize(type(), p, in_[0].data, out_[0].data, x[0] * x[1], x[2], x[3], y[2], y[3], s);
        break;
      }
      default: break;
    }
  }

  std::string implementation() const override { return "own kernel " + spec_.op_type; }

 private:
  ElementType type() const { return element_type(out_[0].spec.dtype); }
  NodeSpec spec_;
  OpPlan plan_;
  std::vector<DeviceTensor> in_, out_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_kernel_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  // Copies and gathers move raw elements of any dtype; the arithmetic kernels need float tensors.
  const bool raw = plan.kind == OpKind::kCopy || plan.kind == OpKind::kGather;
  const int32_t dtype = spec.outputs[0].dtype;
  if (!raw && dtype != 1 && dtype != 10 && dtype != 16) {
    *reason = std::string("no CUDA kernel for ") + dtype_name(dtype) + " " + spec.op_type;
    return nullptr;
  }
  if (raw) {
    const double bytes = dtype_size(dtype);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
      *reason = std::string("no copy kernel for ") + dtype_name(dtype);
      return nullptr;
    }
  }
  return std::make_unique<KernelRunner>(spec, plan);
}

}  // namespace modelcost::cuda
