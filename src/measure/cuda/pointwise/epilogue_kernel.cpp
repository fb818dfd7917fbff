// Conv / MatMul / Gemm groups: the matrix op takes as much of its epilogue into the library call
// as the library runs (a per-channel bias, one residual add, then ReLU, or GELU for cuBLASLt),
// walking forward from its output; the members left run as one pointwise chain after it. A dense
// conv's group is also tried as one cuDNN graph (SiLU, ReLU6 and Sigmoid included) and, for a 1x1
// conv, as a cuBLASLt GEMM with its epilogue (GELU included); a grouped conv's as one cuDNN graph;
// the fastest runs.
#include <algorithm>
#include <map>
#include <optional>

#include "deployed/group_runner.h"

namespace modelcost::cuda {

bool is_erf_gelu(const GroupView& view, const std::vector<size_t>& members) {
  std::map<ElementwiseOp, int> ops;
  for (size_t m : members) {
    const auto* e = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!e) return false;
    ++ops[e->op];
  }
  if (ops == std::map<ElementwiseOp, int>{{ElementwiseOp::kGelu, 1}}) return true;
  const int scale = ops[ElementwiseOp::kDiv] + ops[ElementwiseOp::kMul];
  return members.size() == 5 && ops[ElementwiseOp::kErf] == 1 && ops[ElementwiseOp::kAdd] == 1 && scale == 3;
}

