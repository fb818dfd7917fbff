// An inference BatchNormalization as a runtime runs it inside another kernel: the per-channel
// scale and shift it folds to once, outside any timed launch.
#include <cmath>

#include "core/tensor_transfer.h"
#include "deployed/group_runner.h"

namespace modelcost::cuda {

HostTensor batch_norm_scale_shift(const GroupView& view, size_t m) {
  const NodeSpec& spec = view.spec(m);
  const Node& node = view.node(m);
  const auto& plan = std::get<BatchNormPlan>(view.plan(m));
  std::vector<HostTensor> p;  // gamma, beta, mean, variance
  for (int k = 1; k <= 4; ++k) p.push_back(download(view.buffers.data(node.inputs[k]), spec.inputs[k], view.cuda.stream));
  const int64_t channels = plan.axis_len;
  HostTensor folded({2 * channels}, 1);
  for (int64_t c = 0; c < channels; ++c) {
    const float scale = p[0].data[c] / std::sqrt(p[3].data[c] + static_cast<float>(plan.epsilon));
    folded.data[c] = scale;
    folded.data[channels + c] = p[1].data[c] - p[2].data[c] * scale;
  }
  return folded;
}

FoldedBatchNorm fold_batch_norm(const GroupView& view, size_t m) {
  const HostTensor folded = batch_norm_scale_shift(view, m);
  const int64_t channels = static_cast<int64_t>(folded.data.size() / 2);
  FoldedBatchNorm out;
  out.buffer = DeviceBuffer(folded.data.size() * sizeof(float));
  upload(folded, out.buffer.data(), view.cuda.stream);
  out.scale = static_cast<const float*>(out.buffer.data());
  out.shift = out.scale + channels;
  return out;
}

namespace {

// The product's weight with column n times scale[n], and the bias shift[n] + (scale_bias ?
// scale[n] : 1) * bias[n] over the product's own bias or the epilogue's bias tensor (zero where
// there is none), both uploaded in the product's dtype.
WeightsWithBatchNorm fold_columns(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m,
                                  const std::vector<float>& scale, const std::vector<float>& shift, bool scale_bias) {
  const Node& node = view.node(e.anchor);
  const NodeSpec& spec = view.spec(e.anchor);
  cudaStream_t stream = view.cuda.stream;
  HostTensor weights = download(view.buffers.data(node.inputs[1]), spec.inputs[1], stream);
  for (size_t i = 0; i < weights.data.size(); ++i) {
    const int64_t column = m.trans_b ? static_cast<int64_t>(i) / m.k : static_cast<int64_t>(i) % m.n;
    weights.data[i] *= scale[column];
  }
  HostTensor own;
  if (m.bias == MatMulParams::Bias::kRow && node.inputs.size() > 2 && node.inputs[2] >= 0) {
    own = download(view.buffers.data(node.inputs[2]), spec.inputs[2], stream);
  } else if (e.bias >= 0) {
    const size_t add = static_cast<size_t>(view.consumers(e.bias).front());
    const Node& a = view.node(add);
    own = download(view.buffers.data(e.bias), view.spec(add).inputs[a.inputs[0] == e.bias ? 0 : 1], stream);
  }
  HostTensor bias({m.n}, spec.outputs[0].dtype);
  for (int64_t c = 0; c < m.n; ++c) {
    const float b = own.data.empty() ? 0.f : own.data[static_cast<size_t>(c) % own.data.size()];
    bias.data[c] = shift[c] + (scale_bias ? scale[c] : 1.f) * b;
  }
  WeightsWithBatchNorm out;
  out.weights = DeviceBuffer(static_cast<size_t>(spec.inputs[1].elements()) * dtype_size(spec.inputs[1].dtype));
  out.bias = DeviceBuffer(static_cast<size_t>(m.n) * dtype_size(bias.dtype));
  upload(weights, out.weights.data(), stream);
  upload(bias, out.bias.data(), stream);
  return out;
}

}  // namespace

WeightsWithBatchNorm fold_batch_norm_into_weights(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m) {
  const HostTensor folded = batch_norm_scale_shift(view, static_cast<size_t>(e.batch_norm));
  const std::vector<float> scale(folded.data.begin(), folded.data.begin() + m.n), shift(folded.data.begin() + m.n, folded.data.end());
  return fold_columns(view, e, m, scale, shift, /*scale_bias=*/true);
}

WeightsWithBatchNorm fold_column_scale_into_weights(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m) {
  const size_t mul = static_cast<size_t>(e.column_scale);
  const Node& node = view.node(mul);
  const int operand = view.producer(node.inputs[0]) < 0 ? 0 : 1;  // the factor: no member writes it
  const HostTensor factor = download(view.buffers.data(node.inputs[operand]), view.spec(mul).inputs[operand], view.cuda.stream);
  std::vector<float> scale(static_cast<size_t>(m.n)), shift(static_cast<size_t>(m.n), 0.f);
  for (int64_t c = 0; c < m.n; ++c) scale[c] = factor.data[static_cast<size_t>(c) % factor.data.size()];
  return fold_columns(view, e, m, scale, shift, e.bias_scaled);
}

}  // namespace modelcost::cuda
