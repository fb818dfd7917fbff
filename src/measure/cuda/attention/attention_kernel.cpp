// Attention groups on the own flash-attention kernel (flash_attention.cu). Shapes come from the
// group's two matrix products (scores = Q K^T: [bh, sq, sk] with head dim d; P V), the scale
// from its constant scalar Mul / Div members before the Softmax, the mask from an Add member's
// input computed outside the group. Q, K and V are read from the group's inputs where they are
// [bh, s, d] tensors (K through a transpose member); where the layout moves of the group (head
// split of a packed QKV projection) would have to run first, contiguous copies of the same
// size stand in, as a runtime's attention reads them through strides.
#include <cmath>

#include "deployed/group_runner.h"
#include "pointwise/fused_kernels.h"

#include "ops/op_registry.h"

namespace modelcost::cuda {
namespace {

// Q, K and V where the group's inputs hold them, contiguous random stand-ins of the same size
// where layout moves inside the group would have to run first.
struct AttentionOperands {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  std::vector<DeviceBuffer> owned;
  std::string note;
};

class AttentionKernel : public GroupKernel {
 public:
  AttentionKernel(const AttentionShape& shape, AttentionOperands operands, void* out)
      : shape_(shape), in_(std::move(operands)), out_(out) {}
  void launch(cudaStream_t stream) override { launch_flash_attention(shape_, in_.q, in_.k, in_.v, out_, stream); }
  std::string implementation() const override {
    return "flash attention kernel (own, fp16 mma.sync, d " + std::to_string(shape_.d) + (shape_.mask ? ", mask" : "") +
           (shape_.group > 1 ? ", gqa" : "") + in_.note + ")";
  }