namespace {

bool is_elementwise(const OpPlan& plan, ElementwiseOp op) {
  const auto* e = std::get_if<ElementwisePlan>(&plan);
  return e && e->op == op;
}

// Tensor t's only reader in the group, or -1 (none, several, or t is read outside too).
int single_consumer(const GroupView& view, int t) {
  if (view.is_output(t)) return -1;
  const auto readers = view.consumers(t);
  return readers.size() == 1 ? static_cast<int>(readers.front()) : -1;
}

// G where member c transposes an unbatched product's [S, G, N] output to [G, S, N] (a
// sequence-first attention's out-projection on its way to the residual add), else 0.
int64_t sequence_first_transpose(const GroupView& view, size_t anchor, size_t c) {
  const auto* product = std::get_if<MatMulParams>(&view.plan(anchor));
  if (!product || product->batch != 1 || product->trans_a || view.node(c).op_type != "Transpose") return 0;
  const Shape& in = view.spec(c).inputs[0].shape;
  if (view.spec(c).attributes.get_ints("perm") != std::vector<int64_t>{1, 0, 2} || in.size() != 3) return 0;
  return in[2] == product->n && in[0] * in[1] == product->m ? in[1] : 0;
}

// A constant weight a factor per output channel folds into: one 2-D matrix shared by a product's
// batch, or a dense (one group) conv's.
bool foldable_weight(const GroupView& view, size_t anchor) {
  const auto* product = std::get_if<MatMulParams>(&view.plan(anchor));
  const auto* conv = std::get_if<ConvParams>(&view.plan(anchor));
  if (view.node(anchor).inputs.size() < 2) return false;
  const TensorInfo& weight = view.analysis.graph->tensors[view.node(anchor).inputs[1]];
  if (!(weight.is_initializer || weight.value)) return false;
  if (product) return weight.shape.size() == 2 && !(product->batch > 1 && product->b_batch_stride != 0);
  return conv && conv->groups == 1;
}

// Member c is a BatchNormalization over the rows [M, N] of a product whose weight is one constant
// 2-D matrix: it folds into the weight's columns and the bias (the fusion plan's folded BatchNorm).
bool folds_into_product(const GroupView& view, size_t anchor, size_t c) {
  const auto* product = std::get_if<MatMulParams>(&view.plan(anchor));
  if (!product || !std::holds_alternative<BatchNormPlan>(view.plan(c)) || !foldable_weight(view, anchor)) return false;
  const Shape& rows = view.spec(c).inputs[0].shape;
  return rows.size() == 2 && rows[1] == product->n;
}

// Member c multiplies the running result `value` (the anchor's output shape) by a constant of
// one value per output channel (or one in all), and the anchor's weight is a constant: a product
// with one 2-D weight matrix (channels last) or a dense conv (channels on axis 1). The factor
// folds into the weight and bias (the fusion plan's library epilogue takes a layer scale so).
bool scales_output_channels(const GroupView& view, size_t anchor, size_t c, int value) {
  const Node& node = view.node(c);
  if (!is_elementwise(view.plan(c), ElementwiseOp::kMul) || node.inputs.size() != 2 || !foldable_weight(view, anchor)) return false;
  const int k = node.inputs[0] == value ? 1 : 0;
  if (node.inputs[1 - k] != value || view.producer(node.inputs[k]) >= 0) return false;
  const TensorInfo& factor = view.analysis.graph->tensors[node.inputs[k]];
  const Shape& result = view.spec(anchor).outputs[0].shape;
  if (!(factor.is_initializer || factor.value) || view.spec(c).outputs[0].shape != result) return false;
  const size_t axis = std::holds_alternative<MatMulParams>(view.plan(anchor)) ? result.size() - 1 : 1;
  return per_channel_factor(view.spec(c).inputs[k].shape, result, axis);
}

// Walks the epilogue from the anchor's output; `taken` lists the members the library call takes.
MatrixEpilogue absorb(const GroupView& view, size_t anchor, bool allow_gelu, std::vector<size_t>& taken) {
  MatrixEpilogue e;
  e.anchor = anchor;
  e.output = view.node(anchor).outputs[0];
  const Shape& out_shape = view.spec(anchor).outputs[0].shape;
  const int64_t channels = std::holds_alternative<ConvParams>(view.plan(anchor))
                               ? std::get<ConvParams>(view.plan(anchor)).out_channels
                               : (out_shape.empty() ? 1 : out_shape.back());
  const bool own_bias = view.node(anchor).inputs.size() > 2 && view.node(anchor).inputs[2] >= 0;
  while (e.activation == EpilogueActivation::kNone) {
    const int c = single_consumer(view, e.output);
    if (c < 0) break;
    const Node& node = view.node(c);
    // A reshape-like member between: its output is the same buffer.
    if (is_zero_cost(view.plan(c)) && !node.outputs.empty() && view.buffers.data(node.outputs[0]) == view.buffers.data(e.output)) {
      taken.push_back(static_cast<size_t>(c));
      e.output = node.outputs[0];
      continue;
    }
    // The transpose goes into the store; a residual read in the transposed order may follow.
    if (const int64_t rows = e.residual < 0 && e.interleaved_rows == 1 ? sequence_first_transpose(view, anchor, c) : 0) {
      e.interleaved_rows = rows;
      taken.push_back(static_cast<size_t>(c));
      e.output = node.outputs[0];
      continue;
    }
    const bool unscaled = e.bias < 0 && e.residual < 0 && e.batch_norm < 0 && e.interleaved_rows == 1;
    const bool foldable = e.residual < 0 && e.batch_norm < 0 && e.column_scale < 0 && e.interleaved_rows == 1;
    if (unscaled && folds_into_product(view, anchor, static_cast<size_t>(c))) {
      e.batch_norm = c;
    } else if (foldable && scales_output_channels(view, anchor, static_cast<size_t>(c), e.output)) {
      e.column_scale = c;
      e.bias_scaled = e.bias >= 0 || own_bias;
    } else if (is_elementwise(view.plan(c), ElementwiseOp::kAdd) && node.inputs.size() == 2) {
      const int other = node.inputs[0] == e.output ? node.inputs[1] : node.inputs[0];
      const TensorSpec& t = view.spec(c).inputs[node.inputs[0] == e.output ? 1 : 0];
      const double elements = t.elements();
      // A [N] (or [C,1,1]) vector is a bias, a tensor of the output's size a residual.
      const bool biased = e.bias >= 0 || own_bias || e.batch_norm >= 0;  // after a column scale, a bias is added unscaled
      if (elements == channels && elements != element_count(out_shape) && !biased) e.bias = other;
      else if (elements == element_count(out_shape) && e.residual < 0 && view.producer(other) < 0) e.residual = other;
      else break;
    } else if (is_elementwise(view.plan(c), ElementwiseOp::kRelu)) {
      e.activation = EpilogueActivation::kRelu;
    } else if (!allow_gelu && is_elementwise(view.plan(c), ElementwiseOp::kClip) &&
               std::get<ElementwisePlan>(view.plan(c)).alpha == 0 && std::get<ElementwisePlan>(view.plan(c)).beta > 0) {
      e.activation = EpilogueActivation::kClippedRelu;  // ReLU6 (cuDNN may refuse: then a chain runs it)
      e.clip = std::get<ElementwisePlan>(view.plan(c)).beta;
    } else {
      break;
    }
    taken.push_back(static_cast<size_t>(c));
    e.output = node.outputs[0];
  }
  if (e.activation != EpilogueActivation::kNone || !allow_gelu) return e;
  std::vector<size_t> rest;
  for (size_t m : view.launching_members())
    if (m != anchor && !std::count(taken.begin(), taken.end(), m)) rest.push_back(m);
  if (!rest.empty() && is_erf_gelu(view, rest) && !view.is_output(e.output)) {
    for (int out : view.group.outputs)
      if (view.producer(out) != static_cast<int>(rest.back())) return e;
    e.activation = EpilogueActivation::kGelu;
    e.output = view.node(rest.back()).outputs[0];
    taken.insert(taken.end(), rest.begin(), rest.end());
  }
  return e;
}

// Where the members the library call left (`rest`) are exactly one SiLU (x * Sigmoid(x)) or one
// Sigmoid of its output `e`, the epilogue with that activation (its output the activation's);
// otherwise nothing.
std::optional<MatrixEpilogue> with_trailing_activation(const GroupView& view, MatrixEpilogue e, const std::vector<size_t>& rest) {
  if (e.activation != EpilogueActivation::kNone || view.is_output(e.output) || rest.empty() || rest.size() > 2) return {};
  const size_t sigmoid = rest[0];
  if (!is_elementwise(view.plan(sigmoid), ElementwiseOp::kSigmoid) || view.node(sigmoid).inputs[0] != e.output) return {};
  const int gate = view.node(sigmoid).outputs[0];
  if (rest.size() == 1) {
    e.activation = EpilogueActivation::kSigmoid;
    e.output = gate;
    return e;
  }
  const Node& mul = view.node(rest[1]);
  const bool silu = is_elementwise(view.plan(rest[1]), ElementwiseOp::kMul) && mul.inputs.size() == 2 && !view.is_output(gate) &&
                    ((mul.inputs[0] == e.output && mul.inputs[1] == gate) || (mul.inputs[1] == e.output && mul.inputs[0] == gate));
  if (!silu) return {};
  e.activation = EpilogueActivation::kSwish;
  e.output = mul.outputs[0];
  return e;
}

// Where the members left (`rest`) are exactly the erf GELU of output `e`, and the group's results
// are its result, the epilogue with cuBLASLt's GELU (a 1x1 conv as one GEMM); otherwise nothing.
std::optional<MatrixEpilogue> with_trailing_gelu(const GroupView& view, MatrixEpilogue e, const std::vector<size_t>& rest) {
  if (e.activation != EpilogueActivation::kNone || view.is_output(e.output) || !is_erf_gelu(view, rest)) return {};
  const bool reads_output = std::any_of(rest.begin(), rest.end(), [&](size_t m) {
    const auto& inputs = view.node(m).inputs;
    return std::find(inputs.begin(), inputs.end(), e.output) != inputs.end();
  });
  if (!reads_output) return {};
  for (int out : view.group.outputs)
    if (view.producer(out) != static_cast<int>(rest.back())) return {};
  e.activation = EpilogueActivation::kGelu;
  e.output = view.node(rest.back()).outputs[0];
  return e;
}

// Where the members left (`rest`) are one more residual Add of output `e` (a tensor of the output's
// size made outside the group), optionally followed by a ReLU, and the group's result is theirs:
// the epilogue with both residuals (cuDNN's graph runs it); otherwise nothing.
std::optional<MatrixEpilogue> with_second_residual(const GroupView& view, MatrixEpilogue e, const std::vector<size_t>& rest) {
  if (e.residual < 0 || e.activation != EpilogueActivation::kNone || view.is_output(e.output) || rest.empty() || rest.size() > 2)
    return {};
  const Node& add = view.node(rest[0]);
  if (!is_elementwise(view.plan(rest[0]), ElementwiseOp::kAdd) || add.inputs.size() != 2) return {};
  const int other = add.inputs[0] == e.output ? add.inputs[1] : add.inputs[1] == e.output ? add.inputs[0] : -1;
  const Shape& out_shape = view.spec(e.anchor).outputs[0].shape;
  if (other < 0 || view.producer(other) >= 0 || view.spec(rest[0]).outputs[0].shape != out_shape) return {};
  if (element_count(view.spec(rest[0]).inputs[add.inputs[0] == e.output ? 1 : 0].shape) != element_count(out_shape)) return {};
  e.second_residual = other;
  e.output = add.outputs[0];
  if (rest.size() == 2) {
    const Node& relu = view.node(rest[1]);
    if (!is_elementwise(view.plan(rest[1]), ElementwiseOp::kRelu) || view.is_output(e.output) || relu.inputs[0] != e.output) return {};
    e.activation = EpilogueActivation::kRelu;
    e.output = relu.outputs[0];
  }
  for (int out : view.group.outputs)
    if (out != e.output) return {};
  return e;
}

// The launching members other than the anchor that the library call did not take.
std::vector<size_t> members_left(const GroupView& view, size_t anchor, const std::vector<size_t>& taken) {
  std::vector<size_t> rest;
  for (size_t m : view.launching_members())
    if (m != anchor && !std::count(taken.begin(), taken.end(), m)) rest.push_back(m);
  return rest;
}

// A dense conv's whole epilogue, `e` with the members it left (`rest`): a trailing activation,
// GELU or second residual; nothing where the rest is other work.
std::optional<MatrixEpilogue> whole_epilogue(const GroupView& view, const MatrixEpilogue& e, const std::vector<size_t>& rest) {
  std::optional<MatrixEpilogue> whole = rest.empty() ? std::optional<MatrixEpilogue>(e) : with_trailing_activation(view, e, rest);
  if (!whole) whole = with_trailing_gelu(view, e, rest);
  if (!whole) whole = with_second_residual(view, e, rest);
  return whole;
}

// Whether a dense conv's whole epilogue is also tried as one cuDNN graph: for what cuDNN's fused
// call cannot take. ReLU and identity run in the fused call already; a graph of the same (tried on
// ResNet-50: within 2 % of it) is not worth compiling.
bool runs_as_graph(const MatrixEpilogue& whole) {
  const EpilogueActivation act = whole.activation;
  return act == EpilogueActivation::kSwish || act == EpilogueActivation::kSigmoid || act == EpilogueActivation::kClippedRelu ||
         whole.second_residual >= 0;
}

// A grouped conv's epilogue as one cuDNN graph: the conv with what absorb() takes and a trailing
// activation; nothing where other members are left.
std::optional<MatrixEpilogue> grouped_graph_epilogue(const GroupView& view, size_t anchor) {
  std::vector<size_t> taken;
  const MatrixEpilogue e = absorb(view, anchor, /*allow_gelu=*/false, taken);
  const std::vector<size_t> rest = members_left(view, anchor, taken);
  return rest.empty() ? std::optional<MatrixEpilogue>(e) : with_trailing_activation(view, e, rest);
}

// A dense conv's group as a runtime may also run it: the whole epilogue as one cuDNN graph (for
// the activations cuDNN's fused call cannot take), and a 1x1 conv as a cuBLASLt GEMM with its
// epilogue; each is timed against `separate` (the fused call or per-node conv, then a chain) and
// the fastest kept. `e` is what absorb() took, `rest` the members it left.
std::unique_ptr<GroupKernel> fastest_dense_conv(const GroupView& view, const MatrixEpilogue& e, const std::vector<size_t>& rest,
                                                std::unique_ptr<GroupKernel> separate) {
  const std::optional<MatrixEpilogue> whole = whole_epilogue(view, e, rest);
  if (!whole) return separate;
  std::string why;
  if (auto graph = runs_as_graph(*whole) ? make_conv_graph_kernel(view, *whole, &why) : nullptr)
    separate = make_timed_choice(std::move(graph), std::move(separate), view.cuda);
  if (auto gemm = make_fused_gemm_kernel(view, *whole, &why))
    separate = make_timed_choice(std::move(gemm), std::move(separate), view.cuda);
  return separate;
}

// A grouped conv's group as a runtime may also run it: conv, bias, residual and activation as one
// cuDNN graph, whose engine list holds grouped kernels cudnnFind's algorithms lack; timed against
// `separate` (the conv's own runner, then a chain), the fastest kept.
std::unique_ptr<GroupKernel> fastest_grouped_conv(const GroupView& view, size_t anchor, std::unique_ptr<GroupKernel> separate) {
  const std::optional<MatrixEpilogue> whole = grouped_graph_epilogue(view, anchor);
  std::string why;
  auto graph = whole ? make_conv_graph_kernel(view, *whole, &why) : nullptr;
  if (!graph) return separate;
  return make_timed_choice(std::move(graph), std::move(separate), view.cuda, group_measurement_key(view, "conv graph"));
}

// A depthwise conv's group as a runtime may also run it: cuDNN's conv alone (a graph of the conv
// without its bias, whose engines hold cuDNN's specialised depthwise kernels) and one chain adding
// the bias before the rest, as PyTorch runs it; and conv, bias and activation as one cuDNN graph.
// Each is timed against `separate` (the own kernel with its epilogue, or the conv's runner and a
// chain), the fastest kept.
std::unique_ptr<GroupKernel> fastest_depthwise_conv(const GroupView& view, size_t anchor, const std::vector<size_t>& rest,
                                                    std::unique_ptr<GroupKernel> separate) {
  std::string why;
  if (auto chain = make_bias_chain_kernel(view, anchor, rest, &why)) {
    if (auto bare = make_bare_conv_graph_kernel(view, anchor, &why)) {
      std::vector<std::unique_ptr<GroupKernel>> kernels;
      kernels.push_back(std::move(bare));
      kernels.push_back(std::move(chain));
      separate = make_timed_choice(make_kernel_sequence(std::move(kernels)), std::move(separate), view.cuda,
                                   group_measurement_key(view, "conv-only graph then bias chain"));
    }
  }
  return fastest_grouped_conv(view, anchor, std::move(separate));
}

// How a matrix group splits: the epilogue the library call takes (`e`, its members `taken`) and
// the members left for a chain (`rest`); nothing where no conv or product anchors the group.
struct EpilogueSplit {
  const ConvParams* conv = nullptr;
  bool matmul = false;
  bool dense_conv = false;  // cuDNN's fused call takes it
  bool grouped_conv = false;
  MatrixEpilogue e;
  std::vector<size_t> taken, rest;
};

std::optional<EpilogueSplit> split_epilogue(const GroupView& view) {
  const size_t anchor = view.group.anchor;
  const OpPlan& plan = view.plan(anchor);
  EpilogueSplit s;
  s.conv = std::get_if<ConvParams>(&plan);
  s.matmul = std::holds_alternative<MatMulParams>(plan);
  if (!s.conv && !s.matmul) return std::nullopt;
  // cuDNN's fused call is a dense (ungrouped) conv; grouped and gathered convs keep their own runner.
  s.dense_conv = s.conv && s.conv->groups == 1 && !needs_gather_gemm(*s.conv);
  s.e = (s.matmul || s.dense_conv) ? absorb(view, anchor, s.matmul, s.taken) : MatrixEpilogue{anchor};
  if (!s.matmul && !s.dense_conv) s.e.output = view.node(anchor).outputs[0];
  s.rest = members_left(view, anchor, s.taken);
  const bool absorbed = std::any_of(s.taken.begin(), s.taken.end(), [&](size_t m) { return !is_zero_cost(view.plan(m)); });
  if (!absorbed) s.taken.clear();
  s.grouped_conv = s.conv && s.conv->groups > 1 && !is_depthwise_2d(*s.conv);
  return s;
}

}  // namespace

