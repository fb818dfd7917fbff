// Pattern matches the deployed runtime cannot run as one kernel, planned as their members: the
// plan the predictor prices is the plan --measure runs, with no silent fallback (docs/fusion.md,
// "Kernel plan").
#include <algorithm>
#include <set>

#include "fusion/patterns.h"
#include "fusion/tensor_access.h"
#include "ops/measured_kinds.h"

namespace modelcost::fusion {
namespace {

// The first output's shape where it is known.
const Shape* output_shape(const FusionGraph& g, size_t m) {
  const TensorInfo* t = shaped_operand(g.analysis().nodes[m], 0, true);
  return t ? &t->shape : nullptr;
}

// Names the op, not the node: the reasons of one network's matches then read alike.
std::string member_name(const FusionGraph& g, size_t m) { return "the " + g.op(m); }

// One flash-attention kernel: scores = Q K^T and P V chain, with a head size the kernel has.
std::string attention_apart(const FusionGraph& g, const std::vector<size_t>& members) {
  std::vector<size_t> products;
  for (size_t m : members)
    if (g.kind(m) == OpKind::kMatrix) products.push_back(m);
  if (products.size() != 2) return "the attention match has " + std::to_string(products.size()) + " matrix products, not 2";
  const std::vector<GemmShape> scores = gemm_shapes(g.analysis().nodes[products[0]]);
  const std::vector<GemmShape> values = gemm_shapes(g.analysis().nodes[products[1]]);
  if (scores.size() != 1 || values.size() != 1) return "";  // shapes unknown: priced as matched
  const GemmShape& s = scores.front();
  const GemmShape& v = values.front();
  if (v.count != s.count || v.k != s.n || v.n != s.k || v.m != s.m) return "the two products do not chain as attention";
  if (!flash_attention_head_size(static_cast<int64_t>(s.k)))
    return "head size " + std::to_string(static_cast<int64_t>(s.k)) + " (the flash-attention kernel runs multiples of 4 up to 128)";
  return "";
}

double elements_of(const FusionGraph& g, int id) { return id >= 0 ? element_count(g.graph().tensors[id].shape) : 0; }

// The tensor the product's output reaches through views read by nothing else, -1 where it branches.
int sole_view_end(const FusionGraph& g, size_t anchor) {
  int out = g.node(anchor).outputs.empty() ? -1 : g.node(anchor).outputs.front();
  while (out >= 0 && g.consumers(out).size() == 1 && g.is_alias(g.consumers(out).front())) {
    const Node& view = g.node(g.consumers(out).front());
    out = view.outputs.empty() ? -1 : view.outputs.front();
  }
  return out >= 0 && g.consumers(out).size() == 1 ? out : -1;
}

// A product whose weight is one constant 2-D matrix, or a dense (one group) conv with a constant
// weight: per-output-channel factors fold into its weight and bias.
bool foldable_weight(const FusionGraph& g, size_t anchor) {
  const Node& product = g.node(anchor);
  const OpTraits traits = g.traits(anchor);
  if (product.inputs.size() < 2 || !g.is_constant(product.inputs[1])) return false;
  const size_t rank = g.graph().tensors[product.inputs[1]].shape.size();
  if (traits.form == OpForm::kConv) return !traits.transposed_conv && int_attribute(product, "group", 1) == 1 && rank >= 3;
  return traits.form == OpForm::kGemm && rank == 2;
}

// A BatchNormalization reading a conv anchor's output folds into the conv's weights and bias. One
// over the rows [M, N] of a product with a constant 2-D weight (LeViT's linear: MatMul, Flatten,
// BatchNorm) folds into the weight's columns and the bias, as inference runtimes fold it.
bool folded_batch_norm(const FusionGraph& g, size_t anchor, size_t m) {
  if (!g.traits(m).stored_statistics || g.node(m).inputs.empty() || g.node(anchor).outputs.empty()) return false;
  const int in = g.node(m).inputs[0];
  if (g.alias_root(in) != g.alias_root(g.node(anchor).outputs[0])) return false;
  if (g.traits(anchor).form == OpForm::kConv) return true;
  if (!foldable_weight(g, anchor)) return false;  // a product's: one constant 2-D weight
  const Shape* out = output_shape(g, anchor);
  const Shape& rows = g.graph().tensors[in].shape;
  return out && !out->empty() && rows.size() == 2 && rows[1] == out->back() && sole_view_end(g, anchor) == in;
}

// Member c multiplies tensor `out`, the product's result of shape `result` (channels on axis
// `channel_axis`), by a constant of one value per channel (a layer scale) or one value in all:
// it folds into the product's weight and bias.
bool channel_scale(const FusionGraph& g, size_t c, int out, const Shape& result, size_t channel_axis) {
  const Node& node = g.node(c);
  if (!g.traits(c).epilogue_scale || node.inputs.size() != 2) return false;
  const int other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
  const Shape* shape = output_shape(g, c);
  if (other == out || !g.is_constant(other) || !shape || *shape != result) return false;
  const TensorInfo& t = g.graph().tensors[other];
  return t.has_shape && per_channel_factor(t.shape, result, channel_axis);
}

// The members the conv or GEMM library call takes into its own epilogue, walking from the
// product's output: reinterpreting views, then a bias or a residual Add, up to one ReLU or clip.
// Before the residual, a constant per-channel scale of a product with a constant weight (a
// matrix, or a dense conv's) folds into its weight and bias.
std::vector<size_t> library_epilogue(const FusionGraph& g, const std::vector<size_t>& members, size_t anchor) {
  std::vector<size_t> taken;
  const Node& product = g.node(anchor);
  int out = product.outputs.empty() ? -1 : product.outputs.front();
  const Shape* shape = output_shape(g, anchor);
  if (out < 0 || !shape || shape->empty()) return taken;
  const bool conv = g.traits(anchor).form == OpForm::kConv;
  const double channels = static_cast<double>(conv && shape->size() > 1 ? (*shape)[1] : shape->back());
  bool bias = product.inputs.size() > 2 && product.inputs[2] >= 0, residual = false, folded = false;
  while (out >= 0 && g.consumers(out).size() == 1 && contains(members, g.consumers(out).front())) {
    const size_t c = g.consumers(out).front();
    const Node& node = g.node(c);
    if (node.outputs.empty()) break;
    if (g.is_alias(c)) {
      out = node.outputs.front();
      continue;
    }
    const OpTraits traits = g.traits(c);
    if (!conv && folded_batch_norm(g, anchor, c)) {
      bias = true;  // the folded shift is (or joins) the product's bias
      folded = true;
      taken.push_back(c);
      out = node.outputs.front();
      continue;
    }
    if (!residual && !folded && channel_scale(g, c, out, *shape, conv ? 1 : shape->size() - 1) && foldable_weight(g, anchor)) {
      folded = true;  // one folded factor per column: a second one would be folded again
      taken.push_back(c);
      out = node.outputs.front();
      continue;
    }
    if (traits.epilogue_add && node.inputs.size() == 2) {
      const int other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
      const double n = elements_of(g, other), whole = elements_of(g, out);
      const int p = g.producer(other);
      if (n == channels && n != whole && !bias) bias = true;
      else if (n == whole && !residual && (p < 0 || !contains(members, size_t(p)))) residual = true;
      else break;
    } else if (!traits.epilogue_activation) {
      break;
    }
    taken.push_back(c);
    out = node.outputs.front();
    if (traits.epilogue_activation) break;  // the activation ends the library's epilogue
  }
  return taken;
}

// A GELU as one op or the five of the erf form (x / sqrt 2, erf, + 1, x *, * 0.5), which
// cuBLASLt takes into a GEMM's epilogue; the tanh form's eight it does not.
bool is_erf_gelu(const FusionGraph& g, const std::vector<size_t>& members) {
  const std::vector<std::string> labels = recognise(g, members);
  return members.size() <= 5 && std::find(labels.begin(), labels.end(), "gelu") != labels.end();
}

// The members that launch work: views and permutations fold into their neighbours' operand layouts.
std::vector<size_t> running_members(const FusionGraph& g, const std::vector<size_t>& members) {
  std::vector<size_t> running;
  for (size_t m : members)
    if (!g.is_idle(m) && !g.is_alias(m) && !g.traits(m).folds_into_operand()) running.push_back(m);
  return running;
}

// A tensor the generated chain reads or writes: fp32, fp16 or bf16.
bool float_tensor(const FusionGraph& g, int id) {
  const int32_t t = g.graph().tensors[id].dtype;
  return t == 1 || t == 10 || t == 16;
}

// The tensors elementwise member m reads. Constant operands count too: the chain reads a scalar
// such as an epsilon as an input (a Clip's bounds it folds into its step, so a run with clips may
// be cut before the runtime would have to). An inference BatchNormalization is two steps, x *
// scale + shift, whose scale and shift the runtime folds from gamma, beta, mean and variance once:
// it reads x and two vectors.
std::vector<int> chain_operands(const FusionGraph& g, size_t m) {
  std::vector<int> ids;
  const std::vector<int>& inputs = g.node(m).inputs;
  const size_t read = g.traits(m).stored_statistics ? std::min<size_t>(3, inputs.size()) : inputs.size();
  for (size_t k = 0; k < read; ++k)
    if (inputs[k] >= 0) ids.push_back(g.alias_root(inputs[k]));
  return ids;
}

int chain_steps(const FusionGraph& g, size_t m) { return g.traits(m).stored_statistics ? 2 : 1; }

// A BatchNormalization over rows [M, C] is a scale and a shift per C whichever view of its rows a
// chain iterates: it fits a chain over any shape of M * C elements whose last dim is C (LeViT's
// linear: MatMul, Flatten, BatchNorm, Reshape back, activation). Other members fit their own shape.
bool fits_chain(const FusionGraph& g, size_t m, const Shape& own, const Shape& chain) {
  return own == chain || (g.traits(m).stored_statistics && is_rows_view(own, chain));
}

// A run of consecutive elementwise members the runtime generates as one chain kernel.
class ChainRun {
 public:
  explicit ChainRun(const FusionGraph& g) : g_(g) {}
  bool empty() const { return members_.empty(); }
  const std::vector<size_t>& members() const { return members_; }
  std::vector<size_t> take() {
    std::vector<size_t> out;
    out.swap(members_);
    shape_ = nullptr;
    rows_only_ = true;
    steps_ = 0;
    produced_.clear();
    inputs_.clear();
    return out;
  }
  // A view joins any run (it reads and writes nothing).
  void add_view(size_t m) {
    members_.push_back(m);
    for (int id : g_.node(m).outputs)
      if (id >= 0) produced_.insert(g_.alias_root(id));
  }
  // Adds elementwise member m when the run stays one chain within the kernel's limits.
  bool try_add(size_t m, const Shape& shape) {
    const int steps = chain_steps(g_, m);
    const bool fits = !shape_ || fits_chain(g_, m, shape, *shape_) || (rows_only_ && fits_chain(g_, shape_member_, *shape_, shape));
    if (!fits || steps_ + steps > kChainLimits.steps || int(shape.size()) > kChainLimits.rank) return false;
    std::set<int> inputs = inputs_;
    for (int id : chain_operands(g_, m))
      if (!produced_.count(id)) inputs.insert(id);
    if (int(inputs.size()) > kChainLimits.inputs) return false;
    members_.push_back(m);
    if (int(exit_count(g_, members_)) > kChainLimits.outputs) {
      members_.pop_back();
      return false;
    }
    inputs_ = std::move(inputs);
    for (int id : g_.node(m).outputs)
      if (id >= 0) produced_.insert(g_.alias_root(id));
    // The run iterates its first member's shape, or the first of another kind after row BatchNorms.
    const bool rows = g_.traits(m).stored_statistics && shape.size() == 2;
    if (!shape_ || (rows_only_ && !rows)) {
      shape_ = &shape;
      shape_member_ = m;
    }
    rows_only_ = rows_only_ && rows;
    steps_ += steps;
    return true;
  }

