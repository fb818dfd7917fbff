// Runners of the deployed view: each fusion group runs as the kernels a runtime runs for it.
// Strategies, tried in order by make_group_kernel: flash attention (own kernel), a conv or GEMM
// with its epilogue in the library call (cuDNN conv+bias+add+ReLU, cuBLASLt bias/ReLU/GELU
// epilogues and a residual through C) followed by one pointwise chain for what the library
// cannot take, one pointwise chain kernel, and last the members' own per-node kernels in
// sequence (the fallback, reported as such). Everything is prepared at construction, so launch()
// only enqueues and can be captured into a CUDA graph.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_buffer.h"
#include "deployed/model_buffers.h"
#include "measure/host_tensor.h"
#include "modelcost/fusion.h"

namespace modelcost::cuda {

class GroupKernel {
 public:
  virtual ~GroupKernel() = default;
  virtual void launch(cudaStream_t stream) = 0;
  virtual std::string implementation() const = 0;
  // The one per-node runner this kernel is, where it is one (a lone member run as the per-node
  // measurement runs it: that measurement's figure is this group's), else nullptr.
  virtual const OperatorRunner* lone_runner() const { return nullptr; }
};

// A group as its runners see it: its members (indices into Analysis::nodes) and who produces
// and reads each tensor inside it.
class GroupView {
 public:
  GroupView(const Analysis& analysis, const FusedGroup& group, ModelBuffers& buffers, CudaContext& cuda)
      : analysis(analysis), group(group), buffers(buffers), cuda(cuda) {}
  const Node& node(size_t m) const { return *analysis.nodes[m].node; }
  const NodeSpec& spec(size_t m) const { return buffers.planned(m).spec; }
  const OpPlan& plan(size_t m) const { return buffers.planned(m).plan; }
  int producer(int tensor) const;                  // the member writing `tensor`, -1 for none
  std::vector<size_t> consumers(int tensor) const;  // members reading `tensor`
  bool is_output(int tensor) const;                // read outside the group (or a graph output)
  // Members whose plan runs a kernel, less the layout moves folded into a neighbour (unless the
  // group has nothing else); running_members() keeps those too (the per-node fallback).
  std::vector<size_t> launching_members() const;
  std::vector<size_t> running_members() const;
  // Follows reshape-like members (aliases) back to the tensor they reinterpret.
  int source(int tensor) const;
  // Follows reshape-like members and the layout moves folded into their neighbours back to the
  // tensor they are a view of (channels-last, a conv output flattened and transposed is its bytes).
  int view_source(int tensor) const;

