// A grouped conv of few groups run as the dense conv it equals: the filters laid out block-
// diagonally (each group's filters over its own input channels, zeros elsewhere), so cuDNN's dense
// kernels run it. The math grows by the group count, but dense kernels run tens of times faster
// than cuDNN's grouped ones at widths those do not tile well (RegNetX's groups of 24 channels ran
// at 10-13 TFLOP/s on the H100). A candidate of the conv's timed choice, which keeps it only where
// it is faster; prepare() builds the dense filters once, outside the timed launches.
#include "core/device_buffer.h"
#include "core/kernels.h"
#include "core/runner.h"

namespace modelcost::cuda {
namespace {

// Dense filters cost `groups` times the math and filter bytes; past this the candidate is not tried.
constexpr int64_t kMaxGroups = 64;

class BlockDiagonalConvRunner : public OperatorRunner {
 public:
  BlockDiagonalConvRunner(const NodeSpec& grouped, const ConvParams& conv) : c_(conv) {
    ConvParams dense = conv;
    dense.groups = 1;
    NodeSpec spec = grouped;
    spec.inputs[1].shape[1] = conv.in_channels;
    spec.attributes.ints["group"] = 1;
    std::string why;
    dense_ = make_cudnn_conv_runner(spec, dense, &why);
    if (!dense_) throw Error(kExitRuntime, "dense conv refused: " + why);
  }

  void prepare(const std::vector<DeviceTensor>& in, const std::vector<DeviceTensor>& out, CudaContext& ctx) override {
    const int64_t taps = in[1].spec.elements() / (c_.out_channels * (c_.in_channels / c_.groups));
    const int bytes = static_cast<int>(dtype_size(in[1].spec.dtype));
    const size_t dense_bytes = static_cast<size_t>(c_.out_channels * c_.in_channels * taps * bytes);
    filters_.resize(dense_bytes);
    MC_CUDA_CHECK(cudaMemsetAsync(filters_.data(), 0, dense_bytes, ctx.stream));
    // Grouped filters [K, C/g, taps] (NCHW) or [K, taps, C/g] (channels-last) into [K, C, taps]
    // or [K, taps, C]: each group's block at its own input channels.
    const bool channels_last = in[1].spec.dtype != 1 && ctx.channels_last_half;
    const int64_t out_per_group = c_.out_channels / c_.groups, in_per_group = c_.in_channels / c_.groups;
    for (int64_t g = 0; g < c_.groups; ++g) {
      StridedCopy block;
      block.dims = channels_last ? std::vector<int64_t>{out_per_group, taps, in_per_group}
                                 : std::vector<int64_t>{out_per_group, in_per_group, taps};
      block.src_strides = channels_last ? std::vector<int64_t>{taps * in_per_group, in_per_group, 1}
                                        : std::vector<int64_t>{in_per_group * taps, taps, 1};
      block.dst_strides = channels_last ? std::vector<int64_t>{taps * c_.in_channels, c_.in_channels, 1}
                                        : std::vector<int64_t>{c_.in_channels * taps, taps, 1};
      block.src_offset = g * out_per_group * in_per_group * taps;
      block.dst_offset = g * out_per_group * c_.in_channels * taps + g * in_per_group * (channels_last ? 1 : taps);
      launch_strided_copy(bytes, in[1].data, filters_.data(), block, ctx.stream);
    }
    std::vector<DeviceTensor> dense_in = in;
    dense_in[1].spec.shape[1] = c_.in_channels;
    dense_in[1].data = filters_.data();
    dense_->prepare(dense_in, out, ctx);
  }

  void launch(cudaStream_t stream) override { dense_->launch(stream); }
  std::string implementation() const override { return "block-diagonal dense " + dense_->implementation(); }

 private:
  ConvParams c_;
  std::unique_ptr<OperatorRunner> dense_;
  DeviceBuffer filters_;
};

}  // namespace

std::unique_ptr<OperatorRunner> make_block_diagonal_conv_runner(const NodeSpec& spec, const ConvParams& conv, std::string* why) {
  if (conv.groups < 2 || conv.groups > kMaxGroups || conv.in_channels == conv.groups) {
    *why = "block-diagonal dense conv: 2 to 64 groups of several channels";
    return nullptr;
  }
  try {
    return std::make_unique<BlockDiagonalConvRunner>(spec, conv);
  } catch (const Error& e) {
    *why = e.what();
    return nullptr;
  }
}

}  // namespace modelcost::cuda