 private:
  AttentionShape shape_;
  AttentionOperands in_;
  void* out_;
};

double known_scalar(const TensorSpec& t) {
  if (!t.value || t.value->size() != 1) return NAN;
  return t.value->as_double(0);
}

// The group's two matrix products (scores = Q K^T, then P V) and its softmax.
struct AttentionMembers {
  size_t scores = 0, values = 0, softmax = 0;
};

bool find_members(const GroupView& view, AttentionMembers* members, std::string* why) {
  std::vector<size_t> products, softmax;
  for (size_t m : view.group.members) {
    if (std::holds_alternative<MatMulParams>(view.plan(m))) products.push_back(m);
    if (std::holds_alternative<SoftmaxPlan>(view.plan(m))) softmax.push_back(m);
  }
  if (products.size() != 2 || softmax.size() != 1) {
    *why = "attention group without exactly two matrix products and one softmax";
    return false;
  }
  *members = {products[0], products[1], softmax[0]};
  return true;
}

// The kernel's shape from the two products; K/V's batch-heads in *kv_bh (fewer than Q's for GQA).
bool shape_from_products(const GroupView& view, const AttentionMembers& members, AttentionShape* shape, int64_t* kv_bh,
                         std::string* why) {
  const auto& scores = std::get<MatMulParams>(view.plan(members.scores));
  const auto& pv = std::get<MatMulParams>(view.plan(members.values));
  const NodeSpec& s_spec = view.spec(members.scores);
  if (s_spec.outputs[0].dtype != 10 || view.spec(members.values).outputs[0].dtype != 10) {
    *why = "the flash-attention kernel runs fp16";
    return false;
  }
  shape->bh = scores.batch;
  shape->sq = scores.m;
  shape->sk = scores.n;
  shape->d = scores.k;
  const Shape& score_shape = s_spec.outputs[0].shape;
  shape->heads = score_shape.size() >= 3 ? score_shape[score_shape.size() - 3] : 1;
  if (pv.batch != shape->bh || pv.k != shape->sk || pv.n != shape->d || pv.m != shape->sq || shape->heads <= 0) {
    *why = "the two products do not chain as attention";
    return false;
  }
  if (!flash_attention_head_size(shape->d)) {
    *why = "head dim " + std::to_string(shape->d) + " (the kernel runs multiples of 4 up to 128)";
    return false;
  }
  const double kv_elements = view.spec(members.values).inputs[1].elements();
  *kv_bh = static_cast<int64_t>(kv_elements / double(shape->sk * shape->d));
  shape->group = *kv_bh > 0 && shape->bh % *kv_bh == 0 ? shape->bh / *kv_bh : 1;
  return true;
}

// The product of the constant scalar Mul / Div members before the softmax.
double attention_scale(const GroupView& view, size_t softmax) {
  double scale = 1;
  for (size_t m : view.group.members) {
    if (m > softmax) break;
    const auto* e = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!e || (e->op != ElementwiseOp::kMul && e->op != ElementwiseOp::kDiv)) continue;
    const double v = known_scalar(view.spec(m).in(1));
    if (std::isfinite(v) && v != 0) scale = e->op == ElementwiseOp::kMul ? scale * v : scale / v;
    if (e->op == ElementwiseOp::kMul && !std::isfinite(v)) {
      const double v0 = known_scalar(view.spec(m).in(0));
      if (std::isfinite(v0)) scale *= v0;
    }
  }
  return scale;
}

// The mask: an fp16 input of an Add member between the scores and the softmax, computed outside
// the group, read through its broadcast strides over the scores.
void find_mask(const GroupView& view, const AttentionMembers& members, AttentionShape& shape) {
  const Shape& score_shape = view.spec(members.scores).outputs[0].shape;
  for (size_t m : view.group.members) {
    const auto* e = std::get_if<ElementwisePlan>(&view.plan(m));
    if (!e || e->op != ElementwiseOp::kAdd || m > members.softmax || m < members.scores) continue;
    for (size_t k = 0; k < 2; ++k) {
      const int t = view.node(m).inputs[k];
      const TensorSpec& spec = view.spec(m).inputs[k];
      if (view.producer(t) >= 0 || spec.dtype != 10 || score_shape.size() < 2) continue;
      const std::vector<int64_t> st = broadcast_strides(spec.shape, score_shape);
      const size_t r = st.size();
      shape.mask = view.buffers.data(t);
      shape.mask_j = st[r - 1];
      shape.mask_i = st[r - 2];
      shape.mask_h = r >= 3 ? st[r - 3] : 0;
      shape.mask_b = r >= 4 ? st[r - 4] : 0;
    }
  }
}

bool swaps_last_two(const std::vector<int64_t>& perm) {
  bool swaps = perm.size() >= 2;
  for (size_t i = 0; i < perm.size(); ++i)
    swaps = swaps && perm[i] == int64_t(i + 2 == perm.size() ? i + 1 : i + 1 == perm.size() ? i - 1 : i);
  return swaps;
}

AttentionOperands attention_operands(const GroupView& view, const AttentionMembers& members, const AttentionShape& shape,
                                     int64_t kv_bh) {
  // Q from the scores product's first input; K through a transposing member; V the second
  // product's second input.
  const double q_count = double(shape.bh * shape.sq * shape.d), kv_count = double(kv_bh * shape.sk * shape.d);
  auto external = [&](int t, double count) -> const void* {
    const int src = view.source(t);
    if (view.producer(src) >= 0) return nullptr;
    return count > 0 ? view.buffers.data(src) : nullptr;
  };
  AttentionOperands o;
  o.q = external(view.node(members.scores).inputs[0], q_count);
  o.v = external(view.node(members.values).inputs[1], kv_count);
  const int k_producer = view.producer(view.source(view.node(members.scores).inputs[1]));
  if (k_producer >= 0 && op_traits(view.node(k_producer).domain, view.node(k_producer).op_type).permutation &&
      swaps_last_two(view.spec(k_producer).attributes.get_ints("perm")))
    o.k = external(view.node(k_producer).inputs[0], kv_count);
  auto stand_in = [&](double count) {
    o.owned.emplace_back(static_cast<size_t>(count * 2));
    launch_fill_random(ElementType::kFloat16, o.owned.back().data(), static_cast<int64_t>(count), -1.f, 1.f,
                       o.owned.size(), view.cuda.stream);
    return o.owned.back().data();
  };
  if (!o.q || !o.k || !o.v) o.note = ", Q/K/V read as contiguous copies";
  if (!o.q) o.q = stand_in(q_count);
  if (!o.k) o.k = stand_in(kv_count);
  if (!o.v) o.v = stand_in(kv_count);
  return o;
}

}  // namespace

std::unique_ptr<GroupKernel> make_attention_kernel(const GroupView& view, std::string* why) {
  AttentionMembers members;
  AttentionShape shape;
  int64_t kv_bh = 0;
  if (!find_members(view, &members, why) || !shape_from_products(view, members, &shape, &kv_bh, why)) return nullptr;
  shape.scale = static_cast<float>(attention_scale(view, members.softmax));
  find_mask(view, members, shape);
  const int out = view.node(members.values).outputs[0];
  return std::make_unique<AttentionKernel>(shape, attention_operands(view, members, shape, kv_bh), view.buffers.data(out));
}

}  // namespace modelcost::cuda
