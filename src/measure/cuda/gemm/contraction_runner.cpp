// Einsum of two operands: the operands packed where their layout is not the product's, one
// (batched) cuBLASLt product, and the result unpacked into the output's index order where that
// differs, as torch.einsum runs it (permute, bmm, permute).
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

class ContractionRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  ContractionRunner(const NodeSpec& spec, const ContractionPlan& plan) : spec_(spec), p_(plan) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const int32_t dtype = out[0].spec.dtype;
    bytes_ = static_cast<int>(dtype_size(dtype));
    in_ = in;
    out_ = out;
    const MatMulParams& g = p_.gemm;
    auto tensor = [&](const void* data, Shape shape) {
      DeviceTensor t;
      t.data = const_cast<void*>(data);
      t.spec.present = true;
      t.spec.shape = std::move(shape);
      t.spec.dtype = dtype;
      return t;
    };
    auto scratch = [&](DeviceBuffer& buffer, int64_t elements) {
      buffer.resize(static_cast<size_t>(elements) * bytes_);
      return buffer.data();
    };
    const void* a = p_.pack_a ? scratch(packed_a_, g.batch * g.m * g.k) : in[0].data;
    const void* b = p_.pack_b ? scratch(packed_b_, g.batch * g.k * g.n) : in[1].data;
    void* d = p_.unpack_output ? scratch(product_, g.batch * g.m * g.n) : out[0].data;
    std::string why;
    gemm_ = make_cublaslt_matmul_runner(spec_, g, &why);
    if (!gemm_) throw Error(kExitRuntime, why);
    gemm_->prepare({tensor(a, {g.batch, g.m, g.k}), tensor(b, {g.batch, g.k, g.n})}, {tensor(d, {g.batch, g.m, g.n})}, ctx);
  }

  void launch(cudaStream_t stream) override {
    if (p_.pack_a) launch_strided_copy(bytes_, in_[0].data, packed_a_.data(), p_.a_to_packed, stream);
    if (p_.pack_b) launch_strided_copy(bytes_, in_[1].data, packed_b_.data(), p_.b_to_packed, stream);
    gemm_->launch(stream);
    if (p_.unpack_output) launch_strided_copy(bytes_, product_.data(), out_[0].data, p_.packed_to_output, stream);
  }

  std::string implementation() const override {
    const int copies = int(p_.pack_a) + int(p_.pack_b) + int(p_.unpack_output);
    return gemm_->implementation() + (copies ? " + " + std::to_string(copies) + " permute copies" : "");
  }

 private:
  NodeSpec spec_;
  ContractionPlan p_;
  std::vector<DeviceTensor> in_, out_;
  int bytes_ = 4;
  DeviceBuffer packed_a_, packed_b_, product_;
  std::unique_ptr<OperatorRunner> gemm_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_contraction_runner(const NodeSpec& spec, const ContractionPlan& plan, std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!accepts_dtype(ContractionRunner::kDtypes, dtype, "Einsum in ", reason)) return nullptr;
  return std::make_unique<ContractionRunner>(spec, plan);
}

}  // namespace modelcost::cuda
