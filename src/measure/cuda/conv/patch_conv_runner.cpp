// A non-overlapping "patch" convolution (kernel <= stride, no padding or dilation, one group: a
// ViT patch embedding, the Swin and ConvNeXt stems, a strided 1x1 shortcut) as the GEMM it is:
// one strided copy gathers the input's patches into a [N*O, C*K] matrix (O output positions, K
// kernel positions), and cuBLASLt multiplies it by the [OC, C*K] weights transposed, the bias in
// its epilogue. Layouts follow the cuDNN runner: fp16/bf16 channels-last (NHWC input, KRSC
// weights; the product [N*O, OC] is the NHWC output), fp32 NCHW (one more strided copy transposes
// the product). The factory takes this runner for gather convs whose input channels tensor cores
// cannot take as they are (C % 8 != 0, 3-channel images): cuDNN 9.14's kernels for those run
// 25-30x off the roofline in every layout and algorithm (ViT-B/16's patch conv: 276 us against
// 10.5). Other strided ones it times against cuDNN: a 1x1 stride-2 conv of 64 to 96 channels at
// batch 32 got a legacy implicit-GEMM kernel at 10x its roofline.
#include "core/cuda_check.h"
#include "core/device_buffer.h"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

class PatchConvRunner : public OperatorRunner {
 public:
  static constexpr auto kDtypes = kFloatDtypes;

  PatchConvRunner(const NodeSpec& spec, const ConvParams& conv) : spec_(spec), c_(conv) {}

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const int32_t dtype = out[0].spec.dtype;
    element_bytes_ = static_cast<int>(dtype_size(dtype));
    channels_last_ = dtype != 1 && ctx.channels_last_half;
    x_ = in[0].data;
    const size_t n = c_.kernel.size();
    int64_t positions = 1, patch = c_.in_channels;
    for (size_t i = 0; i < n; ++i) {
      positions *= c_.out_size[i];
      patch *= c_.kernel[i];
    }
    rows_ = c_.batch * positions;

    // Patch rows in the weights' order: NCHW input and [OC, C, K1..Kn] weights give dims
    // [N, O1..On, C, K1..Kn]; channels-last input and [OC, K1..Kn, C] weights [N, O1..On, K1..Kn, C].
    int64_t plane = 1;  // elements of one channel's image
    for (int64_t size : c_.in_size) plane *= size;
    const int64_t channel_stride = channels_last_ ? 1 : plane;
    std::vector<int64_t> spatial_stride(n, channels_last_ ? c_.in_channels : 1);  // element strides of the spatial dims
    for (size_t i = n - 1; i-- > 0;) spatial_stride[i] = spatial_stride[i + 1] * c_.in_size[i + 1];
    gather_.dims = {c_.batch};
    gather_.src_strides = {c_.in_channels * plane};
    auto add = [&](int64_t dim, int64_t stride) {
      gather_.dims.push_back(dim);
      gather_.src_strides.push_back(stride);
    };
    for (size_t i = 0; i < n; ++i) add(c_.out_size[i], c_.strides[i] * spatial_stride[i]);
    if (!channels_last_) add(c_.in_channels, channel_stride);
    for (size_t i = 0; i < n; ++i) add(c_.kernel[i], spatial_stride[i]);
    if (channels_last_) add(c_.in_channels, channel_stride);
    // A patch row of whole 16-byte units (zeros past the patch, in the weights too) lets cuBLASLt
    // take a tensor-core kernel: K = 3 or 12 gets a 2-byte-aligned FFMA one, MobileOne's 1x1
    // stride-2 stem 55 us at batch 32 (H200).
    const int64_t unit = 16 / element_bytes_, row = (patch + unit - 1) / unit * unit;
    const size_t outer = 1 + n;  // batch and output positions: whole rows apart
    gather_.dst_strides.assign(gather_.dims.size(), 1);
    for (size_t i = gather_.dims.size() - 1; i-- > 0;)
      gather_.dst_strides[i] = i + 1 == outer ? row : gather_.dst_strides[i + 1] * gather_.dims[i + 1];
    gather_.merge_dims();
    patches_.resize(static_cast<size_t>(rows_ * row) * element_bytes_);
    DeviceTensor weights = in[1];
    if (row != patch) {  // the padding columns stay zero: the gather never writes them
      MC_CUDA_CHECK(cudaMemsetAsync(patches_.data(), 0, patches_.bytes(), ctx.stream));
      padded_weights_.resize(static_cast<size_t>(c_.out_channels * row) * element_bytes_);
      MC_CUDA_CHECK(cudaMemsetAsync(padded_weights_.data(), 0, padded_weights_.bytes(), ctx.stream));
      StridedCopy pad;
      pad.dims = {c_.out_channels, patch};
      pad.src_strides = {patch, 1};
      pad.dst_strides = {row, 1};
      launch_strided_copy(element_bytes_, in[1].data, padded_weights_.data(), pad, ctx.stream);
      weights.data = padded_weights_.data();
    }

