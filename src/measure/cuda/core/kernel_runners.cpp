// The runner over the project's own kernels: every measured kind but convolution and matrix
// products (pools too, timed against cuDNN's). One launch per kind, dispatched by std::visit.
#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

bool float_dtype(int32_t dtype) { return takes_dtype(kFloatDtypes, dtype); }

// The fast typed kernels run float tensors of one dtype; anything else takes the generic path.
bool fast_elementwise(const ElementwisePlan& p, const std::vector<DeviceTensor>& in, const DeviceTensor& out) {
  const int32_t dtype = out.spec.dtype;
  if (!float_dtype(dtype)) return false;
  for (size_t k = 0; k < p.input_strides.size(); ++k)
    if (in[k].spec.dtype != dtype) return false;
  return p.input_strides.size() == 2 || (p.input_strides.size() == 1 && p.op != ElementwiseOp::kIdentity);
}

class KernelRunner : public OperatorRunner {
 public:
  KernelRunner(const NodeSpec& spec, const OpPlan& plan) : spec_(spec), plan_(plan) {}

  void prepare(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs, CudaContext& ctx) override {
    in_ = inputs;
    out_ = outputs;
    // A 2-D pool of fp16/bf16 in a channels-last run reads and writes [N, H, W, C].
    pool_channels_last_ = std::holds_alternative<PoolParams>(plan_) && ctx.channels_last_half &&
                          outputs[0].spec.dtype != 1 && outputs[0].spec.shape.size() == 4;
    if (const auto* norm = std::get_if<GroupNormPlan>(&plan_)) workspace_.resize(group_norm_workspace_bytes(*norm));
  }

  void launch(cudaStream_t s) override {
    std::visit(Overloaded{
                   [&](const ElementwisePlan& p) { elementwise(p, s); },
                   [&](const CopyPlan& p) { copies(p, s); },
                   [&](const GatherPlan& p) {
                     launch_gather(bytes(out_[0]), p, index_operands(nullptr), s);
                   },
                   [&](const ReducePlan& p) {
                     if (p.op == ReduceOp::kArgMax || p.op == ReduceOp::kArgMin)
                       launch_arg_reduce(element_type(in_[0].spec.dtype), p, in_[0].data,
                                         static_cast<int64_t*>(out_[0].data), s);
                     else
                       launch_reduce(type(), p, in_[0].data, out_[0].data, s);
                   },
                   [&](const SoftmaxPlan& p) {
                     launch_softmax(type(), p, in_[0].data, out_[0].data, s);
                   },
                   [&](const LayerNormPlan& p) {
                     NormOperands o;
                     o.x = in_[0].data;
                     o.scale = p.has_scale ? in_[1].data : nullptr;
                     o.bias = p.has_bias ? in_[2].data : nullptr;
                     o.y = out_[0].data;
                     launch_layer_norm(type(), p, o, s);
                   },
                   [&](const BatchNormPlan& p) {
                     launch_batch_norm(type(), p, {in_[0].data, in_[1].data, in_[2].data, in_[3].data, in_[4].data, out_[0].data},
                                       s);
                   },
                   [&](const GroupNormPlan& p) {
                     NormOperands o;
                     o.x = in_[0].data;
                     o.scale = in_[1].data;
                     o.bias = in_[2].data;
                     o.y = out_[0].data;
                     o.workspace = workspace_.data();
                     launch_group_norm(type(), p, o, s);
                   },
                   [&](const ScanPlan& p) {
                     if (float_dtype(out_[0].spec.dtype)) launch_scan(type(), p, in_[0].data, out_[0].data, s);
                     else launch_scan_int(bytes(out_[0]), p, in_[0].data, out_[0].data, s);
                   },
                   [&](const ResizePlan& p) {
                     const Shape& x = in_[0].spec.shape;
                     const Shape& y = out_[0].spec.shape;
                     launch_resize(type(), p, {x[0] * x[1], x[2], x[3], y[2], y[3]}, in_[0].data, out_[0].data, s);
                   },
                   [&](const IndexedPlan& p) { indexed(p, s); },
                   [&](const RangePlan& p) {
                     launch_range(storage_type(out_[0].spec.dtype), in_[0].data, in_[2].data, out_[0].data, p.count, s);
                   },
                   // The windows cuDNN cannot take (runner_factory.cpp routes the others to cuDNN).
                   [&](const PoolParams& p) {
                     PoolGeometry g = pool_geometry(p, in_[0].spec.shape, out_[0].spec.shape);
                     g.channels_last = pool_channels_last_;
                     launch_pool(type(), g, in_[0].data, out_[0].data, s);
                   },
                   [&](const RoiAlignPlan& p) {
                     launch_roi_align(type(), p, in_[0].data, in_[1].data, static_cast<const int64_t*>(in_[2].data),
                                      out_[0].data, s);
                   },
                   // Not this runner's kinds (runner_factory.cpp routes them elsewhere).
                   [&](const PadPlan& p) { launch_pad_mapped(bytes(out_[0]), p, in_[0].data, out_[0].data, s); },
                   [&](const ConvParams&) {}, [&](const MatMulParams&) {}, [&](const TopKPlan&) {},
                   [&](const ContractionPlan&) {}, [&](const ConvTransposePlan&) {}, [&](const RecurrentPlan&) {},
                   [&](const QuantizePlan&) {}, [&](const DynamicQuantizePlan&) {}, [&](const IntegerMatMulPlan&) {},
                   [&](const QLinearConvPlan&) {}, [&](const NonZeroPlan&) {}, [&](const NmsPlan&) {},
                   [&](const BranchPlan&) {}, [&](const ZeroCostPlan&) {}, [&](const UnsupportedPlan&) {},
               },
               plan_);
  }