 private:
  const FusionGraph& g_;
  std::vector<size_t> members_;
  const Shape* shape_ = nullptr;
  size_t shape_member_ = 0;  // the member whose shape the run iterates
  bool rows_only_ = true;    // every member so far a BatchNorm over rows
  int steps_ = 0;
  std::set<int> produced_, inputs_;
};

// Member m can be a step of a generated chain: elementwise over float tensors of known shape.
const Shape* chain_step_shape(const FusionGraph& g, size_t m) {
  if (g.kind(m) != OpKind::kPointwise) return nullptr;
  for (int id : chain_operands(g, m))
    if (!float_tensor(g, id)) return nullptr;
  for (int id : g.node(m).outputs)
    if (id >= 0 && !float_tensor(g, id)) return nullptr;
  return output_shape(g, m);
}

// Reductions over the trailing axes of one shape `full` that keep them as 1s (`rows`): the frame of
// a generated row kernel. Empty reason where the group's reductions share one.
struct RowFrame {
  const Shape* full = nullptr;
  Shape rows;
  std::string reason;
};

// Where the run of 1s that ends `shape` starts (its rank where it ends in none).
size_t trailing_ones_start(const Shape& shape) {
  size_t first = shape.size();
  while (first > 0 && shape[first - 1] == 1) --first;
  return first;
}

bool reduces_trailing_axes(const Shape& in, const Shape& out) {
  if (in.size() != out.size() || in.empty()) return false;
  const size_t first = trailing_ones_start(out);
  for (size_t d = 0; d < first; ++d)
    if (out[d] != in[d]) return false;
  return first < in.size();
}

// The rows a softmax normalises, as the reduced shape: its last axis (from opset 13), or every
// axis from `axis` on (before, the input is coerced to 2-D there). Empty where the axis is another.
Shape softmax_rows(const Node& node, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = int_attribute(node, "axis", node.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || (node.opset >= 13 && axis != rank - 1)) return {};
  Shape rows = in;
  for (int64_t d = axis; d < rank; ++d) rows[d] = 1;
  return rows;
}

// The reduced shape member m computes its rows over: its output (a reduction keeping the axes),
// or a softmax's rows. Empty where m is no row reduction of the trailing axes.
Shape reduced_rows(const FusionGraph& g, size_t m, const Shape& in) {
  const Shape* out = output_shape(g, m);
  if (!g.traits(m).row_program || !out) return {};
  if (*out == in) return softmax_rows(g.node(m), in);
  return reduces_trailing_axes(in, *out) ? *out : Shape{};
}

RowFrame row_frame(const FusionGraph& g, const std::vector<size_t>& running) {
  RowFrame f;
  for (size_t m : running) {
    if (g.kind(m) != OpKind::kReduction) continue;
    const TensorInfo* in = shaped_operand(g.analysis().nodes[m], 0, false);
    Shape rows = in ? reduced_rows(g, m, in->shape) : Shape{};
    if (rows.empty()) {
      f.reason = member_name(g, m) + " member is not a sum, mean, max, min, L2 norm or softmax over the trailing axes";
      return f;
    }
    if (f.full && (*f.full != in->shape || f.rows != rows)) {
      f.reason = "its reductions reduce different rows";
      return f;
    }
    f.full = &in->shape;
    f.rows = std::move(rows);
  }
  return f;
}

// The row kernel's steps for member m: a reduction one, a softmax at most six (a max, x - max,
// exp, a sum, then a divide, or a log and a subtract for a log-softmax).
int row_steps(const FusionGraph& g, size_t m) {
  const Shape* out = output_shape(g, m);
  const TensorInfo* in = shaped_operand(g.analysis().nodes[m], 0, false);
  return out && in && *out == in->shape ? 6 : 1;
}

// A group of reductions over the trailing axes of one shape with elementwise work over that shape
// or the reduced one, and broadcasts of the reduced shape back (a spelled-out LayerNorm, RMSNorm or
// L2 normalisation): one generated row kernel, within the chain kernel's limits.
std::string row_program_apart(const FusionGraph& g, const std::vector<size_t>& members,
                              const std::vector<size_t>& running) {
  const RowFrame frame = row_frame(g, running);
  if (!frame.reason.empty()) return frame.reason;
  int steps = 0;
  std::set<int> produced, inputs;
  for (size_t m : members)
    for (int id : g.node(m).outputs)
      if (id >= 0) produced.insert(g.alias_root(id));
  // The row's dims are those the reduction keeps as 1s: an input must walk them with one stride.
  const size_t lead = trailing_ones_start(frame.rows);
  bool strided = false;
  auto read = [&](int id) {
    if (id < 0 || produced.count(g.alias_root(id))) return;
    inputs.insert(g.alias_root(id));
    const Shape& shape = g.graph().tensors[id].shape;
    strided = strided || row_stride(broadcast_strides(shape, *frame.full), *frame.full, lead) < 0;
  };
  for (size_t m : running) {
    const Shape* out = output_shape(g, m);
    const TensorInfo* in = shaped_operand(g.analysis().nodes[m], 0, false);
    if (g.kind(m) == OpKind::kReduction) {
      steps += row_steps(g, m);
      read(g.node(m).inputs[0]);
    } else if (g.traits(m).repeat && out && in && *out == *frame.full && in->shape == frame.rows) {
      read(g.node(m).inputs[0]);
    } else if (const Shape* shape = chain_step_shape(g, m); shape && (*shape == *frame.full || *shape == frame.rows)) {
      steps += chain_steps(g, m);
      for (int id : chain_operands(g, m)) read(id);
    } else {
      return member_name(g, m) + " member is neither elementwise over the rows nor a broadcast of a row's value";
    }
  }
  if (strided) return "an input of the row kernel does not walk its rows with one stride";
  if (steps > kChainLimits.steps) return "a row kernel of more than " + std::to_string(kChainLimits.steps) + " steps";
  if (int(inputs.size()) > kChainLimits.inputs) return "a row kernel reading more than " + std::to_string(kChainLimits.inputs) + " tensors";
  if (int(exit_count(g, members)) > kChainLimits.outputs) return "a row kernel storing more than " + std::to_string(kChainLimits.outputs) + " tensors";
  return "";
}

}  // namespace

LibraryTail library_tail(const FusionGraph& g, const std::vector<size_t>& members, size_t anchor) {
  if (g.kind(anchor) != OpKind::kMatrix) return LibraryTail::kNone;
  const KernelClass cls = node_kernel(g.analysis().nodes[anchor]).cls;
  // Depthwise convs store any elementwise epilogue in their own kernel.
  if (cls != KernelClass::kGemm && cls != KernelClass::kConv && cls != KernelClass::kConv1x1 && cls != KernelClass::kGroupedConv)
    return LibraryTail::kNone;
  // A grouped conv's library call takes no epilogue; a dense one's and a GEMM's take the walk's.
  const std::vector<size_t> library =
      cls == KernelClass::kGroupedConv ? std::vector<size_t>{} : library_epilogue(g, members, anchor);
  std::vector<size_t> rest;
  for (size_t m : running_members(g, members))
    if (m != anchor && !folded_batch_norm(g, anchor, m) && !contains(library, m)) rest.push_back(m);
  if (rest.empty()) return LibraryTail::kNone;
  // cuBLASLt's GELU epilogue: a GEMM's, and a 1x1 conv's run as one GEMM. Its kernels for operands
  // of unaligned rows (K or N not a multiple of 16 bytes) apply it in a second kernel of its own.
  const bool gemm_like = cls == KernelClass::kGemm || cls == KernelClass::kConv1x1;
  return gemm_like && is_erf_gelu(g, rest) ? LibraryTail::kWhereUnaligned : LibraryTail::kAlways;
}

std::vector<std::vector<size_t>> apart_parts(const FusionGraph& g, std::vector<size_t> members) {
  // Runs are cut in member (topological) order, so no part waits on a later one.
  std::sort(members.begin(), members.end());
  std::vector<std::vector<size_t>> parts;
  ChainRun run(g);
  auto close = [&] {
    if (!run.empty()) parts.push_back(run.take());
  };
  for (size_t m : members) {
    if (g.is_alias(m) || g.is_idle(m)) {
      if (run.empty()) parts.push_back({m});
      else run.add_view(m);
      continue;
    }
    const Shape* shape = chain_step_shape(g, m);
    if (shape && run.try_add(m, *shape)) continue;
    close();
    if (shape && run.try_add(m, *shape)) continue;
    parts.push_back({m});
  }
  close();
  return parts;
}

std::string why_apart(const FusionGraph& g, const std::string& pattern, const std::vector<size_t>& members, size_t anchor) {
  if (pattern == "fused_op" || pattern == "sibling_products") return "";  // its matcher admits only what runs as one
  if (pattern == "attention") return attention_apart(g, members);
  const std::vector<size_t> running = running_members(g, members);
  if (running.size() <= 1) return "";
  // A conv or matrix product runs its library call with the epilogue it takes (bias, a folded
  // BatchNorm, activation, residual); everything else must be one chain of elementwise work over
  // one iteration shape, which is what the runtime generates after the library call.
  const bool anchored = g.kind(anchor) == OpKind::kMatrix;
  const bool reduces = std::any_of(running.begin(), running.end(), [&](size_t m) { return g.kind(m) == OpKind::kReduction; });
  if (!anchored && reduces) return row_program_apart(g, members, running);
  const std::vector<size_t> library = anchored ? library_epilogue(g, members, anchor) : std::vector<size_t>{};
  const Shape* dims = nullptr;
  size_t dims_member = 0;
  for (size_t m : running) {
    if (anchored && (m == anchor || folded_batch_norm(g, anchor, m) || contains(library, m))) continue;
    if (g.kind(m) != OpKind::kPointwise)
      return anchored ? member_name(g, m) + " member is not elementwise: it does not fuse into the epilogue"
                      : member_name(g, m) + " member is not elementwise, and no conv or matrix product anchors the group";
    const Shape* shape = output_shape(g, m);
    if (!shape) continue;
    if (dims && !fits_chain(g, m, *shape, *dims) && !fits_chain(g, dims_member, *dims, *shape))
      return "its elementwise members iterate different shapes";
    if (!dims || (g.traits(dims_member).stored_statistics && !g.traits(m).stored_statistics)) {
      dims = shape;
      dims_member = m;
    }
  }
  return "";
}

}  // namespace modelcost::fusion

namespace modelcost {

bool per_channel_factor(const Shape& factor, const Shape& result, size_t channel_axis) {
  if (channel_axis >= result.size() || factor.size() > result.size()) return false;
  const size_t offset = result.size() - factor.size();  // the factor's dims align to the right
  for (size_t d = 0; d < factor.size(); ++d)
    if (factor[d] != 1 && (d + offset != channel_axis || factor[d] != result[channel_axis])) return false;
  return true;
}

}  // namespace modelcost