    // [N*O, C*K] x [OC, C*K]^T (+ bias over OC) = [N*O, OC].
    MatMulParams gemm_plan;
    gemm_plan.m = rows_;
    gemm_plan.n = c_.out_channels;
    gemm_plan.k = row;
    gemm_plan.trans_b = true;
    if (c_.has_bias) {
      gemm_plan.bias = MatMulParams::Bias::kRow;
      gemm_plan.beta = 1;
    }
    NodeSpec gemm_spec = spec_;
    gemm_spec.allow_tf32 = true;  // fp32 convs may use TF32, as the cuDNN runner's default math allows
    std::string reason;
    gemm_ = make_cublaslt_matmul_runner(gemm_spec, gemm_plan, &reason);
    if (!gemm_) throw Error(kExitRuntime, "patch convolution as a GEMM: " + reason);
    if (!channels_last_) product_.resize(static_cast<size_t>(rows_ * c_.out_channels) * element_bytes_);
    std::vector<DeviceTensor> gemm_in(c_.has_bias ? 3 : 2), gemm_out(1);
    gemm_in[0].data = patches_.data();
    gemm_in[1] = weights;
    if (c_.has_bias) gemm_in[2] = in[2];
    gemm_out[0] = out[0];
    gemm_out[0].data = channels_last_ ? out[0].data : product_.data();
    gemm_->prepare(gemm_in, gemm_out, ctx);

    if (!channels_last_) {  // [N, O, OC] -> [N, OC, O]
      to_nchw_.dims = {c_.batch, c_.out_channels, positions};
      to_nchw_.src_strides = {positions * c_.out_channels, 1, c_.out_channels};
      to_nchw_.dst_strides = {positions * c_.out_channels, positions, 1};
      y_ = out[0].data;
    }
  }

  void launch(cudaStream_t stream) override {
    launch_strided_copy(element_bytes_, x_, patches_.data(), gather_, stream);
    gemm_->launch(stream);
    if (!channels_last_) launch_strided_copy(element_bytes_, product_.data(), y_, to_nchw_, stream);
  }

  std::string implementation() const override {
    return std::string("patch conv: gather + ") + gemm_->implementation() + (channels_last_ ? " (NHWC)" : " + transpose to NCHW");
  }

 private:
  NodeSpec spec_;
  ConvParams c_;
  StridedCopy gather_, to_nchw_;
  DeviceBuffer patches_, product_, padded_weights_;
  std::unique_ptr<OperatorRunner> gemm_;
  const void* x_ = nullptr;
  void* y_ = nullptr;
  int64_t rows_ = 0;
  int element_bytes_ = 2;
  bool channels_last_ = true;
};

}  // namespace

bool is_gather_conv(const ConvParams& c) {
  if (c.groups != 1 || c.kernel.empty() || c.kernel.size() > 3) return false;
  for (size_t i = 0; i < c.kernel.size(); ++i)
    if (c.strides[i] < c.kernel[i] || c.dilations[i] != 1 || c.pads[i] != 0 || c.pads[i + c.kernel.size()] != 0) return false;
  return true;
}

bool is_patch_conv(const ConvParams& c) {
  if (!is_gather_conv(c)) return false;
  for (size_t i = 0; i < c.kernel.size(); ++i)
    if (c.strides[i] != c.kernel[i]) return false;
  return true;
}

bool needs_gather_gemm(const ConvParams& c) {
  return is_gather_conv(c) && c.in_channels % 8 != 0 && !is_pointwise_gemm_conv(c);
}

std::unique_ptr<OperatorRunner> make_patch_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* reason) {
  const int32_t dtype = spec.outputs[0].dtype;
  if (!accepts_dtype(PatchConvRunner::kDtypes, dtype, "Conv in ", reason)) return nullptr;
  return std::make_unique<PatchConvRunner>(spec, conv);
}

}  // namespace modelcost::cuda