  const Analysis& analysis;
  const FusedGroup& group;
  ModelBuffers& buffers;
  CudaContext& cuda;
};

struct GroupKernelChoice {
  std::unique_ptr<GroupKernel> kernel;  // nullptr: the group runs nothing (layout only)
  bool fused = false;
  std::string fallback_reason;          // why the members run their own kernels
};
// Throws Error where even the per-node kernels cannot run a member.
GroupKernelChoice make_group_kernel(const GroupView& view);
// Equal for two groups exactly when they run the same kernels (`implementation`) on the same
// work: pattern, members' measurement keys and the wiring between them (group_key.cpp).
std::string group_measurement_key(const GroupView& view, const std::string& implementation);

// The strategies (one file each); nullptr with *why where one does not apply.
std::unique_ptr<GroupKernel> make_attention_kernel(const GroupView& view, std::string* why);
std::unique_ptr<GroupKernel> make_epilogue_kernel(const GroupView& view, std::string* why);
// A "sibling_products" group as one strided batched cuBLASLt call (gemm/sibling_products_kernel.cpp).
std::unique_ptr<GroupKernel> make_sibling_products_kernel(const GroupView& view, std::string* why);
// One pointwise chain over `members` (elementwise members of the view, in order).
std::unique_ptr<GroupKernel> make_chain_kernel(const GroupView& view, const std::vector<size_t>& members, std::string* why);
// The same chain after a first step adding conv `anchor`'s per-channel bias to its output (the
// conv ran without it): what a runtime launches after a library conv that takes no epilogue.
std::unique_ptr<GroupKernel> make_bias_chain_kernel(const GroupView& view, size_t anchor, const std::vector<size_t>& members,
                                                    std::string* why);
// Reductions over the trailing axes of one shape with their elementwise prologue and epilogue
// (`members` in order) as one generated row program (norm/row_program.h).
std::unique_ptr<GroupKernel> make_row_program_kernel(const GroupView& view, const std::vector<size_t>& members, std::string* why);
// The members' own per-node runners, in order (throws where one has none).
std::unique_ptr<GroupKernel> make_node_sequence(const GroupView& view, const std::vector<size_t>& members);
// A depthwise conv (`anchor`) whose `rest` members are one activation of its output: the own
// depthwise kernel with the activation in its store, or `separate` (the conv's runner and a
// chain) where the pattern does not hold or that runs faster.
std::unique_ptr<GroupKernel> make_depthwise_epilogue_kernel(const GroupView& view, size_t anchor,
                                                            const std::vector<size_t>& rest,
                                                            std::unique_ptr<GroupKernel> separate);
// The faster of two ways to run a group (each timed as measurements time, on cuda.stream by
// cuda.timing), the other's time noted in its implementation. `work` (group_measurement_key of
// the group, or empty) keys quick_median_us's memo: identical groups time their candidates once.
std::unique_ptr<GroupKernel> make_timed_choice(std::unique_ptr<GroupKernel> a, std::unique_ptr<GroupKernel> b,
                                               CudaContext& cuda, const std::string& work = {});
// Runs several kernels in order as one.
std::unique_ptr<GroupKernel> make_kernel_sequence(std::vector<std::unique_ptr<GroupKernel>> kernels);

// An inference BatchNormalization member folded as a runtime folds it: y = x * scale[c] + shift[c]
// with scale = gamma / sqrt(var + eps) and shift = beta - mean * scale, fp32, computed once
// (batch_norm_fold.cpp). The buffer holds both vectors.
struct FoldedBatchNorm {
  DeviceBuffer buffer;
  const float* scale = nullptr;
  const float* shift = nullptr;
};
FoldedBatchNorm fold_batch_norm(const GroupView& view, size_t m);
// The folded BatchNorm's scale and shift on the host: [scale (C), shift (C)].
HostTensor batch_norm_scale_shift(const GroupView& view, size_t m);

// True where `members` are exactly the erf GELU as exporters spell it (x * 0.5 * (1 + erf(x /
// sqrt 2)), in any order of the scalings) or one Gelu, read from their elementwise plans.
bool is_erf_gelu(const GroupView& view, const std::vector<size_t>& members);
// Library-fused matrix ops of an epilogue: `output` receives act(op(x, w) + bias + residual).
// clipped: min(max(x, 0), clip); swish: x * sigmoid(x) (SiLU).
enum class EpilogueActivation { kNone, kRelu, kGelu, kClippedRelu, kSwish, kSigmoid };
struct MatrixEpilogue {
  size_t anchor = 0;       // the Conv / MatMul / Gemm member
  int bias = -1;           // tensor ids, -1 for none (a Gemm's or Conv's own bias counts as bias)
  int residual = -1;
  // A second residual added after the first (RepVGG's three branches summed before the ReLU): only
  // cuDNN's graph takes it, the fused call and cuBLASLt refuse an epilogue that has one.
  int second_residual = -1;
  EpilogueActivation activation = EpilogueActivation::kNone;
  int output = -1;         // the tensor the fused call writes
  double clip = 0;         // kClippedRelu's upper bound (ReLU6: 6)
  // > 1: a [S, G, N] -> [G, S, N] transpose of the product folded into its store (G batches).
  int64_t interleaved_rows = 1;
  // A BatchNormalization member over the product's rows folded into its constant weight's columns
  // and the bias (LeViT's linear), -1 for none.
  int batch_norm = -1;
  // A Mul member by a constant per-output-channel factor (a layer scale) folded into the weight and
  // bias of a product with one constant 2-D weight or of a dense conv, -1 for none;
  // bias_scaled: the bias was added before it, so the factor scales the bias too.
  int column_scale = -1;
  bool bias_scaled = false;
  // A BatchNorm or a column scale folds into a copy of the weight and bias.
  bool folds_into_weights() const { return batch_norm >= 0 || column_scale >= 0; }
};
// A product's constant weight with its epilogue's BatchNorm folded in (W[:, n] * scale[n]) and the
// bias that leaves (shift[n] + scale[n] * the product's own bias), both in the product's dtype.
struct WeightsWithBatchNorm {
  DeviceBuffer weights, bias;
};
WeightsWithBatchNorm fold_batch_norm_into_weights(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m);
// The same for the epilogue's column scale: W[:, n] * s[n], and the bias (the product's own or the
// epilogue's, zero without one) times s[n] where it was added before the scale.
WeightsWithBatchNorm fold_column_scale_into_weights(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m);
std::unique_ptr<GroupKernel> make_fused_conv_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why);
// A MatMul / Gemm, or a 1x1 conv run channels-last as the GEMM it is (conv_gemm_runner.cpp),
// with a cuBLASLt epilogue (bias, ReLU, GELU; residual through C).
std::unique_ptr<GroupKernel> make_fused_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why);
// The same product with K and N at most 32 as the thin product kernel with its bias and ReLU
// (gemm/thin_product.h), or nullptr where it does not apply (a residual, another activation).
std::unique_ptr<GroupKernel> make_thin_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m);
// The same product of 1-32 rows (weights [N, K], K a multiple of 32, fp16) as the skinny weight
// stream with its bias (gemm/skinny_gemm.h), or nullptr where it does not apply (an activation,
// a residual, a folded BatchNorm).
std::unique_ptr<GroupKernel> make_skinny_gemm_kernel(const GroupView& view, const MatrixEpilogue& e, const MatMulParams& m);
// A dense, grouped or depthwise 2-D conv with bias, residual and any activation above but GELU as one cuDNN
// graph (conv_graph_kernel.cpp); channels-last fp16/bf16 only.
std::unique_ptr<GroupKernel> make_conv_graph_kernel(const GroupView& view, const MatrixEpilogue& e, std::string* why);
// Conv `anchor` alone, without its bias, as one cuDNN graph writing its output (its engines hold
// cuDNN's specialised depthwise kernels, which no epilogue graph and no legacy algorithm reaches).
std::unique_ptr<GroupKernel> make_bare_conv_graph_kernel(const GroupView& view, size_t anchor, std::string* why);
// The epilogue make_epilogue_kernel tries as one cuDNN graph for this group (a dense conv's
// activation the fused call cannot take or second residual, a grouped conv's epilogue), or nothing.
std::optional<MatrixEpilogue> conv_graph_epilogue(const GroupView& view);

}  // namespace modelcost::cuda
