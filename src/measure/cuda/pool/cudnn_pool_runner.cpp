// Max and average pooling through cuDNN (channels-last for fp16/bf16, like the convolutions).
#include "core/cudnn_util.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

class CudnnPoolRunner : public OperatorRunner {
 public:
  CudnnPoolRunner(const NodeSpec& spec, const PoolParams& pool) : spec_(spec), p_(pool) {}
  ~CudnnPoolRunner() override {
    if (x_) cudnnDestroyTensorDescriptor(x_);
    if (y_) cudnnDestroyTensorDescriptor(y_);
    if (pool_) cudnnDestroyPoolingDescriptor(pool_);
  }

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    handle_ = ctx.cudnn;
    x_ptr_ = in[0].data;
    y_ptr_ = out[0].data;
    const int32_t dtype = out[0].spec.dtype;
    channels_last_ = dtype != 1 && ctx.channels_last_half;
    const cudnnTensorFormat_t format = channels_last_ ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const Shape& xs = in[0].spec.shape;
    const Shape& ys = out[0].spec.shape;
    MC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_));
    MC_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_));
    MC_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pool_));
    set_tensor(x_, format, cudnn_type(dtype), nchw_dims(xs[0], xs[1], std::vector<int64_t>(xs.begin() + 2, xs.end())));
    set_tensor(y_, format, cudnn_type(dtype), nchw_dims(ys[0], ys[1], std::vector<int64_t>(ys.begin() + 2, ys.end())));
    const size_t n = p_.kernel.size();
    const std::vector<int> window = spatial_params(p_.kernel, 1, n), strides = spatial_params(p_.strides, 1, n),
                           pads = spatial_params(std::vector<int64_t>(p_.pads.begin(), p_.pads.begin() + n), 0, n);
    const cudnnPoolingMode_t mode = p_.max ? CUDNN_POOLING_MAX
                                    : p_.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                           : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    MC_CUDNN_CHECK(cudnnSetPoolingNdDescriptor(pool_, mode, CUDNN_NOT_PROPAGATE_NAN, static_cast<int>(window.size()),
                                               window.data(), pads.data(), strides.data()));
  }

  void launch(cudaStream_t stream) override {
    MC_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    const float one = 1.f, zero = 0.f;
    MC_CUDNN_CHECK(cudnnPoolingForward(handle_, pool_, &one, x_, x_ptr_, &zero, y_, y_ptr_));
  }

  std::string implementation() const override {
    return std::string("cudnn pooling ") + (channels_last_ ? "NHWC" : "NCHW");
  }

 private:
  NodeSpec spec_;
  PoolParams p_;
  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
  void *x_ptr_ = nullptr, *y_ptr_ = nullptr;
  bool channels_last_ = false;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_cudnn_pool_runner(const NodeSpec& spec, const PoolParams& p, std::string* reason) {
  const size_t n = p.kernel.size();
  const Shape& x = spec.in(0).shape;
  const Shape& y = spec.outputs[0].shape;
  for (size_t i = 0; i < n; ++i) {
    if (p.pads[i] != p.pads[i + n]) {
      *reason = "pooling with asymmetric pads";
      return nullptr;
    }
    // cuDNN sizes the output by floor division; ceil_mode outputs one more.
    if ((x[2 + i] + 2 * p.pads[i] - p.kernel[i]) / p.strides[i] + 1 != y[2 + i]) {
      *reason = "pooling with ceil_mode output size";
      return nullptr;
    }
  }
  if (n > 3) {
    *reason = "pooling over more than 3 spatial dims";
    return nullptr;
  }
  return std::make_unique<CudnnPoolRunner>(spec, p);
}

}  // namespace modelcost::cuda