  std::string implementation() const override { return "own kernel " + spec_.op_type + (pool_channels_last_ ? " NHWC" : ""); }

 private:
  static int bytes(const DeviceTensor& t) { return static_cast<int>(dtype_size(t.spec.dtype)); }
  ElementType type() const { return element_type(out_[0].spec.dtype); }
  bool pool_channels_last_ = false;

  void elementwise(const ElementwisePlan& p, cudaStream_t s) {
    const DeviceTensor& y = out_[0];
    const int64_t n = static_cast<int64_t>(y.spec.elements());
    if (fast_elementwise(p, in_, y) && p.input_strides.size() == 1) {
      launch_unary(type(), p, in_[0].data, y.data, n, s);
    } else if (fast_elementwise(p, in_, y)) {
      launch_binary(type(), p, in_[0].data, in_[1].data, y.data, s);
    } else if (p.op == ElementwiseOp::kIdentity && float_dtype(in_[0].spec.dtype) && float_dtype(y.spec.dtype)) {
      launch_cast(element_type(in_[0].spec.dtype), type(), in_[0].data, y.data, n, s);
    } else {
      std::vector<AnyOperand> operands;
      for (size_t k = 0; k < p.input_strides.size(); ++k) operands.push_back({in_[k].data, in_[k].spec.dtype});
      launch_elementwise_any(p, operands, y.data, y.spec.dtype, s);
    }
  }

  void copies(const CopyPlan& p, cudaStream_t s) {
    if (p.fill_output)
      for (auto& o : out_) {
        if (!o.spec.present) continue;
        if (float_dtype(o.spec.dtype))
          launch_fill(type(), o.data, static_cast<int64_t>(o.spec.elements()), static_cast<float>(p.fill_value), s);
        else  // integers and bools: a fill of 0 (unsupported_dtype refuses other values)
          MC_CUDA_CHECK(cudaMemsetAsync(o.data, 0, o.bytes(), s));
      }
    // A Concat or Split moves all its tensors in one launch where their copies allow it.
    std::vector<BatchedCopy> batch;
    for (const StridedCopy& c : p.copies) batch.push_back({in_[c.input].data, out_[c.output].data, &c});
    if (!p.fill_output && launch_batched_copies(bytes(out_[0]), batch, s)) return;
    for (const StridedCopy& c : p.copies) launch_strided_copy(bytes(out_[0]), in_[c.input].data, out_[c.output].data, c, s);
  }

