// An inference BatchNormalization as a runtime runs it inside another kernel: the per-channel
// scale and shift it folds to once, outside any timed launch.
#include <cmath>

#include "core/tensor_transfer.h"
#include "deployed/group_runner.h"

namespace modelcost::cuda {

FoldedBatchNorm fold_batch_norm(const GroupView& view, size_t m) {
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
  FoldedBatchNorm out;
  out.buffer = DeviceBuffer(folded.data.size() * sizeof(float));
  upload(folded, out.buffer.data(), view.cuda.stream);
  out.scale = static_cast<const float*>(out.buffer.data());
  out.shift = out.scale + channels;
  return out;
}

}  // namespace modelcost::cuda