std::optional<MatrixEpilogue> conv_graph_epilogue(const GroupView& view) {
  const std::optional<EpilogueSplit> s = split_epilogue(view);
  if (!s || !s->conv) return std::nullopt;
  if (s->grouped_conv || is_depthwise_2d(*s->conv)) return grouped_graph_epilogue(view, s->e.anchor);
  if (!s->dense_conv || (s->taken.empty() && s->rest.empty())) return std::nullopt;
  const std::optional<MatrixEpilogue> whole = whole_epilogue(view, s->e, s->rest);
  return whole && runs_as_graph(*whole) ? whole : std::nullopt;
}

std::unique_ptr<GroupKernel> make_epilogue_kernel(const GroupView& view, std::string* why) {
  std::optional<EpilogueSplit> split = split_epilogue(view);
  if (!split) {
    *why = "no conv or matrix product anchors the group";
    return nullptr;
  }
  auto& [conv, matmul, dense_conv, grouped_conv, e, taken, rest] = *split;
  const size_t anchor = e.anchor;
  if (taken.empty() && rest.empty()) {
    if (grouped_conv) return fastest_grouped_conv(view, anchor, make_node_sequence(view, {anchor}));
    *why = "a lone matrix op runs its own kernel";
    return nullptr;
  }
  const std::vector<size_t> left = rest;  // what no library call took
  std::vector<std::unique_ptr<GroupKernel>> kernels;
  std::unique_ptr<GroupKernel> head;
  if (!taken.empty()) head = matmul ? make_fused_gemm_kernel(view, e, why) : make_fused_conv_kernel(view, e, why);
  if (!head) {  // the library refused the fused call: the op's own runner, the epilogue as a chain
    rest.insert(rest.end(), taken.begin(), taken.end());
    std::sort(rest.begin(), rest.end());
    head = make_node_sequence(view, {anchor});
  }
  kernels.push_back(std::move(head));
  if (!rest.empty()) {
    auto chain = make_chain_kernel(view, rest, why);
    if (!chain) return nullptr;
    kernels.push_back(std::move(chain));
  }
  if (grouped_conv) return fastest_grouped_conv(view, anchor, make_kernel_sequence(std::move(kernels)));
  if (conv && is_depthwise_2d(*conv))
    return fastest_depthwise_conv(view, anchor, rest,
                                  make_depthwise_epilogue_kernel(view, anchor, rest, make_kernel_sequence(std::move(kernels))));
  if (dense_conv) return fastest_dense_conv(view, e, left, make_kernel_sequence(std::move(kernels)));
  return make_kernel_sequence(std::move(kernels));
}

}  // namespace modelcost::cuda