  void indexed(const IndexedPlan& p, cudaStream_t s) {
    const bool scatter = p.kind == IndexedPlan::Kind::kScatterElements || p.kind == IndexedPlan::Kind::kScatterND;
    if (scatter)  // the output starts as a copy of the data
      MC_CUDA_CHECK(cudaMemcpyAsync(out_[0].data, in_[0].data, out_[0].bytes(), cudaMemcpyDeviceToDevice, s));
    launch_indexed(bytes(out_[0]), p, index_operands(scatter ? in_[2].data : nullptr), s);
  }

  // Data, int64 (ONNX dtype 7) or int32 indices, `updates` and the output of a gather or scatter.
  IndexOperands index_operands(const void* updates) const {
    return {in_[0].data, in_[1].data, in_[1].spec.dtype == 7, updates, out_[0].data};
  }

  NodeSpec spec_;
  OpPlan plan_;
  std::vector<DeviceTensor> in_, out_;
  DeviceBuffer workspace_;
};

// Why no kernel runs this node, or "" when one does.
std::string unsupported_dtype(const NodeSpec& spec, const OpPlan& plan) {
  const int32_t dtype = spec.outputs[0].dtype;
  const double size = dtype_size(dtype);
  const bool raw_size_ok = size == 1 || size == 2 || size == 4 || size == 8;
  return std::visit(
      Overloaded{
          [&](const CopyPlan& p) {
            if (p.fill_output && p.fill_value != 0 && !float_dtype(dtype)) return std::string("a non-zero fill of ") + dtype_name(dtype);
            return raw_size_ok ? "" : std::string("no copy kernel for ") + dtype_name(dtype);
          },
          [&](const GatherPlan&) { return raw_size_ok ? "" : std::string("no copy kernel for ") + dtype_name(dtype); },
          [&](const IndexedPlan&) { return raw_size_ok ? "" : std::string("no copy kernel for ") + dtype_name(dtype); },
          [&](const PadPlan&) { return raw_size_ok ? "" : std::string("no copy kernel for ") + dtype_name(dtype); },
          [&](const ElementwisePlan&) {
            for (const auto* list : {&spec.inputs, &spec.outputs})
              for (const auto& t : *list)
                if (t.present && !t.value && (t.dtype == 8 || t.dtype == 14 || t.dtype == 15 || t.dtype > 16))
                  return std::string("no elementwise kernel for ") + dtype_name(t.dtype);
            return std::string();
          },
          [&](const ScanPlan&) {
            return float_dtype(dtype) || dtype == 7 || dtype == 6 ? "" : std::string("CumSum in ") + dtype_name(dtype);
          },
          [&](const RangePlan&) {
            return dtype == 1 || dtype == 11 || dtype == 7 || dtype == 6 ? "" : std::string("Range in ") + dtype_name(dtype);
          },
          [&](const ReducePlan& p) {
            const bool arg = p.op == ReduceOp::kArgMax || p.op == ReduceOp::kArgMin;
            const int32_t data = spec.inputs[0].dtype;
            return float_dtype(arg ? data : dtype) ? "" : std::string("no CUDA kernel for ") + dtype_name(data) + " " + spec.op_type;
          },
          [&](const auto&) {
            return float_dtype(dtype) ? "" : std::string("no CUDA kernel for ") + dtype_name(dtype) + " " + spec.op_type;
          },
      },
      plan);
}

}  // namespace

std::unique_ptr<OperatorRunner> make_kernel_runner(const NodeSpec& spec, const OpPlan& plan, std::string* reason) {
  *reason = unsupported_dtype(spec, plan);
  if (!reason->empty()) return nullptr;
  return std::make_unique<KernelRunner>(spec, plan);
}

}  // namespace modelcost::cuda
